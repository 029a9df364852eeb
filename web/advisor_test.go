package web_test

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/access"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// postFile submits a multipart form with one file field, with the CSRF
// token of the last page seen.
func (c *client) postFile(path, field, name string, content []byte, form url.Values) *httptest.ResponseRecorder {
	c.t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	_ = w.WriteField("_csrf", c.csrf)
	for k, vs := range form {
		for _, v := range vs {
			_ = w.WriteField(k, v)
		}
	}
	fw, _ := w.CreateFormFile(field, name)
	_, _ = fw.Write(content)
	_ = w.Close()
	req := httptest.NewRequest(http.MethodPost, path, &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	return c.do(req)
}

// htmx makes a GET as htmx does for a fragment.
func (c *client) htmx(path string) *httptest.ResponseRecorder {
	c.t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("HX-Request", "true")
	return c.do(req)
}

func apiCall(t *testing.T, b *bundle, token, path, body string) (*httptest.ResponseRecorder, map[string]any) {
	t.Helper()
	rec := httptest.NewRecorder()
	b.srv.ServeHTTP(rec, apiRequest(http.MethodPost, path, token, body))
	var got map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatalf("%s: %v: %s", path, err, rec.Body)
	}
	return rec, got
}

// orgWithToken is an org, its owner, logged-in browser and an API token.
func orgWithToken(t *testing.T, b *bundle) (store.Org, store.User, *client, string) {
	t.Helper()
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	_, token, err := b.st.CreateAPIToken(ctx(), org.ID, "test", owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	c := b.client(t)
	c.login(owner.Email)
	return org, owner, c, token
}

func TestAdvisorPage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, _, c, _ := orgWithToken(t, b)

	t.Run("ServingLinkNamingOnlyTheModel", func(t *testing.T) {
		rec := c.get("/advisor?job=serving&model=llama-3.1-8b")
		wantStatus(t, rec, http.StatusOK)
		d := doc(t, rec)
		if d.Find(`[data-testid=option-row]`).Length() == 0 || d.Find(`input[name=concurrency][value="16"]`).Length() != 1 {
			t.Fatalf("serving with no load named: no options, or the assumed concurrency is not shown")
		}
		// A form submitted with the field emptied still says what is missing.
		rec = c.get("/advisor?job=serving&model=llama-3.1-8b&concurrency=&target_tokens_per_s=")
		wantStatus(t, rec, http.StatusUnprocessableEntity)
	})

	t.Run("FullPageWithOptionsExcludedAndChart", func(t *testing.T) {
		rec := c.get("/advisor")
		wantStatus(t, rec, http.StatusOK)
		d := doc(t, rec)
		if n := d.Find(`[data-testid=option-row]`).Length(); n == 0 {
			t.Fatal("no options")
		}
		if n := d.Find(`[data-testid=excluded-row]`).Length(); n == 0 {
			t.Fatal("no excluded options")
		}
		for _, sel := range []string{`[data-testid=advice-chart]`, `script#advice-chart-data`, `script[src^="/static/vendor/echarts.min.js"]`, `[data-testid=advice-summary]`, `[data-testid=winner-reason]`, `input[name=mfu][value="0"]`, `input[name=global_batch_tokens][value="4000000"]`, `input[name=spot_interruptions_per_hour]`} {
			if d.Find(sel).Length() == 0 {
				t.Errorf("page lacks %s", sel)
			}
		}
		if src := d.Find(`[data-testid=price-source]`).Text(); !strings.Contains(src, "SkyPilot") || !strings.Contains(src, "2026-05-20") {
			t.Errorf("price source line = %q", src)
		}
		var chart struct {
			Series []struct{ Data []float64 }
		}
		if err := json.Unmarshal([]byte(d.Find(`script#advice-chart-data`).Text()), &chart); err != nil || len(chart.Series) != 2 || len(chart.Series[0].Data) == 0 {
			t.Fatalf("chart data = %+v (%v)", chart, err)
		}
	})

	t.Run("HTMXGetsAFragment", func(t *testing.T) {
		rec := c.htmx("/advisor?job=qlora&model=llama-3.1-70b&tokens=100M&seq_len=2048")
		wantStatus(t, rec, http.StatusOK)
		if strings.Contains(rec.Body.String(), "<html") {
			t.Fatal("htmx request got a whole page")
		}
		d := doc(t, rec)
		if d.Find(`#advice-results [data-testid=option-row]`).Length() == 0 {
			t.Fatalf("fragment has no options:\n%.2000s", rec.Body)
		}
	})

	t.Run("BadInputIs422WithReasons", func(t *testing.T) {
		rec := c.htmx("/advisor?job=lora&model=gpt-17&tokens=lots")
		wantStatus(t, rec, http.StatusUnprocessableEntity)
		if msg := doc(t, rec).Find(`[data-testid=advice-errors]`).Text(); !strings.Contains(msg, `"lots" is not a count`) {
			t.Fatalf("errors = %q", msg)
		}
		rec = c.get("/advisor?job=lora&model=gpt-17&tokens=1B")
		wantStatus(t, rec, http.StatusUnprocessableEntity)
		if msg := doc(t, rec).Find(`[data-testid=advice-errors]`).Text(); !strings.Contains(msg, "unknown model") {
			t.Fatalf("errors = %q", msg)
		}
	})
}

func TestAPIAdvise(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, _, _, token := orgWithToken(t, b)

	rec, got := apiCall(t, b, token, "/api/v1/advise", `{"job":"lora","model":"llama-3.1-8b","tokens":1e9,"provider":"aws,lambda","spot":true,"mfu":0.35}`)
	wantStatus(t, rec, http.StatusOK)
	opts, _ := got["options"].([]any)
	if len(opts) < 2 {
		t.Fatalf("options = %v", got["options"])
	}
	keys := []string{"provider", "instance_type", "gpu", "gpus", "pricing", "hours", "gpu_hours", "cost_usd", "usd_per_mtok", "memory_needed_gb", "memory_available_gb", "reason"}
	prev := decimal.Zero
	spot := false
	for i, o := range opts {
		m := o.(map[string]any)
		for _, k := range keys {
			if _, ok := m[k]; !ok {
				t.Fatalf("option %d lacks %q: %v", i, k, m)
			}
		}
		if p := m["provider"]; p != "aws" && p != "lambda" {
			t.Fatalf("option %d from provider %v", i, p)
		}
		spot = spot || m["pricing"] == "spot"
		cost, err := decimal.NewFromString(m["cost_usd"].(string)) // money is a JSON string
		if err != nil || cost.LessThan(prev) {
			t.Fatalf("option %d cost %v after %v: not cheapest first", i, m["cost_usd"], prev)
		}
		prev = cost
	}
	if !spot {
		t.Error("spot allowed but no spot option")
	}
	ex, _ := got["excluded"].([]any)
	if len(ex) == 0 {
		t.Fatal("no excluded")
	}
	for _, k := range []string{"gpu", "instance_type", "reason"} {
		if _, ok := ex[0].(map[string]any)[k]; !ok {
			t.Fatalf("excluded lacks %q", k)
		}
	}
	if a, _ := got["assumptions"].(map[string]any); a["mfu"] != 0.35 || a["eta"] != 0.7 {
		t.Fatalf("assumptions = %v", got["assumptions"])
	}

	for name, body := range map[string]string{
		"UnknownJob":   `{"job":"juggling","model":"llama-3.1-8b","tokens":1e9}`,
		"UnknownModel": `{"job":"lora","model":"gpt-17","tokens":1e9}`,
		"NoTokens":     `{"job":"batch-inference","model":"llama-3.1-8b"}`,
		"Typo":         `{"job":"lora","modle":"llama-3.1-8b","tokens":1e9}`,
		"NotJSON":      `job=lora`,
		"BadMFU":       `{"job":"lora","model":"llama-3.1-8b","tokens":1e9,"mfu":3}`,
		"BadSource":    `{"job":"lora","model":"llama-3.1-8b","tokens":1e9,"price_source":"rumour"}`,
	} {
		rec, got := apiCall(t, b, token, "/api/v1/advise", body)
		if rec.Code != http.StatusUnprocessableEntity || got["error"] == "" || got["error"] == nil {
			t.Errorf("%s: %d %s, want 422 with an error", name, rec.Code, rec.Body)
		}
	}
	rec = httptest.NewRecorder()
	b.srv.ServeHTTP(rec, apiRequest(http.MethodPost, "/api/v1/advise", "", `{}`))
	wantStatus(t, rec, http.StatusUnauthorized)
}

// optionFor finds the option of one instance type and pricing in an advise
// response.
func optionFor(t *testing.T, got map[string]any, instance, pricing string) map[string]any {
	t.Helper()
	for _, o := range got["options"].([]any) {
		m := o.(map[string]any)
		if m["instance_type"] == instance && m["pricing"] == pricing {
			return m
		}
	}
	t.Fatalf("no %s %s option in %v", pricing, instance, got["options"])
	return nil
}

func TestGPUPriceOverrideTakesPrecedence(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, _, c, token := orgWithToken(t, b)

	c.get("/prices")
	rec := c.postFile("/prices/gpu/upload", "file", "bad.csv", []byte("provider,instance_type,price_on_demand_usd_hr\naws,p5.48xlarge,8,00\naws,p4d.24xlarge,twelve\n"), nil)
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	if msg := doc(t, rec).Find(`[data-testid=form-error]`).Text(); !strings.Contains(msg, "line 3, column price_on_demand_usd_hr") {
		t.Fatalf("upload error = %q", msg)
	}
	if os, _ := b.st.GPUPriceOverrides(ctx(), org.ID); len(os) != 0 {
		t.Fatalf("a bad file wrote %d rows", len(os))
	}

	rec = c.postFile("/prices/gpu/upload", "file", "negotiated.csv", []byte("provider,instance_type,price_on_demand_usd_hr,price_spot_usd_hr\naws,p5.48xlarge,8.00,\nlambda,gpu_1x_h100_sxm5,1.10,\n"), nil)
	wantStatus(t, rec, http.StatusSeeOther)
	rec = c.get("/prices")
	if n := doc(t, rec).Find(`[data-testid=gpu-override-row]`).Length(); n != 2 {
		t.Fatalf("override rows = %d, want 2", n)
	}

	// Hand-checked (docs/advisor.md, "Training time"): a token of Llama 3.1 8B at 4,096 tokens
	// takes 6·8.03e9/(989e12·0.36) + 12·32·4096·4096/(989e12·0.36·0.4) = 180.56 µs on an H100; on 8
	// H100s each takes 500k tokens of the 4M batch a step: 90.28 s + 0.1 s, × 250 steps = 22,595 s =
	// 6.2769 h. At the negotiated $8.00 per instance-hour that is $50.21; at the catalog's $55.04,
	// $345.48.
	body := `{"job":"full-finetune","model":"llama-3.1-8b","tokens":1e9,"gpu":"H100","provider":"aws","price_source":"%s"}`
	_, got := apiCall(t, b, token, "/api/v1/advise", strings.Replace(body, "%s", "overrides", 1))
	if o := optionFor(t, got, "p5.48xlarge", "on-demand"); o["cost_usd"] != "50.21" || !strings.Contains(o["reason"].(string), "your price") {
		t.Fatalf("with overrides p5.48xlarge = %v", o)
	}
	_, got = apiCall(t, b, token, "/api/v1/advise", strings.Replace(body, "%s", "catalog", 1))
	if o := optionFor(t, got, "p5.48xlarge", "on-demand"); o["cost_usd"] != "345.48" {
		t.Fatalf("catalog p5.48xlarge = %v", o)
	}

	// Edit the row in place, then delete it.
	os, _ := b.st.GPUPriceOverrides(ctx(), org.ID)
	var p5 store.GPUPriceOverride
	for _, o := range os {
		if o.InstanceType == "p5.48xlarge" {
			p5 = o
		}
	}
	rec = c.post("/prices/gpu/"+itoa(p5.ID), url.Values{"on_demand": {"16"}, "spot": {""}, "note": {"2026 EDP"}})
	wantStatus(t, rec, http.StatusSeeOther)
	_, got = apiCall(t, b, token, "/api/v1/advise", strings.Replace(body, "%s", "overrides", 1))
	if o := optionFor(t, got, "p5.48xlarge", "on-demand"); o["cost_usd"] != "100.43" { // 6.2769 h × $16
		t.Fatalf("after edit p5.48xlarge = %v", o)
	}
	rec = c.post("/prices/gpu/"+itoa(p5.ID), url.Values{"on_demand": {"-1"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	rec = c.post("/prices/gpu/"+itoa(p5.ID)+"/delete", nil)
	wantStatus(t, rec, http.StatusSeeOther)
	_, got = apiCall(t, b, token, "/api/v1/advise", strings.Replace(body, "%s", "overrides", 1))
	if o := optionFor(t, got, "p5.48xlarge", "on-demand"); o["cost_usd"] != "345.48" {
		t.Fatalf("after delete p5.48xlarge = %v", o)
	}

	// A single added row for an instance the catalog does not know needs its GPU.
	rec = c.post("/prices/gpu", url.Values{"provider": {"coreweave"}, "instance_type": {"h100-8x"}, "on_demand": {"20"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	rec = c.post("/prices/gpu", url.Values{"provider": {"coreweave"}, "instance_type": {"h100-8x"}, "gpu": {"H100"}, "gpu_count": {"8"}, "on_demand": {"20"}})
	wantStatus(t, rec, http.StatusSeeOther)
	_, got = apiCall(t, b, token, "/api/v1/advise", `{"job":"full-finetune","model":"llama-3.1-8b","tokens":1e9,"provider":"coreweave"}`)
	if o := optionFor(t, got, "h100-8x", "on-demand"); o["cost_usd"] != "125.54" { // 6.2769 h × $20
		t.Fatalf("coreweave h100-8x = %v", o)
	}
}

// insertImport records a finished import for raw-SQL fixtures (charges
// reference one).
func insertImport(t *testing.T, st *store.Store, orgID int64) int64 {
	t.Helper()
	var id int64
	err := storetest.Pool(st).QueryRow(ctx(), `
		INSERT INTO imports (org_id, file_name, sha256, size_bytes, source, status)
		VALUES ($1, 'fixture.csv', decode(md5(random()::text || clock_timestamp()::text), 'hex'), 1, 'focus', 'succeeded')
		RETURNING id`, orgID).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// charge is the part of a charges row the pricing queries read.
type charge struct {
	provider, instance, gpu, currency, model string
	start                                    time.Time
	period                                   time.Duration
	billed                                   string
	gpuCount, gpuHours                       string
	in, out, cached                          int64
}

func insertCharges(t *testing.T, st *store.Store, orgID, importID int64, cs []charge) {
	t.Helper()
	for i, ch := range cs {
		if ch.period == 0 {
			ch.period = time.Hour
		}
		if ch.gpuCount == "" {
			ch.gpuCount = "0"
		}
		if ch.gpuHours == "" {
			ch.gpuHours = "0"
		}
		_, err := storetest.Pool(st).Exec(ctx(), `
			INSERT INTO charges (org_id, import_id, line, source, provider_name, service_name, service_category, sku,
				resource_id, region_id, sub_account_id, charge_category, charge_period_start, charge_period_end,
				billed_cost, effective_cost, list_cost, billing_currency, consumed_quantity, consumed_unit, tags, team,
				x_instance_type, x_gpu_type, x_gpu_count, x_gpu_hours, x_model, x_input_tokens, x_output_tokens,
				x_cached_tokens, x_requests, x_priced_by_us, billing_account_id, billing_period_start, dedupe_key)
			VALUES ($1, $2, $3, 'focus', $4, 'svc', 'Compute', 'sku', 'r', 'us-east-1', 'acct', 'Usage', $5, $6,
				$7::numeric, $7::numeric, $7::numeric, $8, 1, 'Hours', NULL, '', $9, $10, $11::numeric, $12::numeric,
				$13, $14, $15, $16, 1, false, 'ba', NULL, '')`,
			orgID, importID, i+2, ch.provider, ch.start, ch.start.Add(ch.period), ch.billed, ch.currency,
			ch.instance, ch.gpu, ch.gpuCount, ch.gpuHours, ch.model, ch.in, ch.out, ch.cached)
		if err != nil {
			t.Fatalf("charge %d: %v", i, err)
		}
	}
	// The rows went in behind the store: their hours for the peak factor
	// (llm_hourly) are counted again from the org's charges.
	if _, err := storetest.Pool(st).Exec(ctx(), `DELETE FROM llm_hourly WHERE org_id = $1`, orgID); err != nil {
		t.Fatalf("llm hours: %v", err)
	}
	_, err := storetest.Pool(st).Exec(ctx(), `
		INSERT INTO llm_hourly (org_id, hour, tokens, rows)
		SELECT org_id, date_trunc('hour', charge_period_start, 'UTC'), sum(x_input_tokens + x_output_tokens)::bigint, count(*)
		FROM charges
		WHERE org_id = $1 AND x_model <> '' AND charge_period_end - charge_period_start <= interval '1 hour'
		GROUP BY 1, 2`, orgID)
	if err != nil {
		t.Fatalf("llm hours: %v", err)
	}
}

func TestPaidRatesFromBills(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, _, c, token := orgWithToken(t, b)
	imp := insertImport(t, b.st, org.ID)
	now := testNow.UTC().Truncate(time.Hour)
	insertCharges(t, b.st, org.ID, imp, []charge{
		// 150 + 90 USD over 100 + 50 GPU-hours: $1.60 per GPU-hour.
		{provider: "AWS", instance: "p4d.24xlarge", gpu: "A100", currency: "USD", start: now.Add(-48 * time.Hour), period: 12*time.Hour + 30*time.Minute, billed: "150.00", gpuCount: "8", gpuHours: "100"},
		{provider: "AWS", instance: "p4d.24xlarge", gpu: "A100", currency: "USD", start: now.Add(-24 * time.Hour), period: 6*time.Hour + 15*time.Minute, billed: "90.00", gpuCount: "8", gpuHours: "50"},
		// A credit without GPU-hours does not lower the rate.
		{provider: "AWS", instance: "p4d.24xlarge", gpu: "A100", currency: "USD", start: now.Add(-24 * time.Hour), billed: "-40.00"},
		// EUR is shown, never used as a USD price.
		{provider: "Microsoft", instance: "Standard_NC24ads_A100_v4", gpu: "A100-80GB", currency: "EUR", start: now.Add(-24 * time.Hour), billed: "30.00", gpuCount: "1", gpuHours: "10"},
		// Outside the 90-day window.
		{provider: "AWS", instance: "p4d.24xlarge", gpu: "A100", currency: "USD", start: now.AddDate(0, 0, -120), billed: "9999", gpuCount: "8", gpuHours: "1"},
	})

	rates, err := b.st.PaidGPURates(ctx(), org.ID, now.AddDate(0, 0, -90), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(rates) != 2 || rates[0].PerGPUHour.String() != "1.6" || rates[0].GPUHours.String() != "150" || rates[1].Currency != "EUR" {
		t.Fatalf("rates = %+v", rates)
	}

	rec := c.get("/prices")
	wantStatus(t, rec, http.StatusOK)
	d := doc(t, rec)
	if got := d.Find(`[data-testid=paid-rate]`).First().Text(); got != "1.6000 USD" {
		t.Fatalf("paid rate shown = %q", got)
	}
	if !strings.Contains(d.Find(`[data-testid=paid-rates]`).Text(), "not usable as a price (not USD)") {
		t.Fatal("EUR rate not marked unusable")
	}

	// $1.60 × 8 GPUs = $12.80 per p4d.24xlarge hour, against the catalog's $21.96.
	body := `{"job":"lora","model":"llama-3.1-8b","tokens":1e9,"gpu":"A100","provider":"aws","price_source":"%s"}`
	_, got := apiCall(t, b, token, "/api/v1/advise", strings.Replace(body, "%s", "paid", 1))
	if o := optionFor(t, got, "p4d.24xlarge", "on-demand"); !strings.Contains(o["reason"].(string), "12.80 USD/h") {
		t.Fatalf("paid p4d.24xlarge = %v", o["reason"])
	}
	_, got = apiCall(t, b, token, "/api/v1/advise", strings.Replace(body, "%s", "overrides", 1))
	if o := optionFor(t, got, "p4d.24xlarge", "on-demand"); !strings.Contains(o["reason"].(string), "21.96 USD/h") {
		t.Fatalf("catalog p4d.24xlarge = %v", o["reason"])
	}
}

// insertDailySpend adds an LLM rollup row, and the rollups derived from
// daily_spend again.
func insertDailySpend(t *testing.T, st *store.Store, orgID int64, day time.Time, model string, in, out, cached int64, billed string) {
	t.Helper()
	_, err := storetest.Pool(st).Exec(ctx(), `
		INSERT INTO daily_spend (org_id, day, source, provider, service, sub_account, team, model, charge_category,
			gpu_type, currency, billed, effective, gpu_hours, input_tokens, output_tokens, cached_tokens, requests, rows)
		VALUES ($1, $2, 'openai-usage', 'OpenAI', 'api', 'proj', '', $3, 'Usage', '', 'USD', $4::numeric, $4::numeric, 0, $5, $6, $7, 10, 1)`,
		orgID, day.Format(time.DateOnly), model, billed, in, out, cached)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.RebuildSpendRollups(ctx(), orgID); err != nil {
		t.Fatal(err)
	}
}

func TestBreakEvenDefaultsFromUsage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, _, c, _ := orgWithToken(t, b)
	today := testNow.UTC().Truncate(24 * time.Hour)
	// Input tokens include cached ones (ingest's convention).
	insertDailySpend(t, b.st, org.ID, today.AddDate(0, 0, -1), "gpt-4.1-mini", 200_000_000, 60_000_000, 50_000_000, "100")
	insertDailySpend(t, b.st, org.ID, today.AddDate(0, 0, -10), "gpt-4.1-mini", 100_000_000, 40_000_000, 0, "50")
	insertDailySpend(t, b.st, org.ID, today.AddDate(0, 0, -3), "claude-haiku-4-5", 30_000_000, 5_000_000, 10_000_000, "30")
	insertDailySpend(t, b.st, org.ID, today.AddDate(0, 0, -45), "gpt-4.1-mini", 999_000_000, 999_000_000, 0, "999") // too old
	// Hourly request logs: 3 hours with data over a 4-hour span, busiest 600
	// tokens; mean = 1,000 / 4 = 250 per hour, so the peak factor is 2.4.
	imp := insertImport(t, b.st, org.ID)
	h := today.Add(-20 * time.Hour)
	insertCharges(t, b.st, org.ID, imp, []charge{
		{provider: "OpenAI", model: "gpt-4.1-mini", currency: "USD", start: h, period: time.Minute, billed: "0.01", in: 100, out: 50},
		{provider: "OpenAI", model: "gpt-4.1-mini", currency: "USD", start: h.Add(2 * time.Hour), period: time.Minute, billed: "0.01", in: 400, out: 200},
		{provider: "OpenAI", model: "gpt-4.1-mini", currency: "USD", start: h.Add(3 * time.Hour), period: time.Minute, billed: "0.01", in: 200, out: 50},
		// A daily bucket cannot show an hourly peak: left out.
		{provider: "OpenAI", model: "gpt-4.1-mini", currency: "USD", start: h, period: 24 * time.Hour, billed: "1", in: 1_000_000, out: 1},
	})

	rec := c.get("/breakeven")
	wantStatus(t, rec, http.StatusOK)
	d := doc(t, rec)
	val := func(name string) string {
		v, _ := d.Find(`#breakeven-form [name=` + name + `]`).Attr("value")
		return v
	}
	// The largest-spend model, on its own tokens: gpt-4.1-mini's uncached input 300M − 50M cached,
	// 100M output ($100 + $5 + $160 = $265, against claude-haiku-4-5's $46).
	if val("input_tokens") != "250000000" || val("cached_tokens") != "50000000" || val("output_tokens") != "100000000" {
		t.Fatalf("defaults: input %s cached %s output %s", val("input_tokens"), val("cached_tokens"), val("output_tokens"))
	}
	if val("models") != "gpt-4.1-mini" || val("peak_factor") != "2.40" {
		t.Fatalf("defaults: models %q peak %q", val("models"), val("peak_factor"))
	}
	if n := d.Find(`[data-testid=usage-row]`).Length(); n != 2 {
		t.Fatalf("usage rows = %d, want 2", n)
	}
	if v := d.Find(`[data-testid=verdict]`).Text(); v == "" {
		t.Fatal("no verdict")
	}
	for _, sel := range []string{`[data-testid=breakeven-chart]`, `script#breakeven-chart-data`, `[data-testid=api-cost]`, `[data-testid=self-host-cost]`, `[data-testid=break-even]`} {
		if d.Find(sel).Length() == 0 {
			t.Errorf("page lacks %s", sel)
		}
	}
	var chart struct {
		Series []struct {
			Name     string
			Data     [][2]float64
			MarkLine *struct{ Data []struct{ XAxis float64 } }
		}
	}
	if err := json.Unmarshal([]byte(d.Find(`script#breakeven-chart-data`).Text()), &chart); err != nil {
		t.Fatal(err)
	}
	last := chart.Series[len(chart.Series)-1]
	if len(chart.Series) != 2 || last.MarkLine == nil || last.MarkLine.Data[0].XAxis != 400e6 {
		t.Fatalf("chart series = %+v", chart.Series)
	}

	// Several API models at once, spot, as a fragment.
	rec = c.htmx("/breakeven?models=gpt-4.1-mini,claude-haiku-4.5,deepseek-chat&input_tokens=1B&output_tokens=300M&pricing=spot&gpu=H100")
	wantStatus(t, rec, http.StatusOK)
	if strings.Contains(rec.Body.String(), "<html") {
		t.Fatal("htmx request got a whole page")
	}
	if n := doc(t, rec).Find(`[data-testid=model-row]`).Length(); n != 3 {
		t.Fatalf("model rows = %d:\n%.3000s", n, rec.Body)
	}
	rec = c.htmx("/breakeven?models=gpt-17&input_tokens=1B&output_tokens=300M")
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	if !strings.Contains(doc(t, rec).Find(`[data-testid=breakeven-errors]`).Text(), "not in the price table") {
		t.Fatalf("unknown model error:\n%s", rec.Body)
	}
}

func TestAPIBreakEven(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, _, c, token := orgWithToken(t, b)

	body := `{"model":"gpt-4.1-mini","open_model":"llama-3.1-8b","input_tokens":3e8,"output_tokens":1e8,"gpu":"H100","gpu_price":"2.99","price_source":"%s"}`
	rec, got := apiCall(t, b, token, "/api/v1/breakeven", strings.Replace(body, "%s", "overrides", 1))
	wantStatus(t, rec, http.StatusOK)
	for _, k := range []string{"api_cost_month_usd", "self_host_cost_month_usd", "gpus_needed", "break_even_tokens_per_month", "utilization_at_break_even", "verdict", "curve"} {
		if _, ok := got[k]; !ok {
			t.Fatalf("result lacks %q: %v", k, got)
		}
	}
	// gpt-4.1-mini at $0.40 in / $1.60 out per 1M: 300·0.4 + 100·1.6 = $280;
	// one H100 at $2.99 × 730 h = $2,182.70.
	if got["api_cost_month_usd"] != "280" || got["self_host_cost_month_usd"] != "2182.7" || got["gpus_needed"] != 1.0 {
		t.Fatalf("costs = %v / %v / %v", got["api_cost_month_usd"], got["self_host_cost_month_usd"], got["gpus_needed"])
	}
	pt := got["curve"].([]any)[0].(map[string]any)
	for _, k := range []string{"tokens_per_month", "api_usd", "self_host_usd"} {
		if _, ok := pt[k]; !ok {
			t.Fatalf("curve point lacks %q", k)
		}
	}

	// A negotiated LLM price wins: $0.10 in / $0.40 out gives 30 + 40 = $70.
	c.get("/prices")
	rec = c.post("/prices/llm", url.Values{"model": {"gpt-4.1-mini"}, "provider": {"openai"}, "input": {"0.10"}, "output": {"0.40"}})
	wantStatus(t, rec, http.StatusSeeOther)
	_, got = apiCall(t, b, token, "/api/v1/breakeven", strings.Replace(body, "%s", "overrides", 1))
	if got["api_cost_month_usd"] != "70" {
		t.Fatalf("with override api cost = %v", got["api_cost_month_usd"])
	}
	_, got = apiCall(t, b, token, "/api/v1/breakeven", strings.Replace(body, "%s", "catalog", 1))
	if got["api_cost_month_usd"] != "280" {
		t.Fatalf("catalog api cost = %v", got["api_cost_month_usd"])
	}

	for name, body := range map[string]string{
		"NoModel":      `{"input_tokens":1e6,"output_tokens":1e6}`,
		"UnknownModel": `{"model":"gpt-17","input_tokens":1e6,"output_tokens":1e6}`,
		"Negative":     `{"model":"gpt-4.1-mini","input_tokens":-5,"output_tokens":1e6}`,
		"BadUtil":      `{"model":"gpt-4.1-mini","input_tokens":1e6,"output_tokens":1e6,"utilization":1.5}`,
		"Typo":         `{"model":"gpt-4.1-mini","input_tokenz":1e6}`,
	} {
		rec, got := apiCall(t, b, token, "/api/v1/breakeven", body)
		if rec.Code != http.StatusUnprocessableEntity || got["error"] == nil {
			t.Errorf("%s: %d %s, want 422 with an error", name, rec.Code, rec.Body)
		}
	}
}

func TestScenarios(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, _ := storetest.Org(t, b.st, storetest.OrgOpts{})
	member := storetest.Member(t, b.st, org, access.Member)
	viewer := storetest.Member(t, b.st, org, access.Viewer)
	mc := b.client(t)
	mc.login(member.Email)

	form := url.Values{"name": {"Support bot on H100"}, "models": {"gpt-4.1-mini, claude-haiku-4.5"}, "input_tokens": {"2B"},
		"output_tokens": {"500M"}, "cached_tokens": {"0"}, "open_model": {"llama-3.1-8b"}, "precision": {"bf16"}, "gpu": {"H100"},
		"pricing": {"spot"}, "utilization": {"0.6"}, "peak_factor": {"3"}, "overhead_month_usd": {"500"}, "price_source": {"overrides"}}
	mc.get("/breakeven")
	rec := mc.post("/breakeven/scenarios", url.Values{"name": {""}, "models": {"gpt-4.1-mini"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	rec = mc.post("/breakeven/scenarios", form)
	wantStatus(t, rec, http.StatusSeeOther)
	loc := rec.Header().Get("Location")
	if !strings.HasPrefix(loc, "/breakeven/scenarios/") {
		t.Fatalf("Location = %q", loc)
	}
	id, _ := strconv.ParseInt(strings.TrimPrefix(loc, "/breakeven/scenarios/"), 10, 64)
	sc, err := b.st.Scenario(ctx(), org.ID, id)
	if err != nil || sc.Kind != store.ScenarioBreakEven || !strings.Contains(string(sc.Inputs), `"input_tokens": 2000000000`) && !strings.Contains(string(sc.Inputs), `"input_tokens":2000000000`) {
		t.Fatalf("saved %+v (%v): %s", sc, err, sc.Inputs)
	}

	// Anyone in the org opens it by URL, viewers included.
	vc := b.client(t)
	vc.login(viewer.Email)
	rec = vc.get(loc)
	wantStatus(t, rec, http.StatusOK)
	d := doc(t, rec)
	if !strings.Contains(d.Find(`[data-testid=scenario-name]`).Text(), "Support bot on H100") {
		t.Fatal("scenario name not shown")
	}
	val := func(name string) string {
		v, _ := d.Find(`#breakeven-form [name=` + name + `]`).Attr("value")
		return v
	}
	if val("input_tokens") != "2000000000" || val("models") != "gpt-4.1-mini, claude-haiku-4.5" || val("overhead_month_usd") != "500" {
		t.Fatalf("reopened form: input %q models %q overhead %q", val("input_tokens"), val("models"), val("overhead_month_usd"))
	}
	if _, ok := d.Find(`input[name=pricing][value=spot]`).Attr("checked"); !ok {
		t.Fatal("spot not kept")
	}
	if d.Find(`[data-testid=scenario-form]`).Length() != 0 {
		t.Fatal("viewer is offered the save form")
	}
	rec = vc.get("/breakeven")
	if n := doc(t, rec).Find(`[data-testid=scenario-row]`).Length(); n != 1 {
		t.Fatalf("listed scenarios = %d", n)
	}
	// Viewers look but do not save or delete.
	rec = vc.post("/breakeven/scenarios", form)
	wantStatus(t, rec, http.StatusForbidden)
	rec = vc.post(loc+"/delete", nil)
	wantStatus(t, rec, http.StatusForbidden)

	rec = mc.post(loc+"/delete", nil)
	wantStatus(t, rec, http.StatusSeeOther)
	rec = mc.get(loc)
	wantStatus(t, rec, http.StatusNotFound)
}

func TestPricesRoles(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	viewer := storetest.Member(t, b.st, org, access.Viewer)
	member := storetest.Member(t, b.st, org, access.Member)
	if _, err := b.st.UpsertGPUPriceOverrides(ctx(), org.ID, owner.ID, []store.GPUPriceOverrideInput{{
		Provider: "aws", InstanceType: "p5.48xlarge", OnDemand: ptr(decimal.RequireFromString("8")),
	}}); err != nil {
		t.Fatal(err)
	}
	csv := []byte("provider,instance_type,price_on_demand_usd_hr\naws,p4d.24xlarge,10\n")
	for _, u := range []store.User{viewer, member} {
		c := b.client(t)
		c.login(u.Email)
		rec := c.get("/prices")
		wantStatus(t, rec, http.StatusOK)
		d := doc(t, rec)
		if d.Find(`[data-testid=gpu-override-row]`).Length() != 1 || d.Find(`[data-testid=gpu-upload-form]`).Length() != 0 {
			t.Fatalf("%s sees rows %d, upload form %d", u.Email, d.Find(`[data-testid=gpu-override-row]`).Length(), d.Find(`[data-testid=gpu-upload-form]`).Length())
		}
		rec = c.postFile("/prices/gpu/upload", "file", "p.csv", csv, nil)
		wantStatus(t, rec, http.StatusForbidden)
		rec = c.post("/prices/llm", url.Values{"model": {"gpt-4.1-mini"}, "input": {"1"}, "output": {"1"}})
		wantStatus(t, rec, http.StatusForbidden)
	}
	if os, _ := b.st.GPUPriceOverrides(ctx(), org.ID); len(os) != 1 {
		t.Fatalf("overrides = %d", len(os))
	}
}

func ptr[T any](v T) *T { return &v }
