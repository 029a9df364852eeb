package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestOrgTierTableSaved: an admin's tier table edit on the break-even page
// is saved for the org: the reloaded page and the API's break-even compare
// with it, another org keeps the shipped table, and a reset brings the
// shipped table back. The API edits the same table.
func TestOrgTierTableSaved(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, _, c, token := orgWithToken(t, b)
	other, _, oc, otherToken := orgWithToken(t, b)
	today := testNow.UTC().Truncate(24 * time.Hour)
	for _, id := range []int64{org.ID, other.ID} {
		insertDailySpend(t, b.st, id, today.AddDate(0, 0, -2), "gpt-4o", 1_000_000_000, 200_000_000, 0, "4500")
	}
	openModel := func(c *client) string {
		rec := c.get("/breakeven")
		wantStatus(t, rec, http.StatusOK)
		return doc(t, rec).Find(`[data-testid=open-model-source]`).Text()
	}
	if got := openModel(c); !strings.Contains(got, "deepseek-v3") {
		t.Fatalf("before any edit: %q", got)
	}

	rec := c.post("/breakeven/tiers", url.Values{"tiers": {"gpt-4o=llama-3.3-70b"}})
	wantStatus(t, rec, http.StatusSeeOther)
	// Reloaded, the page compares gpt-4o with the org's choice, and lists it.
	rec = c.get("/breakeven")
	d := doc(t, rec)
	if got := d.Find(`[data-testid=open-model-source]`).Text(); !strings.Contains(got, "llama-3.3-70b") || !strings.Contains(got, "yours") {
		t.Errorf("after the edit: %q", got)
	}
	if got := d.Find(`[data-testid=org-tiers-table]`).Text(); !strings.Contains(got, "gpt-4o") || !strings.Contains(got, "llama-3.3-70b") {
		t.Errorf("tier table: %q", got)
	}
	if v, _ := d.Find(`[data-testid=org-tiers-input]`).Attr("value"); v != "gpt-4o=llama-3.3-70b" {
		t.Errorf("tier input = %q", v)
	}
	// The API's break-even uses it too.
	_, got := apiCall(t, b, token, "/api/v1/breakeven", `{"org_usage":true}`)
	if got["open_model_source"] != "yours" || !strings.Contains(got["self_host"].(map[string]any)["open_model"].(string), "llama-3.3-70b") {
		t.Errorf("API break-even: %v %v", got["open_model_source"], got["self_host"])
	}
	// The other org still has the shipped table.
	if got := openModel(oc); !strings.Contains(got, "deepseek-v3") || strings.Contains(got, "yours") {
		t.Errorf("other org after the first's edit: %q", got)
	}
	_, got = apiCall(t, b, otherToken, "/api/v1/breakeven", `{"org_usage":true}`)
	if got["open_model_source"] == "yours" {
		t.Errorf("other org's API uses the first's edit: %v", got)
	}

	// A bad edit names the field and keeps what was saved.
	rec = c.post("/breakeven/tiers", url.Values{"tiers": {"gpt-4o=llama-9"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	if msg := doc(t, rec).Find(`[data-testid=org-tiers-error]`).Text(); !strings.Contains(msg, "Tier table edits") || !strings.Contains(msg, "llama-9") {
		t.Errorf("bad edit message: %q", msg)
	}
	if got := openModel(c); !strings.Contains(got, "llama-3.3-70b") {
		t.Errorf("after a refused edit: %q", got)
	}

	// Reset: the shipped table again.
	rec = c.post("/breakeven/tiers/reset", nil)
	wantStatus(t, rec, http.StatusSeeOther)
	if got := openModel(c); !strings.Contains(got, "deepseek-v3") {
		t.Errorf("after reset: %q", got)
	}

	// The API edits the same table.
	put := func(tok, body string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		b.srv.ServeHTTP(rec, apiRequest(http.MethodPut, "/api/v1/tiers", tok, body))
		return rec
	}
	wantStatus(t, put(token, `{"substitutes":{"gpt-4o":"none"}}`), http.StatusOK)
	if rec := put(token, `{"substitutes":{"gpt-4o":"llama-9"}}`); rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "substitutes") {
		t.Errorf("bad API edit: %d %s", rec.Code, rec.Body)
	}
	if got := doc(t, c.get("/breakeven")).Find(`[data-testid=no-substitute]`).Text(); !strings.Contains(got, "gpt-4o") {
		t.Errorf("API edit not used by the page: %q", got)
	}
	rec = httptest.NewRecorder()
	b.srv.ServeHTTP(rec, apiRequest(http.MethodGet, "/api/v1/tiers", otherToken, ""))
	if strings.TrimSpace(rec.Body.String()) != `{"substitutes":{}}` {
		t.Errorf("other org's tiers: %s", rec.Body)
	}
}
