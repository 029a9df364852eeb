package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/burnrate/burnrate/store/storetest"
)

// loggedIn reports whether a browser holding only the session cookie value
// is logged in.
func loggedIn(t *testing.T, b *bundle, session string) bool {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/dashboard", nil)
	req.AddCookie(&http.Cookie{Name: "burnrate_session", Value: session})
	rec := httptest.NewRecorder()
	b.srv.ServeHTTP(rec, req)
	switch {
	case rec.Code == http.StatusOK:
		return true
	case rec.Code == http.StatusSeeOther && strings.HasPrefix(rec.Header().Get("Location"), "/login"):
		return false
	}
	t.Fatalf("GET /dashboard with a session cookie: %d %s", rec.Code, rec.Header().Get("Location"))
	return false
}

// TestAccountChangePassword: a password change needs the current password,
// and logs out every session the user had, including the one that made it
// (which gets a fresh one).
func TestAccountChangePassword(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	here, elsewhere := b.client(t), b.client(t)
	here.login(owner.Email)
	elsewhere.login(owner.Email)
	before, other := here.cookie("burnrate_session"), elsewhere.cookie("burnrate_session")

	rec := here.get("/account")
	wantStatus(t, rec, http.StatusOK)
	if got := doc(t, rec).Find(`[data-testid=account-email]`).Text(); got != owner.Email {
		t.Fatalf("account page for %q, want %s", got, owner.Email)
	}
	const newPassword = "a brand new password"
	for name, form := range map[string]url.Values{
		"WrongCurrent": {"current_password": {"not my password"}, "new_password": {newPassword}, "confirm_password": {newPassword}},
		"BlankNew":     {"current_password": {storetest.Password}, "new_password": {"          "}, "confirm_password": {"          "}},
		"Mismatch":     {"current_password": {storetest.Password}, "new_password": {newPassword}, "confirm_password": {newPassword + "!"}},
	} {
		here.get("/account")
		rec := here.post("/account/password", form)
		if rec.Code != http.StatusUnprocessableEntity || doc(t, rec).Find(`[data-testid=field-error]`).Length() != 1 {
			t.Errorf("%s: status %d, want 422 with one field error", name, rec.Code)
		}
	}
	// Without the form's token nothing happens.
	req := newFormRequest("/account/password", url.Values{"current_password": {storetest.Password}, "new_password": {newPassword}, "confirm_password": {newPassword}})
	if rec := here.do(req); rec.Code != http.StatusForbidden && rec.Code != http.StatusBadRequest {
		t.Errorf("without a CSRF token: status %d, want 403 or 400", rec.Code)
	}
	if !loggedIn(t, b, before) || !loggedIn(t, b, other) {
		t.Fatal("a refused password change logged someone out")
	}

	here.get("/account")
	rec = here.post("/account/password", url.Values{"current_password": {storetest.Password}, "new_password": {newPassword}, "confirm_password": {newPassword}})
	wantStatus(t, rec, http.StatusSeeOther)
	after := here.cookie("burnrate_session")
	if loggedIn(t, b, other) {
		t.Error("another browser's session still works after a password change")
	}
	if loggedIn(t, b, before) {
		t.Error("the changing browser's old session cookie still works")
	}
	if got := doc(t, here.get("/account")).Find(`[data-testid=flash]`).Text(); !strings.Contains(got, "Password changed") {
		t.Errorf("flash after the change = %q", got)
	}
	if after == before || !loggedIn(t, b, after) {
		t.Fatal("the changing browser was not given a fresh session")
	}

	old := b.client(t)
	old.get("/login")
	wantStatus(t, old.post("/login", url.Values{"email": {owner.Email}, "password": {storetest.Password}}), http.StatusUnauthorized)
	wantStatus(t, old.post("/login", url.Values{"email": {owner.Email}, "password": {newPassword}}), http.StatusSeeOther)
}

// TestAccountCurrentPasswordIsRateLimited: the current-password check
// counts against the same limit as log-ins, so a borrowed session cannot
// be used to guess the password.
func TestAccountCurrentPasswordIsRateLimited(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	c := b.client(t)
	c.login(owner.Email)
	c.get("/account")
	const newPassword = "a brand new password"
	for i := range maxFailuresPerEmail {
		rec := c.post("/account/password", url.Values{"current_password": {"guess"}, "new_password": {newPassword}, "confirm_password": {newPassword}})
		if rec.Code != http.StatusUnprocessableEntity {
			t.Fatalf("guess %d: status %d, want 422", i, rec.Code)
		}
	}
	rec := c.post("/account/password", url.Values{"current_password": {storetest.Password}, "new_password": {newPassword}, "confirm_password": {newPassword}})
	wantStatus(t, rec, http.StatusTooManyRequests)
	if u, _ := b.st.User(ctx(), owner.ID); u.PasswordHash != owner.PasswordHash {
		t.Fatal("the password changed past the limit")
	}
}

// TestAccountLogoutEverywhere ends every session of the user, this one
// included, and no one else's.
func TestAccountLogoutEverywhere(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	colleague := storetest.Member(t, b.st, org, "member")
	here, elsewhere, them := b.client(t), b.client(t), b.client(t)
	here.login(owner.Email)
	elsewhere.login(owner.Email)
	them.login(colleague.Email)
	mine, other, theirs := here.cookie("burnrate_session"), elsewhere.cookie("burnrate_session"), them.cookie("burnrate_session")

	// A forged request (no token) does nothing.
	if rec := here.do(newFormRequest("/account/logout-everywhere", url.Values{})); rec.Code != http.StatusForbidden && rec.Code != http.StatusBadRequest {
		t.Errorf("without a CSRF token: status %d, want 403 or 400", rec.Code)
	}
	if !loggedIn(t, b, mine) || !loggedIn(t, b, other) {
		t.Fatal("a forged request logged out")
	}

	here.get("/account")
	rec := here.post("/account/logout-everywhere", nil)
	wantStatus(t, rec, http.StatusSeeOther)
	if loc := rec.Header().Get("Location"); loc != "/login" {
		t.Errorf("after logging out everywhere, Location = %q, want /login", loc)
	}
	if loggedIn(t, b, mine) || loggedIn(t, b, other) {
		t.Fatal("a session survived logging out everywhere")
	}
	if !loggedIn(t, b, theirs) {
		t.Fatal("logging out everywhere logged out someone else")
	}
	// Logging in again works.
	here.login(owner.Email)
}
