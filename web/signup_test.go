package web_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/burnrate/burnrate/app"
	"github.com/burnrate/burnrate/store/storetest"
	"github.com/burnrate/burnrate/web"
)

// TestSignupPasswordRules: a password is at least ten characters, counted
// as characters rather than bytes and not counting spaces at either end.
func TestSignupPasswordRules(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for i, tc := range []struct {
		password string
		ok       bool
	}{
		{strings.Repeat(" ", 10), false},
		{strings.Repeat(" ", 40), false},
		{"\t\n  \u00a0\u3000    ", false},
		{"   short   ", false},
		{strings.Repeat("é", 9), false}, // 18 bytes, 9 characters
		{strings.Repeat("😀", 9), false}, // 36 bytes
		{strings.Repeat("a", 73), false},
		{strings.Repeat("é", 10), true},
		{"  ten chars!  ", true},
		{"correct horse", true},
	} {
		c := b.client(t)
		c.get("/signup")
		email := "pw" + itoa(int64(i)) + "@example.com"
		rec := c.post("/signup", url.Values{"name": {"Pat"}, "email": {email}, "password": {tc.password}, "org_name": {"Pat's"}})
		_, err := b.st.UserByEmail(ctx(), email)
		if created := err == nil; created != tc.ok {
			t.Errorf("password %q: status %d, account created %v, want %v", tc.password, rec.Code, created, tc.ok)
			continue
		}
		if !tc.ok {
			wantStatus(t, rec, http.StatusUnprocessableEntity)
			if doc(t, rec).Find(`[data-testid=field-error]`).Length() != 1 {
				t.Errorf("password %q: no message next to the field", tc.password)
			}
		}
	}
}

// TestSignupDoesNotRevealAccounts: signing up with an email that has an
// account gets the same answer as with a new one, so the form cannot be
// used to find out who uses Burnrate; it logs nobody in, changes nothing,
// and leaves a note for the account's owner.
func TestSignupDoesNotRevealAccounts(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	var logs bytes.Buffer
	b := &bundle{st: st, srv: web.NewServer(slog.New(slog.NewTextHandler(&logs, nil)), testApp(st, app.Config{}), web.Config{Now: testClock})}
	existing := storetest.User(t, st, storetest.UserOpts{Email: "ann@example.com"})

	signup := func(email string) (*client, int, string, string) {
		c := b.client(t)
		c.get("/signup")
		rec := c.post("/signup", url.Values{"name": {"Someone"}, "email": {email}, "password": {"a new password"}, "org_name": {"Someone's"}})
		return c, rec.Code, rec.Header().Get("Location"), rec.Body.String()
	}
	_, newCode, newLoc, newBody := signup("new@example.com")
	for _, email := range []string{"ann@example.com", "ANN@Example.com"} {
		c, code, loc, body := signup(email)
		if code != newCode || loc != newLoc || body != newBody {
			t.Errorf("sign-up as %s: %d %q %q; a new email got %d %q %q", email, code, loc, body, newCode, newLoc, newBody)
		}
		// Not logged in as, or into, anything.
		if rec := c.get("/dashboard"); rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), "/login") {
			t.Errorf("after sign-up as %s, /dashboard: %d %s, want a redirect to log in", email, rec.Code, rec.Header().Get("Location"))
		}
	}
	if u, err := st.UserByEmail(ctx(), existing.Email); err != nil || u.PasswordHash != existing.PasswordHash || u.Name != existing.Name {
		t.Fatalf("the existing account changed: %+v, %v", u, err)
	}
	if orgs, _ := st.OrgsForUser(ctx(), existing.ID); len(orgs) != 0 {
		t.Fatalf("the existing account gained orgs: %+v", orgs)
	}
	if n := strings.Count(logs.String(), "sign-up for an existing account"); n != 2 || !strings.Contains(logs.String(), "user_id="+itoa(existing.ID)) {
		t.Fatalf("no note for the owner in the log (%d):\n%s", n, logs.String())
	}
}

// TestSignupByMailRevealsNothing: where the server sends mail, a sign-up
// with a new address and one with a registered address get the same
// answer, and neither logs in (a session for one and none for the other
// told a stranger which addresses use Burnrate); the new address is mailed
// the link that makes the account, the registered one a notice. The link
// works once.
func TestSignupByMailRevealsNothing(t *testing.T) {
	t.Parallel()
	b := setupMail(t, true)
	existing := storetest.User(t, b.st, storetest.UserOpts{Email: "ann@example.com"})
	signup := func(email string) (*client, *httptest.ResponseRecorder) {
		c := b.client(t)
		c.get("/signup")
		return c, c.post("/signup", url.Values{"name": {"Someone"}, "email": {email}, "password": {"a new password"}, "org_name": {"Someone's"}})
	}
	cn, fresh := signup("new@example.com")
	ce, known := signup(existing.Email)
	for _, r := range []*httptest.ResponseRecorder{fresh, known} {
		if r.Code != http.StatusSeeOther || r.Header().Get("Location") != "/signup/sent" || r.Body.String() != fresh.Body.String() {
			t.Errorf("sign-up answered %d %q %q", r.Code, r.Header().Get("Location"), r.Body)
		}
		for _, ck := range r.Result().Cookies() {
			if ck.Name == "burnrate_session" {
				t.Errorf("a sign-up by mail set a session cookie")
			}
		}
	}
	for _, c := range []*client{cn, ce} {
		if rec := c.get("/dashboard"); rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), "/login") {
			t.Errorf("after sign-up, /dashboard: %d %s", rec.Code, rec.Header().Get("Location"))
		}
	}
	if _, err := b.st.UserByEmail(ctx(), "new@example.com"); err == nil {
		t.Fatal("the account exists before its link is used")
	}
	msgs := b.smtp.Wait(t, 2)
	var link string
	for _, m := range msgs {
		switch m.EnvelopeTo[0] {
		case "new@example.com":
			link = regexp.MustCompile(`http://burnrate\.test(/signup/confirm/\S+)`).FindStringSubmatch(m.Text)[1]
		case existing.Email:
			if !strings.Contains(m.Subject, "tried to sign up") {
				t.Errorf("to the registered address: %q", m.Subject)
			}
		}
	}
	if link == "" {
		t.Fatalf("no link mailed to the new address: %+v", msgs)
	}
	c := b.client(t)
	rec := c.get(link)
	wantStatus(t, rec, http.StatusOK)
	if doc(t, rec).Find(`[data-testid=confirm-signup]`).Length() != 1 {
		t.Fatalf("confirm page:\n%s", rec.Body)
	}
	if _, err := b.st.UserByEmail(ctx(), "new@example.com"); err == nil {
		t.Fatal("opening the link (as a mail scanner does) made the account")
	}
	rec = c.post(link, nil)
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/dashboard" {
		t.Fatalf("confirming: %d %s", rec.Code, rec.Body)
	}
	wantStatus(t, c.get("/dashboard"), http.StatusOK)
	u, err := b.st.UserByEmail(ctx(), "new@example.com")
	if err != nil || u.Name != "Someone" {
		t.Fatalf("account %+v, %v", u, err)
	}
	again := b.client(t)
	if rec := again.get(link); rec.Code != http.StatusNotFound {
		t.Errorf("the link opened again: %d", rec.Code)
	}
	again.get("/signup")
	if rec := again.post(link, nil); rec.Code != http.StatusNotFound {
		t.Errorf("the link used again: %d", rec.Code)
	}
}
