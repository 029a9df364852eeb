package web_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestAdvisorRequiresTokens: a training job is sized by its tokens on every
// face. The page opened bare shows its example (1B tokens, in the form); a
// question that names a job but no tokens, or only the batch-inference
// prompt tokens, is refused with a message naming the field, never
// answered for 1B (or 0) tokens; the API refuses the same bodies.
func TestAdvisorRequiresTokens(t *testing.T) {
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
		if rec.Code != http.StatusUnprocessableEntity {
			t.Errorf("%s: status %d, want 422", q, rec.Code)
			continue
		}
		d := doc(t, rec)
		if msg := d.Find(`[role=alert]`).Text(); !strings.Contains(msg, "tokens") || !strings.Contains(msg, "training tokens") {
			t.Errorf("%s: message %q does not name the tokens field", q, msg)
		}
		// One message, not split where it says "; ", and the field marked.
		if n := d.Find(`[data-testid=advice-errors] li`).Length(); n != 1 {
			t.Errorf("%s: %d messages, want 1: %q", q, n, d.Find(`[data-testid=advice-errors]`).Text())
		}
		if v, _ := d.Find(`#advisor-form [name=tokens]`).Attr("aria-invalid"); v != "true" {
			t.Errorf("%s: tokens field aria-invalid=%q", q, v)
		}
		if v, ok := d.Find(`#advisor-form [name=seq_len]`).Attr("aria-invalid"); ok {
			t.Errorf("%s: seq_len marked invalid (%q) though nothing is wrong with it", q, v)
		}
		if d.Find(`[data-testid=option-row]`).Length() != 0 {
			t.Errorf("%s: options shown for a job nobody sized", q)
		}
	}
	// Serving is sized by its load, not tokens: no message about them.
	if rec := c.get("/advisor?job=serving&model=llama-3.1-8b&concurrency=4"); rec.Code != http.StatusOK {
		t.Errorf("serving: %d", rec.Code)
	}

	for _, body := range []string{
		`{"job":"training","model":"llama-3.1-8b"}`,
		`{"job":"training","model":"llama-3.1-8b","input_tokens":3e9}`,
		`{"job":"batch-inference","model":"llama-3.1-8b"}`,
	} {
		rec, got := apiCall(t, b, token, "/api/v1/advise", body)
		if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(got["error"].(string), "tokens") {
			t.Errorf("%s: %d %s", body, rec.Code, rec.Body)
		}
	}
	if rec, _ := apiCall(t, b, token, "/api/v1/advise", `{"job":"batch-inference","model":"llama-3.1-8b","input_tokens":3e9}`); rec.Code != http.StatusOK {
		t.Errorf("batch inference with prompt tokens only: %d %s", rec.Code, rec.Body)
	}
}
