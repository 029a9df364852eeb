package web_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/burnrate/burnrate/access"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
	"github.com/burnrate/burnrate/web/views"
)

// An htmx request from a page that no longer matches the session — logged
// out, moved to another org, removed from the org — gets the browser sent to
// a whole page (HX-Redirect, HX-Refresh), not a page to swap into the old
// one, nor another org's numbers under this one's name.
func TestHTMXRequestOfAPageTheSessionLeft(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner, _, _ := demoOrg(t, b)
	fragment := func(c *client, orgHeader string) *httptest.ResponseRecorder {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, "/dashboard?range=30d&group=team", nil)
		req.Header.Set("HX-Request", "true")
		req.Header.Set("HX-Current-URL", "http://burnrate.test/dashboard?range=7d")
		if orgHeader != "" {
			req.Header.Set(views.OrgHeader, orgHeader)
		}
		return c.do(req)
	}
	wantGone := func(rec *httptest.ResponseRecorder, header, want string) {
		t.Helper()
		if rec.Code != http.StatusNoContent || rec.Header().Get(header) != want || rec.Body.Len() != 0 {
			t.Errorf("status %d, %s %q, %d bytes; want 204, %s %q and no body", rec.Code, header, rec.Header().Get(header),
				rec.Body.Len(), header, want)
		}
	}
	orgID := strconv.FormatInt(org.ID, 10)

	c := b.client(t)
	c.login(owner.Email)
	page := c.get("/dashboard")
	wantStatus(t, page, http.StatusOK)
	if h, _ := doc(t, page).Find("body").Attr("hx-headers"); !jsonHas(t, h, views.OrgHeader, orgID) {
		t.Errorf("the page's htmx headers %s do not name its org %s", h, orgID)
	}
	if rec := fragment(c, orgID); rec.Code != http.StatusOK || doc(t, rec).Find("#dashboard").Length() != 1 {
		t.Fatalf("the page's own org: status %d, want the fragment: %.300s", rec.Code, rec.Body)
	}
	// Switched to another org in another tab.
	other, _ := storetest.Org(t, b.st, storetest.OrgOpts{Name: "Other", Owner: &owner})
	wantGone(fragment(c, strconv.FormatInt(other.ID, 10)), "HX-Refresh", "true")
	// Without the header (an older page): answered as before.
	wantStatus(t, fragment(c, ""), http.StatusOK)

	// Removed from the org, and in no other: sent to make one.
	member := storetest.Member(t, b.st, org, access.Viewer)
	mc := b.client(t)
	mc.login(member.Email)
	wantStatus(t, fragment(mc, orgID), http.StatusOK)
	if _, _, err := b.st.RemoveMember(ctx(), org.ID, member.ID, func(store.Member) error { return nil }); err != nil {
		t.Fatal(err)
	}
	wantGone(fragment(mc, orgID), "HX-Redirect", "/orgs/new")

	// Logged out (in another tab): the log-in page, then back to the page.
	lc := b.client(t)
	lc.login(owner.Email)
	lc.post("/logout", nil)
	wantGone(fragment(lc, orgID), "HX-Redirect", "/login?next=%2Fdashboard%3Frange%3D7d")
}

// jsonHas reports whether the JSON object s has key with the value want.
func jsonHas(t *testing.T, s, key, want string) bool {
	t.Helper()
	var m map[string]string
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return m[key] == want
}
