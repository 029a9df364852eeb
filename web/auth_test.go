package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/burnrate/burnrate/access"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestSignupInviteAccept walks the path a team takes: sign up, land on the
// dashboard, invite a teammate, who accepts by creating an account.
func TestSignupInviteAccept(t *testing.T) {
	t.Parallel()
	b := setup(t)
	lead := b.client(t)

	lead.get("/signup")
	rec := lead.post("/signup", url.Values{"name": {"Ann Lead"}, "email": {"ann@example.com"}, "password": {"long enough pw"}, "org_name": {"Acme ML"}})
	wantStatus(t, rec, http.StatusSeeOther)
	if loc := rec.Header().Get("Location"); loc != "/dashboard" {
		t.Fatalf("after sign-up, Location = %q, want /dashboard", loc)
	}
	rec = lead.get("/dashboard")
	wantStatus(t, rec, http.StatusOK)
	if doc(t, rec).Find(`[data-testid=upload-cta]`).Length() != 1 {
		t.Fatal("empty dashboard has no upload call to action")
	}

	lead.get("/members")
	rec = lead.post("/invites", url.Values{"email": {"bob@example.com"}, "role": {"member"}})
	wantStatus(t, rec, http.StatusCreated)
	link := strings.TrimSpace(doc(t, rec).Find(`[data-testid=invite-link] .secret`).Text())
	if !strings.HasPrefix(link, "http://burnrate.test/join/") {
		t.Fatalf("invite link = %q", link)
	}
	token := strings.TrimPrefix(link, "http://burnrate.test/join/")

	bob := b.client(t)
	rec = bob.get("/join/" + token)
	wantStatus(t, rec, http.StatusOK)
	if !strings.Contains(rec.Body.String(), "Acme ML") {
		t.Fatal("invite page does not name the org")
	}
	bob.get("/signup?invite=" + token)
	rec = bob.post("/signup", url.Values{"name": {"Bob"}, "email": {"bob@example.com"}, "password": {"bobs password"}, "invite": {token}})
	wantStatus(t, rec, http.StatusSeeOther)

	rec = bob.get("/members")
	wantStatus(t, rec, http.StatusOK)
	if n := doc(t, rec).Find(`[data-testid=member-row]`).Length(); n != 2 {
		t.Fatalf("members after accept = %d, want 2", n)
	}
	org, err := b.st.OrgBySlug(ctx(), "acme-ml")
	if err != nil {
		t.Fatal(err)
	}
	bobUser, _ := b.st.UserByEmail(ctx(), "bob@example.com")
	m, err := b.st.Membership(ctx(), org.ID, bobUser.ID)
	if err != nil || m.Role != access.Member {
		t.Fatalf("bob's membership = %+v, %v; want member", m, err)
	}

	// The link works once.
	rec = b.client(t).get("/join/" + token)
	wantStatus(t, rec, http.StatusNotFound)
}

func TestInviteAcceptByExistingUser(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{Name: "Joinable"})
	other := storetest.User(t, b.st, storetest.UserOpts{})
	_, token, err := b.st.CreateInvite(ctx(), org.ID, other.Email, access.Viewer, owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	c := b.client(t)
	c.login(other.Email)
	c.get("/join/" + token)
	wantStatus(t, c.post("/join/"+token, nil), http.StatusSeeOther)
	if m, err := b.st.Membership(ctx(), org.ID, other.ID); err != nil || m.Role != access.Viewer {
		t.Fatalf("membership = %+v, %v; want viewer", m, err)
	}
}

func TestLoginRotatesSession(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	c := b.client(t)
	c.login(owner.Email)
	first := c.cookie("burnrate_session")
	if first == "" {
		t.Fatal("no session cookie after log-in")
	}
	c.get("/login")
	c.post("/login", url.Values{"email": {owner.Email}, "password": {storetest.Password}})
	second := c.cookie("burnrate_session")
	if second == "" || second == first {
		t.Fatalf("session not rotated at log-in: %q then %q", first, second)
	}
	if _, err := b.st.VisitByCookie(ctx(), first); err == nil {
		t.Fatal("the old session still works after a new log-in")
	}
	wantStatus(t, c.get("/dashboard"), http.StatusOK)
}

func TestLoginWrongPasswordAndRateLimit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	c := b.client(t)
	c.get("/login")
	for i := range 10 {
		rec := c.post("/login", url.Values{"email": {owner.Email}, "password": {"wrong"}})
		if rec.Code != http.StatusUnauthorized {
			t.Fatalf("attempt %d: status %d, want 401", i, rec.Code)
		}
	}
	// Now even the right password is refused for a while.
	rec := c.post("/login", url.Values{"email": {owner.Email}, "password": {storetest.Password}})
	wantStatus(t, rec, http.StatusTooManyRequests)
}

func TestCSRFRejected(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	c := b.client(t)
	c.login(owner.Email)
	for name, token := range map[string]string{"Missing": "", "Wrong": "forged"} {
		form := url.Values{"name": {"forged token"}}
		if token != "" {
			form.Set("_csrf", token)
		}
		req := newFormRequest("/tokens", form)
		rec := c.do(req)
		if rec.Code != http.StatusForbidden && rec.Code != http.StatusBadRequest {
			t.Errorf("%s token: status %d, want 403 or 400", name, rec.Code)
		}
	}
	// A cross-site browser request is blocked by Sec-Fetch-Site alone.
	req := newFormRequest("/tokens", url.Values{"name": {"x"}, "_csrf": {c.csrf}})
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	if rec := c.do(req); rec.Code != http.StatusForbidden {
		t.Errorf("cross-site: status %d, want 403", rec.Code)
	}
	toks, _ := b.st.APITokens(ctx(), mustOrgOf(t, b, owner.ID))
	if len(toks) != 0 {
		t.Fatalf("a forged request created %d tokens", len(toks))
	}
}

func TestViewerCannotWrite(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, _ := storetest.Org(t, b.st, storetest.OrgOpts{})
	viewer := storetest.Member(t, b.st, org, access.Viewer)
	member := storetest.Member(t, b.st, org, access.Member)
	c := b.client(t)
	c.login(viewer.Email)
	wantStatus(t, c.get("/dashboard"), http.StatusOK)
	for _, p := range []struct {
		path string
		form url.Values
	}{
		{"/settings", url.Values{"name": {"Hijacked"}, "time_zone": {"UTC"}, "currency": {"USD"}, "team_tag_key": {"team"}}},
		{"/tokens", url.Values{"name": {"viewer token"}}},
		{"/invites", url.Values{"email": {"x@example.com"}, "role": {"admin"}}},
		{"/members/" + itoa(member.ID) + "/remove", nil},
	} {
		c.get("/dashboard")
		if rec := c.post(p.path, p.form); rec.Code != http.StatusForbidden {
			t.Errorf("viewer POST %s: status %d, want 403", p.path, rec.Code)
		}
	}
	got, _ := b.st.Org(ctx(), org.ID)
	if got.Name == "Hijacked" {
		t.Fatal("a viewer renamed the org")
	}
	if _, err := b.st.Membership(ctx(), org.ID, member.ID); err != nil {
		t.Fatal("a viewer removed a member")
	}
}

func TestLastOwnerStays(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	admin := storetest.Member(t, b.st, org, access.Admin)
	c := b.client(t)
	c.login(owner.Email)
	c.get("/members")
	// An owner may not demote themselves through the UI (no control), and
	// an admin may not demote the owner.
	c2 := b.client(t)
	c2.login(admin.Email)
	c2.get("/members")
	if rec := c2.post("/members/"+itoa(owner.ID)+"/role", url.Values{"role": {"viewer"}}); rec.Code != http.StatusForbidden {
		t.Fatalf("admin demoting owner: status %d, want 403", rec.Code)
	}
	// Owner promotes admin to owner, then can be demoted by them.
	wantStatus(t, c.post("/members/"+itoa(admin.ID)+"/role", url.Values{"role": {"owner"}}), http.StatusSeeOther)
	c2.get("/members")
	wantStatus(t, c2.post("/members/"+itoa(owner.ID)+"/role", url.Values{"role": {"member"}}), http.StatusSeeOther)
	// Now the admin-turned-owner is the last owner and cannot leave the role.
	c.get("/members")
	if n, _ := b.st.OwnerCount(ctx(), org.ID); n != 1 {
		t.Fatalf("owners = %d, want 1", n)
	}
}

func TestOrgCreateAndSwitch(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first, owner := storetest.Org(t, b.st, storetest.OrgOpts{Name: "First"})
	stranger, _ := storetest.Org(t, b.st, storetest.OrgOpts{Name: "Stranger"})
	c := b.client(t)
	c.login(owner.Email)
	c.get("/orgs/new")
	wantStatus(t, c.post("/orgs", url.Values{"name": {"Second"}}), http.StatusSeeOther)
	rec := c.get("/settings")
	if got := doc(t, rec).Find(`[data-testid=org-slug]`).Text(); got != "second" {
		t.Fatalf("after creating, looking at %q, want second", got)
	}
	wantStatus(t, c.post("/orgs/switch", url.Values{"slug": {first.Slug}}), http.StatusSeeOther)
	if got := doc(t, c.get("/settings")).Find(`[data-testid=org-slug]`).Text(); got != first.Slug {
		t.Fatalf("after switching, looking at %q, want %s", got, first.Slug)
	}
	// Someone else's org cannot be switched to; it looks like no org at all.
	c.get("/dashboard")
	wantStatus(t, c.post("/orgs/switch", url.Values{"slug": {stranger.Slug}}), http.StatusNotFound)
}
