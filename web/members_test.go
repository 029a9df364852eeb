package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/burnrate/burnrate/access"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestOwnersDemotingEachOtherLeaveAnOwner has the org's two owners demote
// each other at the same moment, again and again: one of them must stay
// owner every time, and the other request is refused, saying why.
func TestOwnersDemotingEachOtherLeaveAnOwner(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, ann := storetest.Org(t, b.st, storetest.OrgOpts{})
	bob := storetest.Member(t, b.st, org, access.Owner)
	clients := map[int64]*client{}
	for _, u := range []store.User{ann, bob} {
		c := b.client(t)
		c.login(u.Email)
		c.get("/members")
		clients[u.ID] = c
	}
	const rounds = 40
	lastOwnerRefusals := 0
	for round := range rounds {
		if _, err := b.st.Pool().Exec(ctx(), `UPDATE memberships SET role = 'owner' WHERE org_id = $1`, org.ID); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		codes := map[int64]int{}
		bodies := map[int64]string{}
		var mu sync.Mutex
		for actor, target := range map[int64]int64{ann.ID: bob.ID, bob.ID: ann.ID} {
			req := newFormRequest("/members/"+itoa(target)+"/role", url.Values{"role": {"admin"}, "_csrf": {clients[actor].csrf}})
			wg.Go(func() {
				<-start
				rec := clients[actor].do(req)
				mu.Lock()
				codes[actor], bodies[actor] = rec.Code, rec.Body.String()
				mu.Unlock()
			})
		}
		close(start)
		wg.Wait()
		owners, err := b.st.OwnerCount(ctx(), org.ID)
		if err != nil {
			t.Fatal(err)
		}
		if owners < 1 {
			t.Fatalf("round %d: no owner left after both owners demoted each other (statuses %v)", round, codes)
		}
		ok := 0
		for actor, code := range codes {
			switch {
			case code == http.StatusSeeOther:
				ok++
			case code == http.StatusConflict && strings.Contains(bodies[actor], "An org needs at least one owner"):
				lastOwnerRefusals++
			case code == http.StatusForbidden:
				// Demoted before its own request was read: no longer an owner.
			default:
				t.Fatalf("round %d: status %d: %.300s", round, code, bodies[actor])
			}
		}
		if ok != 1 {
			t.Fatalf("round %d: %d demotions went through, want exactly 1 (statuses %v)", round, ok, codes)
		}
	}
	if lastOwnerRefusals == 0 {
		t.Fatalf("in %d rounds no request was refused with the last-owner rule", rounds)
	}
}

// TestRemovingMemberRevokesTheirTokens checks that the API tokens a member
// created stop working when the member is removed, in the same step, and
// that nobody else's do.
func TestRemovingMemberRevokesTheirTokens(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	ann := storetest.User(t, b.st, storetest.UserOpts{Email: "ann@x.com"})
	if err := b.st.AddMember(ctx(), org.ID, ann.ID, access.Admin); err != nil {
		t.Fatal(err)
	}
	bob := storetest.Member(t, b.st, org, access.Admin)
	other, _ := storetest.Org(t, b.st, storetest.OrgOpts{Owner: &ann})
	token := func(orgID, userID int64, name string) (store.APIToken, string) {
		tok, secret, err := b.st.CreateAPIToken(ctx(), orgID, name, userID)
		if err != nil {
			t.Fatal(err)
		}
		return tok, secret
	}
	_, annCI := token(org.ID, ann.ID, "ann ci")
	_, annNightly := token(org.ID, ann.ID, "ann nightly")
	annOld, _ := token(org.ID, ann.ID, "ann old")
	if err := b.st.RevokeAPIToken(ctx(), org.ID, annOld.ID); err != nil {
		t.Fatal(err)
	}
	_, bobs := token(org.ID, bob.ID, "bob's")
	_, owners := token(org.ID, owner.ID, "owner's")
	_, annElsewhere := token(other.ID, ann.ID, "ann's own org")

	c := b.client(t)
	c.login(owner.Email)
	c.get("/members")
	wantStatus(t, c.post("/members/"+itoa(ann.ID)+"/remove", nil), http.StatusSeeOther)
	if got, want := doc(t, c.get("/members")).Find(`[data-testid=flash]`).Text(), "Removed ann@x.com and revoked 2 API tokens they created."; got != want {
		t.Errorf("flash = %q, want %q", got, want)
	}
	for secret, want := range map[string]int{annCI: 401, annNightly: 401, bobs: 200, owners: 200, annElsewhere: 200} {
		rec := httptest.NewRecorder()
		b.srv.ServeHTTP(rec, apiRequest(http.MethodGet, "/api/v1/org", secret, ""))
		if rec.Code != want {
			t.Errorf("token %s… after removing ann: status %d, want %d", secret[:10], rec.Code, want)
		}
	}

	// The tokens page says who made each token, and the rule.
	d := doc(t, c.get("/tokens"))
	if !strings.Contains(d.Find(`[data-testid=token-rule]`).Text(), "removing a member revokes every token they created") {
		t.Errorf("tokens page does not state the rule: %q", d.Find(`[data-testid=token-rule]`).Text())
	}
	creators := map[string]string{}
	d.Find(`[data-testid=token-row]`).Each(func(_ int, row *goquery.Selection) {
		creators[strings.TrimSpace(row.Find("td").First().Text())] = strings.TrimSpace(row.Find(`[data-testid=token-creator]`).Text())
	})
	for name, want := range map[string]string{"ann ci": "ann@x.com", "bob's": bob.Email, "owner's": owner.Email} {
		if creators[name] != want {
			t.Errorf("token %q created by %q, want %q (all: %v)", name, creators[name], want, creators)
		}
	}

	// One token, in the singular; none, not mentioned.
	c.get("/members")
	wantStatus(t, c.post("/members/"+itoa(bob.ID)+"/remove", nil), http.StatusSeeOther)
	if got := doc(t, c.get("/members")).Find(`[data-testid=flash]`).Text(); got != "Removed "+bob.Email+" and revoked 1 API token they created." {
		t.Errorf("flash = %q", got)
	}
	viewer := storetest.Member(t, b.st, org, access.Viewer)
	c.get("/members")
	wantStatus(t, c.post("/members/"+itoa(viewer.ID)+"/remove", nil), http.StatusSeeOther)
	if got := doc(t, c.get("/members")).Find(`[data-testid=flash]`).Text(); got != "Removed "+viewer.Email+"." {
		t.Errorf("flash = %q", got)
	}
}
