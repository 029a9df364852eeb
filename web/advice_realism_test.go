package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/burnrate/burnrate/advisor"
	"github.com/burnrate/burnrate/quantity"
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

// TestBreakEvenPricesATypedMix: a mix typed on the page is priced model by
// model, as `burnrate breakeven --usage` prices it (one parser for both),
// not the whole volume at the first model; a saved scenario keeps it.
func TestBreakEvenPricesATypedMix(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, _, c, _ := orgWithToken(t, b)
	const mix = "gpt-4o=1B/200M, gpt-4o-mini=2B/500M"
	usage, err := advisor.ParseUsage("--usage", mix)
	if err != nil {
		t.Fatal(err)
	}
	cli, _, err := advisor.BreakEven(ctx(), b.st, org.ID, advisor.BreakEvenBody{Usage: usage}, testNow)
	if err != nil || cli.Mix == nil {
		t.Fatalf("the CLI's break-even of the mix: %v", err)
	}
	want := quantity.FormatMoney(cli.Mix.APICostMonthUSD, "USD")
	if want != "5,100.00 USD" {
		t.Fatalf("the mix costs %s at list prices, want 4,500 + 600", want)
	}
	// The models typed with the volume would price it all at gpt-4o.
	d := doc(t, c.get("/breakeven?models=gpt-4o,gpt-4o-mini&input_tokens=3e9&output_tokens=7e8&usage="+url.QueryEscape(mix)))
	if got := d.Find(`[data-testid=api-cost]`).Text(); got != want {
		t.Errorf("the page's API cost of the mix = %q, want the CLI's %q", got, want)
	}
	if got := d.Find(`[data-testid=mix-api]`).Text(); got != want {
		t.Errorf("the mix table's total = %q, want %q", got, want)
	}
	if d.Find(`[data-testid=mix-row]`).Length() != 2 {
		t.Errorf("mix rows: %q", d.Find(`[data-testid=mix-table]`).Text())
	}
	rec := c.get("/breakeven?usage=" + url.QueryEscape("gpt-4o=lots/200M"))
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	if msg := doc(t, rec).Find(`[data-testid=breakeven-errors]`).Text(); !strings.Contains(msg, "Usage mix gpt-4o input") {
		t.Errorf("a bad mix: %q", msg)
	}

	c.get("/breakeven")
	form := url.Values{"name": {"Two models"}, "usage": {mix}}
	rec = c.post("/breakeven/scenarios", form)
	wantStatus(t, rec, http.StatusSeeOther)
	d = doc(t, c.get(rec.Header().Get("Location")))
	if v, _ := d.Find(`[data-testid=usage-mix]`).Attr("value"); v != "gpt-4o=1000000000/200000000, gpt-4o-mini=2000000000/500000000" {
		t.Errorf("the saved scenario's mix = %q", v)
	}
	if got := d.Find(`[data-testid=api-cost]`).Text(); got != want {
		t.Errorf("the saved scenario's API cost = %q, want %q", got, want)
	}
}
