package web_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/burnrate/burnrate/store/storetest"
)

// TestCSRFTokenInQueryRefused: the token is accepted from the form body or
// the header, never from the URL.
func TestCSRFTokenInQueryRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	c := b.client(t)
	c.login(owner.Email)
	c.get("/tokens")
	req := newFormRequest("/tokens?_csrf="+url.QueryEscape(c.csrf), url.Values{"name": {"from a link"}})
	wantStatus(t, c.do(req), http.StatusForbidden)
	// Not even alongside a good token in the body.
	req = newFormRequest("/tokens?_csrf="+url.QueryEscape(c.csrf), url.Values{"name": {"from a link"}, "_csrf": {c.csrf}})
	wantStatus(t, c.do(req), http.StatusForbidden)
	if toks, _ := b.st.APITokens(ctx(), org.ID); len(toks) != 0 {
		t.Fatalf("a token in the URL created %d API tokens", len(toks))
	}
	// The body still works.
	if rec := c.post("/tokens", url.Values{"name": {"from the form"}}); rec.Code >= 400 {
		t.Fatalf("token in the body: status %d", rec.Code)
	}
}
