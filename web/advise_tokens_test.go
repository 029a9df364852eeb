package web_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestAdvisorWithoutTokens: a training job is sized by its tokens on every
// face. The page opened bare shows its example (1B tokens, in the form); a
// question that names a training job but no tokens gets the configurations
// that hold it, without time or cost, never an answer for 1B (or 0)
// tokens; batch inference without tokens is refused with a message naming
// the field, on the page and in the API.
func TestAdvisorWithoutTokens(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, _, c, token := orgWithToken(t, b)

	rec := c.get("/advisor")
	wantStatus(t, rec, http.StatusOK)
	if v, _ := doc(t, rec).Find(`#advisor-form [name=tokens]`).Attr("value"); v != "1B" {
		t.Errorf("bare page's example tokens = %q", v)
	}
	for _, q := range []string{
		"/advisor?job=training&model=llama-3.1-8b",
		"/advisor?job=lora&model=llama-3.1-8b&tokens=",
		"/advisor?job=training&model=llama-3.1-8b&tokens=&input_tokens=3B",
	} {
		rec := c.get(q)
		wantStatus(t, rec, http.StatusOK)
		d := doc(t, rec)
		if s := d.Find(`[data-testid=advice-summary]`).Text(); !strings.HasPrefix(s, "No tokens given, so no time or cost") {
			t.Errorf("%s: summary %q", q, s)
		}
		if d.Find(`[data-testid=option-row]`).Length() == 0 {
			t.Errorf("%s: no configuration listed", q)
		}
		if cost := d.Find(`[data-testid=option-cost]`).First().Text(); !strings.HasPrefix(strings.TrimSpace(cost), "—") || !strings.Contains(cost, "/h") {
			t.Errorf("%s: cost cell %q, want no cost and the hourly price", q, cost)
		}
	}
	// Serving is sized by its load, not tokens: no message about them.
	if rec := c.get("/advisor?job=serving&model=llama-3.1-8b&concurrency=4"); rec.Code != http.StatusOK {
		t.Errorf("serving: %d", rec.Code)
	}
	rec = c.get("/advisor?job=batch-inference&model=llama-3.1-8b&tokens=")
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(doc(t, rec).Find(`[role=alert]`).Text(), "tokens") {
		t.Errorf("batch inference without tokens: %d", rec.Code)
	}

	rec, got := apiCall(t, b, token, "/api/v1/advise", `{"job":"qlora","params":65e9}`)
	wantStatus(t, rec, http.StatusOK)
	if a := got["assumptions"].(map[string]any); a["fit_only"] != true || len(got["options"].([]any)) == 0 {
		t.Errorf("qlora 65B without tokens: %.600s", rec.Body)
	}
	rec, got = apiCall(t, b, token, "/api/v1/advise", `{"job":"batch-inference","model":"llama-3.1-8b"}`)
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(got["error"].(string), "tokens") {
		t.Errorf("batch inference: %d %s", rec.Code, rec.Body)
	}
	if rec, _ := apiCall(t, b, token, "/api/v1/advise", `{"job":"batch-inference","model":"llama-3.1-8b","input_tokens":3e9}`); rec.Code != http.StatusOK {
		t.Errorf("batch inference with prompt tokens only: %d %s", rec.Code, rec.Body)
	}
}
