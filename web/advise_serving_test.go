package web_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// TestAdvisorServingLatencyTarget: the page and the API take the serving
// target and traffic shape, every number through the quantity parser, show
// each option's expected latency, and list below a line, with why, the
// options that miss the target (docs/advisor.md, "Serving").
func TestAdvisorServingLatencyTarget(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, _, c, token := orgWithToken(t, b)

	rec := c.get("/advisor?job=serving&model=llama-3.1-70b&concurrency=64&ttft_ms=2000&tpot_ms=50&latency_percentile=90&prompt_tokens=1024&output_tokens=256")
	wantStatus(t, rec, http.StatusOK)
	d := doc(t, rec)
	rows := d.Find(`[data-testid=option-row]`)
	if rows.Length() == 0 {
		t.Fatalf("no option meets the target:\n%s", d.Find(`[data-testid=advice-results]`).Text())
	}
	rows.Each(func(_ int, r *goquery.Selection) {
		ttft := cellNumber(t, r.Find(`[data-testid=option-ttft]`).Text())
		tpot := cellNumber(t, r.Find(`[data-testid=option-tpot]`).Text())
		if ttft <= 0 || ttft > 2000 || tpot <= 0 || tpot > 50 {
			t.Errorf("option row with TTFT %g ms, TPOT %g ms", ttft, tpot)
		}
	})
	var a40 string
	d.Find(`[data-testid=missed-row]`).Each(func(_ int, r *goquery.Selection) {
		if strings.Contains(r.Text(), "4x_A40_SECURE") {
			a40 = r.Find(`[data-testid=missed-why]`).Text()
		}
	})
	if !strings.Contains(a40, "TPOT") || !strings.Contains(a40, "> 50.0 ms at 64 users") {
		t.Errorf("4× A40 below the line: %q", a40)
	}
	if v, _ := d.Find(`#advisor-form [name=tpot_ms]`).Attr("value"); v != "50" {
		t.Errorf("form keeps tpot_ms = %q", v)
	}

	// The same through the API.
	rec, got := apiCall(t, b, token, "/api/v1/advise", `{"job":"serving","model":"llama-3.1-70b","concurrency":64,"ttft_ms":2000,"tpot_ms":50}`)
	wantStatus(t, rec, http.StatusOK)
	opts := got["options"].([]any)
	first := opts[0].(map[string]any)
	if first["ttft_ms"].(float64) > 2000 || first["tpot_ms"].(float64) > 50 || first["output_tokens_per_s"].(float64) <= 0 {
		t.Errorf("API option %v", first)
	}
	if missed, _ := got["missed_target"].([]any); len(missed) == 0 || missed[0].(map[string]any)["miss"] == "" {
		t.Errorf("API missed_target = %v", got["missed_target"])
	}
	// A rate instead of a concurrency, on both faces.
	if rec := c.get("/advisor?job=serving&model=llama-3.1-8b&requests_per_s=3&tpot_ms=80"); rec.Code != http.StatusOK ||
		doc(t, rec).Find(`[data-testid=option-row]`).Length() == 0 {
		t.Errorf("requests/s on the page: %d", rec.Code)
	}

	// Bad numbers are refused naming the field, on the page and in the API.
	rec = c.get("/advisor?job=serving&model=llama-3.1-8b&concurrency=4&tpot_ms=lots")
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(doc(t, rec).Find(`[role=alert]`).Text(), "TPOT target (ms)") {
		t.Errorf("tpot_ms=lots on the page: %d", rec.Code)
	}
	for _, body := range []string{
		`{"job":"serving","model":"llama-3.1-8b","concurrency":4,"ttft_ms":1e300}`,
		`{"job":"serving","model":"llama-3.1-8b","concurrency":4,"latency_percentile":20}`,
		`{"job":"serving","model":"llama-3.1-8b","requests_per_s":-1}`,
		`{"job":"serving","model":"llama-3.1-8b","concurrency":4,"prompt_tokens":1.5}`,
	} {
		if rec, _ := apiCall(t, b, token, "/api/v1/advise", body); rec.Code != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d %s", body, rec.Code, rec.Body)
		}
	}
}

// cellNumber reads a table cell's number ("1,234.5").
func cellNumber(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimSpace(s), ",", ""), 64)
	if err != nil {
		t.Fatalf("cell %q: %v", s, err)
	}
	return v
}
