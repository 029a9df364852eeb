package web_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
)

// The realism and fair break-even of docs/advisor.md through the page and
// the JSON API; package pricing checks the arithmetic.

func TestBreakEvenMixPageAndAPI(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, _, c, token := orgWithToken(t, b)
	today := testNow.UTC().Truncate(24 * time.Hour)
	// gpt-4o: 1,000M input (none cached) + 200M output = $2,500 + $2,000 = $4,500.
	// gpt-4o-mini: 2,000M input + 500M output = $300 + $300 = $600 — more tokens, less money.
	insertDailySpend(t, b.st, org.ID, today.AddDate(0, 0, -2), "gpt-4o-mini", 2_000_000_000, 500_000_000, 0, "600")
	insertDailySpend(t, b.st, org.ID, today.AddDate(0, 0, -2), "gpt-4o", 1_000_000_000, 200_000_000, 0, "4500")

	rec := c.get("/breakeven")
	wantStatus(t, rec, http.StatusOK)
	d := doc(t, rec)
	val := func(name string) string {
		v, _ := d.Find(`#breakeven-form [name=` + name + `]`).Attr("value")
		return v
	}
	// The default view is the largest-spend model on its own tokens, against its tier's open model.
	if val("models") != "gpt-4o" || val("input_tokens") != "1000000000" || val("output_tokens") != "200000000" {
		t.Fatalf("defaults: %q %s/%s", val("models"), val("input_tokens"), val("output_tokens"))
	}
	if got := d.Find(`[data-testid=api-cost]`).Text(); got != "4,500.00 USD" {
		t.Errorf("api cost = %q", got)
	}
	if got := d.Find(`[data-testid=open-model-source]`).Text(); !strings.Contains(got, "deepseek-v3") || !strings.Contains(got, "tier table") {
		t.Errorf("open model = %q", got)
	}
	rows := d.Find(`[data-testid=mix-row]`)
	if rows.Length() != 2 || !strings.Contains(rows.Eq(0).Text(), "gpt-4o") || !strings.Contains(rows.Eq(0).Text(), "4,500.00 USD") ||
		!strings.Contains(rows.Eq(1).Text(), "qwen3-32b") || !strings.Contains(rows.Eq(1).Text(), "600.00 USD") {
		t.Fatalf("mix rows:\n%s", rows.Text())
	}
	if got := d.Find(`[data-testid=mix-api]`).Text(); got != "5,100.00 USD" {
		t.Errorf("mix API = %q", got)
	}
	// A substitute typed in the form replaces the tier table; "none" keeps a model on the API.
	rec = c.htmx("/breakeven?substitutes=gpt-4o%3Dnone,gpt-4o-mini%3Dllama-3.1-8b")
	wantStatus(t, rec, http.StatusOK)
	d = doc(t, rec)
	if d.Find(`[data-testid=no-open-substitute]`).Length() != 1 || !strings.Contains(d.Find(`[data-testid=mix-table]`).Text(), "llama-3.1-8b") {
		t.Errorf("with substitutes:\n%s", d.Find(`[data-testid=mix]`).Text())
	}
	if !strings.Contains(d.Find(`[data-testid=no-substitute]`).Text(), "gpt-4o has no credible open substitute") {
		t.Errorf("primary without substitute: %q", d.Find(`[data-testid=no-substitute]`).Text())
	}
	rec = c.htmx("/breakeven?substitutes=gpt-4o")
	wantStatus(t, rec, http.StatusUnprocessableEntity)

	// The API, from the org's usage: the same mix and the same default.
	rec, got := apiCall(t, b, token, "/api/v1/breakeven", `{"org_usage":true}`)
	wantStatus(t, rec, http.StatusOK)
	mix := got["mix"].(map[string]any)
	models := mix["models"].([]any)
	first := models[0].(map[string]any)
	if got["api_cost_month_usd"] != "4500" || mix["api_cost_month_usd"] != "5100" || len(models) != 2 ||
		first["model"] != "gpt-4o" || first["open_model"] != "deepseek-v3" || first["api_usd_per_mtok"] != "3.75" {
		t.Fatalf("API mix: %v / %v", got["api_cost_month_usd"], mix)
	}
	// And from usage given in the body, with a substitute.
	rec, got = apiCall(t, b, token, "/api/v1/breakeven",
		`{"usage":[{"model":"gpt-4o-mini","input_tokens":2e9,"output_tokens":5e8}],"substitutes":{"gpt-4o-mini":"llama-3.1-8b"}}`)
	wantStatus(t, rec, http.StatusOK)
	if got["api_cost_month_usd"] != "600" || got["open_model_source"] != "yours" {
		t.Fatalf("API usage body: %v %v", got["api_cost_month_usd"], got["open_model_source"])
	}
	for name, body := range map[string]string{
		"BadSubstitute": `{"org_usage":true,"substitutes":{"gpt-4o":"llama-9"}}`,
		"HugeUsage":     `{"usage":[{"model":"gpt-4o","input_tokens":1e300,"output_tokens":1}]}`,
		"NegativeUsage": `{"usage":[{"model":"gpt-4o","input_tokens":-1,"output_tokens":1}]}`,
		"UsageTypo":     `{"usage":[{"model":"gpt-4o","input_tokenz":1}]}`,
		"NoUsageModel":  `{"usage":[{"input_tokens":1,"output_tokens":1}]}`,
	} {
		if rec, got := apiCall(t, b, token, "/api/v1/breakeven", body); rec.Code != http.StatusUnprocessableEntity || got["error"] == nil {
			t.Errorf("%s: %d %s", name, rec.Code, rec.Body)
		}
	}
}

func TestAdvisorDatacenterOnlyRemembered(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, _, c, _ := orgWithToken(t, b)
	q := "/advisor?job=serving&model=llama-3.1-8b&concurrency=4&gpu=RTX4090"
	// Serving defaults to datacenter GPUs only: no RTX 4090 option.
	rec := c.get(q)
	if n := doc(t, rec).Find(`[data-testid=option-row]`).Length(); n != 0 {
		t.Fatalf("RTX 4090 options with the default filter: %d", n)
	}
	// Turned off, the choice is remembered for the next visit, and the offers carry a badge and caveat.
	rec = c.get(q + "&datacenter_only=off")
	wantStatus(t, rec, http.StatusOK)
	if c.cookie("datacenter_only") != "off" {
		t.Fatalf("cookie = %q", c.cookie("datacenter_only"))
	}
	rec = c.get(q)
	d := doc(t, rec)
	if d.Find(`[data-testid=option-row]`).Length() == 0 || !strings.Contains(d.Find(`[data-testid=offer-caveat]`).First().Text(), "no ECC") {
		t.Fatalf("remembered choice not applied:\n%.2000s", d.Find(`[data-testid=advice-results]`).Text())
	}
	if v, _ := d.Find(`select[name=datacenter_only] option[selected]`).Attr("value"); v != "off" {
		t.Errorf("select shows %q", v)
	}
	// "By job" forgets it.
	c.get(q + "&datacenter_only=")
	if c.cookie("datacenter_only") != "" {
		t.Errorf("cookie after by-job = %q", c.cookie("datacenter_only"))
	}
}

func TestAdvisorPageShowsInstancesTimesGPUs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, _, c, token := orgWithToken(t, b)
	rec := c.get("/advisor?job=serving&model=llama-3.1-8b&concurrency=600&tpot_ms=200&gpu=RTX3090&datacenter_only=off")
	wantStatus(t, rec, http.StatusOK)
	var multi int
	doc(t, rec).Find(`[data-testid=option-gpus]`).Each(func(_ int, s *goquery.Selection) {
		if strings.Contains(s.Text(), "×") {
			multi++
		}
	})
	if multi == 0 {
		t.Fatal("no option shows instances × GPUs")
	}
	// The API says the same in fields.
	_, got := apiCall(t, b, token, "/api/v1/advise", `{"job":"serving","model":"llama-3.1-8b","concurrency":600,"tpot_ms":200,"gpu":"RTX3090","datacenter_only":false}`)
	for _, o := range got["options"].([]any) {
		m := o.(map[string]any)
		if m["gpus"].(float64) != m["instances"].(float64)*m["gpus_per_instance"].(float64) || m["badge"] == nil {
			t.Errorf("option %v", m)
		}
	}
	// The memory fraction is editable: 0.95 of an 80 GB H100 less the 1 GB reserve is 75 GB usable.
	_, got = apiCall(t, b, token, "/api/v1/advise", `{"job":"serving","model":"llama-3.1-8b","concurrency":1,"gpu":"H100","provider":"aws","memory_fraction":0.95}`)
	if o := optionFor(t, got, "p5.4xlarge", "on-demand"); o["memory_available_gb"] != 75.0 || !strings.Contains(o["reason"].(string), "95% of 80 GB − 1 GB reserve") {
		t.Errorf("memory_fraction 0.95: %v", o)
	}
	rec = c.get("/advisor?job=serving&model=llama-3.1-8b&concurrency=1&gpu=H100&memory_fraction=0.5")
	if !strings.Contains(doc(t, rec).Find(`[data-testid=advice-winner]`).Text(), "50% of 80 GB") {
		t.Errorf("form memory_fraction not applied:\n%s", doc(t, rec).Find(`[data-testid=advice-winner]`).Text())
	}
	for _, body := range []string{`{"job":"serving","model":"llama-3.1-8b","concurrency":1,"memory_fraction":1.5}`,
		`{"job":"serving","model":"llama-3.1-8b","concurrency":1,"memory_fraction":"lots"}`} {
		if rec, _ := apiCall(t, b, token, "/api/v1/advise", body); rec.Code != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d", body, rec.Code)
		}
	}
}
