package web_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/burnrate/burnrate/access"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// directive is the directive named name of a Content-Security-Policy.
func directive(csp, name string) (string, bool) {
	for _, d := range strings.Split(csp, ";") {
		if n, _, _ := strings.Cut(strings.TrimSpace(d), " "); n == name {
			return strings.TrimSpace(d), true
		}
	}
	return "", false
}

// scriptSrc is the script-src directive of a Content-Security-Policy.
func scriptSrc(csp string) (string, bool) { return directive(csp, "script-src") }

// TestCSPForbidsInlineScript checks that every response's CSP lets only
// Burnrate's own script files run, no inline script or event handler (so
// markup slipped into a page cannot run), and only its own style sheets
// apply; and that no page relies on either: every page an owner sees, with
// data in it, has no on* attribute, no javascript: URL, no inline script,
// no style attribute and no <style>.
func TestCSPForbidsInlineScript(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner, token, _ := demoOrg(t, b)
	storetest.Member(t, b.st, store.Org{ID: org.ID}, access.Viewer)
	if _, err := b.st.CreateScenario(ctx(), org.ID, owner.ID, store.ScenarioBreakEven, "Saved",
		json.RawMessage(`{"model":"gpt-4.1-mini","input_tokens":1e8,"output_tokens":1e7}`)); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	b.srv.ServeHTTP(rec, apiRequest(http.MethodGet, "/api/v1/budgets", token, ""))
	wantStatus(t, rec, http.StatusOK)
	var list struct{ Budgets []struct{ ID int64 } }
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil || len(list.Budgets) == 0 {
		t.Fatalf("budgets: %s (%v)", rec.Body, err)
	}

	anon := b.client(t)
	for _, path := range []string{"/login", "/signup", "/static/js/app.js", "/nope"} {
		rec := anon.get(path)
		src, ok := scriptSrc(rec.Header().Get("Content-Security-Policy"))
		if !ok || src != "script-src 'self'" {
			t.Errorf("%s: CSP %q, want script-src 'self' and nothing more", path, rec.Header().Get("Content-Security-Policy"))
		}
	}

	c := b.client(t)
	c.login(owner.Email)
	pages := []string{"/dashboard?range=90d", "/budgets", "/budgets/new", "/budgets/" + itoa(list.Budgets[0].ID),
		"/budgets/" + itoa(list.Budgets[0].ID) + "/edit", "/members", "/tokens", "/settings", "/settings/notifications", "/settings/digest", "/imports", "/imports/mapping",
		"/advisor", "/breakeven", "/prices", "/orgs/new"}
	for _, path := range pages {
		rec := c.get(path)
		wantStatus(t, rec, http.StatusOK)
		csp := rec.Header().Get("Content-Security-Policy")
		if src, _ := scriptSrc(csp); src != "script-src 'self'" {
			t.Errorf("%s: %q", path, src)
		}
		if src, _ := directive(csp, "style-src"); src != "style-src 'self'" {
			t.Errorf("%s: %q", path, src)
		}
		doc(t, rec).Find("*").Each(func(_ int, el *goquery.Selection) {
			for _, a := range el.Nodes[0].Attr {
				name := strings.ToLower(a.Key)
				if strings.HasPrefix(name, "on") || strings.HasPrefix(name, "hx-on") ||
					strings.HasPrefix(strings.TrimSpace(strings.ToLower(a.Val)), "javascript:") {
					t.Errorf("%s: <%s %s=%q>: inline script, which the CSP blocks", path, goquery.NodeName(el), a.Key, a.Val)
				}
				if name == "style" {
					t.Errorf("%s: <%s style=%q>: an inline style, which the CSP blocks: use a class", path, goquery.NodeName(el), a.Val)
				}
			}
			if goquery.NodeName(el) == "style" {
				t.Errorf("%s: a <style> element, which the CSP blocks: use app.css", path)
			}
			if goquery.NodeName(el) == "script" {
				typ, _ := el.Attr("type")
				if src, ok := el.Attr("src"); !ok && typ != "application/json" {
					t.Errorf("%s: inline <script> %.80q, which the CSP blocks", path, el.Text())
				} else if ok && !strings.HasPrefix(src, "/static/") {
					t.Errorf("%s: script from %q", path, src)
				}
			}
		})
	}
}
