package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

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
	bob := storetest.Member(t, b.st, org, store.RoleOwner)
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
