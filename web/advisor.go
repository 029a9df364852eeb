package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/burnrate/burnrate/advisor"
	"github.com/burnrate/burnrate/pricing"
	"github.com/burnrate/burnrate/quantity"
	"github.com/burnrate/burnrate/web/views"
)

// handleAdvisor shows the GPU advisor. The form is a GET of a pure
// computation, so its URL is shareable and needs no CSRF token; htmx asks
// for the results fragment alone as the inputs change.
func (s *Server) handleAdvisor(c echo.Context) error {
	defaults := advisorDefaults()
	if _, asked := c.QueryParams()["job"]; asked {
		// The example job, 1B tokens included, fills the page opened bare;
		// a question asked without its tokens gets the message naming the
		// field (advisor.AdviseBody), never the example's 1B.
		defaults.Del("tokens")
	}
	form := withDefaults(c.QueryParams(), defaults)
	if _, asked := form["concurrency"]; !asked && form.Get("job") == string(pricing.JobServing) && form.Get("target_tokens_per_s") == "" && form.Get("requests_per_s") == "" {
		// Serving is sized by the sequences in flight: a link that names
		// only the job and the model gets a common serving load, shown in
		// the form, rather than an error about a field it never saw.
		form.Set("concurrency", defaultServingConcurrency)
	}
	rememberDatacenterOnly(c, form)
	v, err := s.adviceView(c, form)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if len(v.Errors) > 0 {
		status = http.StatusUnprocessableEntity
	}
	if isHTMX(c) {
		// While someone types (app.js marks those requests), a form still
		// half filled in keeps the last results rather than showing
		// errors; submitting it shows them.
		if len(v.Errors) > 0 && c.Request().Header.Get("X-Live-Preview") == "1" {
			return c.NoContent(http.StatusNoContent)
		}
		return render(c, status, views.AdviceResults(v))
	}
	return render(c, status, views.AdvisorPage(s.shell(c, "GPU advisor", "advisor"), v))
}

// decodeJSON reads a request body strictly: unknown fields are typos the
// caller wants to hear about.
func decodeJSON(c echo.Context, v any) error {
	raw, err := readJSON(c)
	if err != nil {
		var he *echo.HTTPError
		if errors.As(err, &he) {
			return err
		}
		return advisor.BadInput("body: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		var qe *quantity.Error
		switch {
		case errors.As(err, &qe):
			return err // 422 naming the field (handleError)
		case errors.As(err, &se):
			return advisor.BadInput("body is not valid JSON: %v", err)
		case errors.As(err, &te):
			return advisor.BadInput("field %s: expected a %s, got a JSON %s", te.Field, te.Type, te.Value)
		}
		return advisor.BadInput("body: %v", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

func (s *Server) adviceView(c echo.Context, form url.Values) (views.AdviceView, error) {
	v := views.AdviceView{Form: form, Link: "/advisor?" + form.Encode()}
	b, errs, bad := adviseBodyFromForm(form)
	if len(errs) > 0 {
		p, err := advisor.LoadOrgPrices(c.Request().Context(), s.db(c), currentOrg(c).ID, advisor.PriceCatalog, s.now())
		if err != nil {
			return v, err
		}
		v.Errors, v.Prices, v.Invalid = errs, priceInfo(p), bad
		return v, nil
	}
	adv, p, err := advisor.Advise(c.Request().Context(), s.db(c), currentOrg(c).ID, b, s.now())
	v.Prices = priceInfo(p)
	var ie *advisor.InputError
	switch {
	case errors.As(err, &ie):
		v.Errors = ie.Messages()
		v.Invalid = map[string]bool{}
		for _, m := range v.Errors {
			// A message about one field starts with its name, as the API
			// spells it: the form's fields are named the same.
			if name, _, ok := strings.Cut(m, ": "); ok && name != "" && strings.Trim(name, "abcdefghijklmnopqrstuvwxyz_") == "" {
				v.Invalid[name] = true
			}
		}
		if p.Catalog == nil {
			p, _ = advisor.LoadOrgPrices(c.Request().Context(), nil, 0, advisor.PriceCatalog, s.now())
			v.Prices = priceInfo(p)
		}
		return v, nil
	case err != nil:
		return v, err
	}
	v.Advice = &adv
	v.Chart = adviceChart(adv)
	return v, nil
}

// datacenterCookie remembers the user's "datacenter GPUs only" choice
// between visits: it is a preference, not a secret.
const datacenterCookie = "datacenter_only"

// rememberDatacenterOnly keeps the "datacenter GPUs only" choice: an
// explicit on or off in the form is stored in a cookie, "by job" clears it,
// and a form that does not mention it takes the remembered choice.
func rememberDatacenterOnly(c echo.Context, form url.Values) {
	_, asked := c.QueryParams()[datacenterCookie]
	v := form.Get(datacenterCookie)
	switch {
	case asked && (v == "on" || v == "off"):
		c.SetCookie(&http.Cookie{Name: datacenterCookie, Value: v, Path: "/", MaxAge: 365 * 24 * 3600,
			HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: c.Scheme() == "https"})
	case asked:
		c.SetCookie(&http.Cookie{Name: datacenterCookie, Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode})
	default:
		if ck, err := c.Cookie(datacenterCookie); err == nil && (ck.Value == "on" || ck.Value == "off") {
			form.Set(datacenterCookie, ck.Value)
		}
	}
}

// defaultServingConcurrency is the sequences in flight a serving question
// gets when it names none.
const defaultServingConcurrency = "16"

// advisorDefaults is the job the advisor opens with, and every assumption.
func advisorDefaults() url.Values {
	v := url.Values{
		"job": {string(pricing.JobFullFinetune)}, "model": {"llama-3.1-8b"}, "precision": {"bf16"},
		"tokens": {"1B"}, "seq_len": {"4096"}, "max_gpus": {""}, "price_source": {advisor.PriceOverrides},
	}
	for k, val := range assumptionValues(pricing.DefaultAssumptions()) {
		v.Set(k, val)
	}
	return v
}

// withDefaults fills keys the query does not have at all from defaults. A
// submitted form has every text field (perhaps empty) and leaves out only
// unticked boxes, which default to off.
func withDefaults(q, defaults url.Values) url.Values {
	out := url.Values{}
	for k, vs := range q {
		out[k] = vs
	}
	for k, vs := range defaults {
		if _, ok := out[k]; !ok {
			out[k] = vs
		}
	}
	return out
}

// assumptionValues formats every assumption for the form, by JSON name.
func assumptionValues(a pricing.Assumptions) map[string]string {
	raw, _ := json.Marshal(a)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	out := map[string]string{}
	for k, v := range m {
		switch x := v.(type) {
		case float64:
			out[k] = strconv.FormatFloat(x, 'g', 6, 64)
			if x >= 1e6 && x == math.Trunc(x) {
				out[k] = strconv.FormatFloat(x, 'f', -1, 64) // a count, as people type it
			}
		case string:
			out[k] = x
		}
	}
	return out
}

// adviseBodyFromForm reads the advisor form; errs name each field that is
// not a number or is out of range.
func adviseBodyFromForm(v url.Values) (advisor.AdviseBody, []string, map[string]bool) {
	f := formNumbers{v: v}
	b := advisor.AdviseBody{
		Job: v.Get("job"), Precision: v.Get("precision"), GPU: v.Get("gpu"), Providers: v["providers"],
		Spot: v.Get("spot") != "", IncludeSuspicious: v.Get("include_suspicious") != "", PriceSource: v.Get("price_source"),
	}
	switch v.Get("datacenter_only") {
	case "on":
		on := true
		b.DatacenterOnly = &on
	case "off":
		off := false
		b.DatacenterOnly = &off
	}
	if m := strings.TrimSpace(v.Get("model")); m != "" && m != "custom" {
		b.Model = m
	} else {
		b.Params = f.float(quantity.Params, "params", "Parameters")
	}
	b.Tokens = f.float(quantity.Tokens, "tokens", "Tokens")
	b.InputTokens = f.float(quantity.Tokens, "input_tokens", "Prompt tokens")
	b.SeqLen = f.int(quantity.Count, "seq_len", "Sequence length")
	b.Concurrency = f.int(quantity.Count, "concurrency", "Concurrency")
	b.TargetTokensPerSec = f.float(quantity.Rate, "target_tokens_per_s", "Target tokens/s")
	b.DeadlineHours = f.float(quantity.Hours, "deadline_hours", "Deadline")
	b.RequestsPerSec = f.float(quantity.Rate, "requests_per_s", "Requests/s")
	b.PromptTokens = f.int(quantity.Count, "prompt_tokens", "Prompt tokens per request")
	b.OutputTokens = f.int(quantity.Count, "output_tokens", "Output tokens per request")
	b.TTFTMs = f.float(quantity.Factor, "ttft_ms", "TTFT target (ms)")
	b.TPOTMs = f.float(quantity.Factor, "tpot_ms", "TPOT target (ms)")
	b.LatencyPercentile = f.float(quantity.Factor, "latency_percentile", "Percentile")
	b.MaxGPUs = f.int(quantity.Count, "max_gpus", "Max GPUs")
	a := map[string]any{}
	for _, af := range views.AssumptionFields {
		if d, ok := f.parse(advisor.AssumptionKind(af.Key), af.Key, af.Label); ok {
			a[af.Key] = d.InexactFloat64()
		}
	}
	if r := v.Get("activation_recompute"); r != "" {
		a["activation_recompute"] = r
	}
	if len(a) > 0 {
		b.Assumptions, _ = json.Marshal(a)
	}
	return b, f.errs, f.bad
}

func priceInfo(p advisor.OrgPrices) views.PriceInfo {
	pi := views.PriceInfo{
		Source: p.Source, GPUOverrides: p.GPUOverrides, LLMOverrides: p.LLMOverrides,
		PaidRates: len(p.Paid), PaidUsed: p.PaidUsed,
	}
	if p.Catalog != nil {
		pi.CatalogSource, pi.CatalogAsOf = p.Catalog.Source, p.Catalog.AsOf
	}
	if p.LLM != nil {
		pi.LLMSource, pi.LLMAsOf = p.LLM.Source, p.LLM.AsOf
	}
	if !p.PaidFrom.IsZero() {
		pi.PaidWindow = p.PaidFrom.Format(time.DateOnly) + " to " + p.PaidTo.Format(time.DateOnly)
	}
	return pi
}

// adviceChart is the ECharts option comparing cost and time of the top
// options (app.js draws it).
func adviceChart(adv pricing.Advice) map[string]any {
	n := min(len(adv.Options), 8)
	labels := make([]string, 0, n)
	costs := make([]float64, 0, n)
	hours := make([]float64, 0, n)
	for _, o := range adv.Options[:n] {
		l := o.Provider + " " + o.InstanceType
		if o.Instances > 1 {
			l += fmt.Sprintf(" ×%d", o.Instances)
		}
		if o.Pricing == "spot" {
			l += " (spot)"
		}
		labels = append(labels, l)
		costs = append(costs, o.CostUSD.InexactFloat64())
		hours = append(hours, o.Hours)
	}
	return map[string]any{
		"animation": false,
		"tooltip":   map[string]any{"trigger": "axis"},
		"legend":    map[string]any{"data": []string{"Cost (USD)", "Hours"}, "top": 0},
		"grid":      map[string]any{"left": 70, "right": 70, "bottom": 120, "top": 40},
		"xAxis":     map[string]any{"type": "category", "data": labels, "axisLabel": map[string]any{"rotate": 25, "interval": 0, "width": 150, "overflow": "truncate"}},
		"yAxis": []map[string]any{
			{"type": "value", "name": "USD", "axisLabel": map[string]any{"formatter": "${value}"}},
			{"type": "value", "name": "hours", "splitLine": map[string]any{"show": false}},
		},
		"series": []map[string]any{
			{"name": "Cost (USD)", "type": "bar", "data": costs},
			{"name": "Hours", "type": "line", "yAxisIndex": 1, "data": hours},
		},
	}
}
