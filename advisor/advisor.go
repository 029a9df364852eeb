// Package advisor builds GPU advisor and break-even requests, whoever asks,
// and runs them at an org's prices: the JSON API decodes its body into
// AdviseBody or BreakEvenBody, the pages parse their forms into them, and
// `burnrate advise` and `burnrate breakeven` fill them from flags. The
// models themselves are package pricing's; this package loads what they
// need from the store (the org's overrides, what its bills show it paid).
package advisor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/pricing"
	"github.com/burnrate/burnrate/quantity"
	"github.com/burnrate/burnrate/store"
)

// Field names of the request bodies are the CLI flags' in snake_case
// (docs/advisor.md, "Advisor inputs").

// Price sources: which GPU and LLM prices a computation uses.
const (
	// PriceCatalog is the shipped catalog and price table alone.
	PriceCatalog = "catalog"
	// PriceOverrides is the catalog with the org's negotiated overrides on top.
	PriceOverrides = "overrides"
	// PricePaid is the catalog with what the org actually paid per GPU-hour
	// (from its imported bills) on top, and its negotiated overrides on top
	// of that: a price someone typed in deliberately wins over an average.
	PricePaid = "paid"
)

// PaidWindow is how far back the effective rates from bills look.
const PaidWindow = 90 * 24 * time.Hour

// InputError is a request the computation cannot take; it becomes a 422
// with its message.
type InputError struct{ msgs []string }

// Error is the messages on one line: "; " reads better in JSON than a
// newline.
func (e *InputError) Error() string   { return strings.Join(e.msgs, "; ") }
func (e *InputError) HTTPStatus() int { return 422 }

// Messages are the problems one by one, for a page to list. A message may
// itself contain "; ", so a page must not split Error.
func (e *InputError) Messages() []string { return e.msgs }

// BadInput is an InputError with a formatted message.
func BadInput(format string, args ...any) error {
	return &InputError{msgs: []string{fmt.Sprintf(format, args...)}}
}

// asInputError marks a pricing validation error as the caller's fault.
func asInputError(err error) error {
	if err == nil {
		return nil
	}
	var ie *InputError
	if errors.As(err, &ie) {
		return err
	}
	// errors.Join separates with newlines.
	return &InputError{msgs: strings.Split(err.Error(), "\n")}
}

// AdviseBody is the body of POST /api/v1/advise and what `burnrate advise`
// builds from its flags. Zero values mean the documented defaults.
type AdviseBody struct {
	Job                string          `json:"job"`
	Model              string          `json:"model,omitempty"`
	Params             float64         `json:"params,omitempty"`
	Precision          string          `json:"precision,omitempty"`
	Tokens             float64         `json:"tokens,omitempty"`
	InputTokens        float64         `json:"input_tokens,omitempty"`
	SeqLen             int             `json:"seq_len,omitempty"`
	Concurrency        int             `json:"concurrency,omitempty"`
	TargetTokensPerSec float64         `json:"target_tokens_per_s,omitempty"`
	RequestsPerSec     float64         `json:"requests_per_s,omitempty"`     // serving: arrivals per second
	PromptTokens       int             `json:"prompt_tokens,omitempty"`      // serving: prompt length (default 1,024)
	OutputTokens       int             `json:"output_tokens,omitempty"`      // serving: answer length (default 256)
	TTFTMs             float64         `json:"ttft_ms,omitempty"`            // serving: time-to-first-token target (default 2,000)
	TPOTMs             float64         `json:"tpot_ms,omitempty"`            // serving: time-per-output-token target (default 50)
	LatencyPercentile  float64         `json:"latency_percentile,omitempty"` // serving: the targets' percentile (default 90)
	DeadlineHours      float64         `json:"deadline_hours,omitempty"`
	Spot               bool            `json:"spot,omitempty"`
	GPU                string          `json:"gpu,omitempty"`
	Provider           string          `json:"provider,omitempty"` // one provider, or several separated by commas
	Providers          []string        `json:"providers,omitempty"`
	MaxGPUs            int             `json:"max_gpus,omitempty"`
	IncludeSuspicious  bool            `json:"include_suspicious,omitempty"`
	MaxOptions         int             `json:"max_options,omitempty"`
	PriceSource        string          `json:"price_source,omitempty"` // catalog, overrides (default) or paid
	MFU                *float64        `json:"mfu,omitempty"`
	Eta                *float64        `json:"eta,omitempty"`
	MemoryFraction     *float64        `json:"memory_fraction,omitempty"` // share of each GPU's memory to plan on (default 0.9)
	DatacenterOnly     *bool           `json:"datacenter_only,omitempty"` // default: on for serving, training and full fine-tuning
	Assumptions        json.RawMessage `json:"assumptions,omitempty"`     // any fields of pricing.Assumptions; the rest keep their defaults
}

// Request converts the body into the advisor's request. Validation of the
// values themselves is pricing.Advise's.
func (b AdviseBody) Request() (pricing.AdviceRequest, error) {
	a, err := assumptions(b.Assumptions)
	if err != nil {
		return pricing.AdviceRequest{}, err
	}
	if b.MFU != nil {
		a.MFU = *b.MFU
	}
	if b.Eta != nil {
		a.Eta = *b.Eta
	}
	if b.MemoryFraction != nil {
		a.MemoryFraction = *b.MemoryFraction
	}
	if err := b.sizeRequired(); err != nil {
		return pricing.AdviceRequest{}, err
	}
	return pricing.AdviceRequest{
		Job: pricing.JobType(strings.TrimSpace(b.Job)), Model: strings.TrimSpace(b.Model), Params: b.Params,
		Precision: pricing.Precision(b.Precision), Tokens: b.Tokens, InputTokens: b.InputTokens, SeqLen: b.SeqLen,
		Concurrency: b.Concurrency, TargetTokensPerSec: b.TargetTokensPerSec, DeadlineHours: b.DeadlineHours,
		RequestsPerSec: b.RequestsPerSec, PromptTokens: b.PromptTokens, OutputTokens: b.OutputTokens,
		TTFTMs: b.TTFTMs, TPOTMs: b.TPOTMs, LatencyPercentile: b.LatencyPercentile,
		Spot: b.Spot, Providers: ProviderList(b.Provider, b.Providers), GPU: strings.TrimSpace(b.GPU), MaxGPUs: b.MaxGPUs,
		IncludeSuspicious: b.IncludeSuspicious, MaxOptions: b.MaxOptions, Assumptions: a, DatacenterOnly: b.DatacenterOnly,
	}, nil
}

// sizeRequired is the one rule of what sizes a job, whoever asks (form,
// API, CLI: docs/advisor.md, "Advisor inputs"): batch inference needs the
// tokens to generate or to read. A training or fine-tuning job without
// tokens gets the configurations that hold it, without time or cost. No
// face fills tokens in for the user: a job sized by a number nobody typed
// is a silent answer to another question.
func (b AdviseBody) sizeRequired() error {
	job := pricing.JobType(strings.TrimSpace(b.Job))
	switch {
	case job == pricing.JobBatchInference && !(b.Tokens > 0) && !(b.InputTokens > 0):
		return BadInput("tokens: batch inference is sized by the tokens to generate (tokens) or to read (input_tokens); enter one")
	}
	return nil
}

// UnmarshalJSON reads the body with every number through quantity's
// bounds, so that {"tokens": 1e308} is a 422 naming the field rather than an
// infinity in the model. Unknown fields are refused.
func (b *AdviseBody) UnmarshalJSON(data []byte) error {
	type plain AdviseBody
	var raw struct {
		plain
		Params             quantity.Text `json:"params"`
		Tokens             quantity.Text `json:"tokens"`
		InputTokens        quantity.Text `json:"input_tokens"`
		SeqLen             quantity.Text `json:"seq_len"`
		Concurrency        quantity.Text `json:"concurrency"`
		TargetTokensPerSec quantity.Text `json:"target_tokens_per_s"`
		RequestsPerSec     quantity.Text `json:"requests_per_s"`
		PromptTokens       quantity.Text `json:"prompt_tokens"`
		OutputTokens       quantity.Text `json:"output_tokens"`
		TTFTMs             quantity.Text `json:"ttft_ms"`
		TPOTMs             quantity.Text `json:"tpot_ms"`
		LatencyPercentile  quantity.Text `json:"latency_percentile"`
		DeadlineHours      quantity.Text `json:"deadline_hours"`
		MaxGPUs            quantity.Text `json:"max_gpus"`
		MFU                quantity.Text `json:"mfu"`
		Eta                quantity.Text `json:"eta"`
		MemoryFraction     quantity.Text `json:"memory_fraction"`
	}
	if err := strictUnmarshal(data, &raw); err != nil {
		return err
	}
	var n jsonNumbers
	out := AdviseBody(raw.plain)
	out.Params = n.float(quantity.Params, "params", raw.Params)
	out.Tokens = n.float(quantity.Tokens, "tokens", raw.Tokens)
	out.InputTokens = n.float(quantity.Tokens, "input_tokens", raw.InputTokens)
	out.SeqLen = n.int(quantity.Count, "seq_len", raw.SeqLen)
	out.Concurrency = n.int(quantity.Count, "concurrency", raw.Concurrency)
	out.TargetTokensPerSec = n.float(quantity.Rate, "target_tokens_per_s", raw.TargetTokensPerSec)
	out.RequestsPerSec = n.float(quantity.Rate, "requests_per_s", raw.RequestsPerSec)
	out.PromptTokens = n.int(quantity.Count, "prompt_tokens", raw.PromptTokens)
	out.OutputTokens = n.int(quantity.Count, "output_tokens", raw.OutputTokens)
	out.TTFTMs = n.float(quantity.Factor, "ttft_ms", raw.TTFTMs)
	out.TPOTMs = n.float(quantity.Factor, "tpot_ms", raw.TPOTMs)
	out.LatencyPercentile = n.float(quantity.Factor, "latency_percentile", raw.LatencyPercentile)
	out.DeadlineHours = n.float(quantity.Hours, "deadline_hours", raw.DeadlineHours)
	out.MaxGPUs = n.int(quantity.Count, "max_gpus", raw.MaxGPUs)
	out.MFU = n.optFloat(quantity.Fraction, "mfu", raw.MFU)
	out.Eta = n.optFloat(quantity.Fraction, "eta", raw.Eta)
	out.MemoryFraction = n.optFloat(quantity.Fraction, "memory_fraction", raw.MemoryFraction)
	if n.err != nil {
		return n.err
	}
	*b = out
	return nil
}

// strictUnmarshal decodes one JSON value refusing unknown fields: they are
// typos the caller wants to hear about.
func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// assumptions reads a partial pricing.Assumptions object onto the defaults.
func assumptions(raw json.RawMessage) (pricing.Assumptions, error) {
	a := pricing.DefaultAssumptions()
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return a, nil
	}
	// Bound every number before it becomes a float64: a factor of 1e308
	// would make the model's hours infinite.
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) == nil {
		for _, k := range slices.Sorted(maps.Keys(fields)) {
			v := bytes.TrimSpace(fields[k])
			if len(v) == 0 || v[0] == '"' || v[0] == '{' || v[0] == '[' || string(v) == "null" || string(v) == "true" || string(v) == "false" {
				continue // not a number: the decoder below says what is wrong
			}
			if _, err := AssumptionKind(k).Parse("assumptions."+k, string(v)); err != nil {
				return a, err
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return a, BadInput("assumptions: %v", err)
	}
	return a, nil
}

// AssumptionKind is how an assumption's value is bounded: the global batch
// is a token count, every other assumption a factor.
func AssumptionKind(key string) quantity.Kind {
	if key == "global_batch_tokens" {
		return quantity.Tokens
	}
	return quantity.Factor
}

// ProviderList is the providers named in a comma-separated list and a
// slice together, lower case, blanks dropped.
func ProviderList(one string, many []string) []string {
	var out []string
	for _, p := range append(strings.Split(one, ","), many...) {
		if p = strings.ToLower(strings.TrimSpace(p)); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// BreakEvenBody is the body of POST /api/v1/breakeven and what `burnrate
// breakeven` builds from its flags. Token counts are per month; InputTokens
// is the uncached input.
type BreakEvenBody struct {
	Model            string           `json:"model,omitempty"`  // the API model (CLI --model)
	Models           []string         `json:"models,omitempty"` // more API models to compare
	InputTokens      float64          `json:"input_tokens"`
	OutputTokens     float64          `json:"output_tokens"`
	CachedTokens     float64          `json:"cached_tokens,omitempty"`
	OpenModel        string           `json:"open_model,omitempty"`
	OpenParams       float64          `json:"open_params,omitempty"`
	Precision        string           `json:"precision,omitempty"`
	GPU              string           `json:"gpu,omitempty"`
	GPUPrice         *decimal.Decimal `json:"gpu_price,omitempty"`  // USD per GPU-hour
	Throughput       float64          `json:"throughput,omitempty"` // measured tokens/s per GPU
	Spot             bool             `json:"spot,omitempty"`
	Provider         string           `json:"provider,omitempty"`
	Providers        []string         `json:"providers,omitempty"`
	Utilization      float64          `json:"utilization,omitempty"`
	PeakFactor       float64          `json:"peak_factor,omitempty"`
	OverheadMonthUSD *decimal.Decimal `json:"overhead_month_usd,omitempty"`
	SeqLen           int              `json:"seq_len,omitempty"`
	PriceSource      string           `json:"price_source,omitempty"`
	// Usage is the monthly tokens per API model for the mix (docs/advisor.md, "Fair break-even");
	// OrgUsage takes them from the org's last 30 days of imported usage instead.
	Usage    []UsageBody `json:"usage,omitempty"`
	OrgUsage bool        `json:"org_usage,omitempty"`
	// Substitutes override the tier table: API model → open model, or "none".
	Substitutes map[string]string `json:"substitutes,omitempty"`
	// DatacenterOnly: nil or true leaves consumer GPUs and marketplace hosts out.
	DatacenterOnly *bool `json:"datacenter_only,omitempty"`
}

// UsageBody is one API model's monthly tokens in a break-even body.
type UsageBody struct {
	Model        string  `json:"model"`
	InputTokens  float64 `json:"input_tokens"` // uncached
	CachedTokens float64 `json:"cached_tokens,omitempty"`
	OutputTokens float64 `json:"output_tokens"`
}

// UnmarshalJSON reads a usage row with its token counts through quantity's bounds.
func (u *UsageBody) UnmarshalJSON(data []byte) error {
	var raw struct {
		Model        string        `json:"model"`
		InputTokens  quantity.Text `json:"input_tokens"`
		CachedTokens quantity.Text `json:"cached_tokens"`
		OutputTokens quantity.Text `json:"output_tokens"`
	}
	if err := strictUnmarshal(data, &raw); err != nil {
		return err
	}
	var n jsonNumbers
	out := UsageBody{Model: strings.TrimSpace(raw.Model)}
	out.InputTokens = n.float(quantity.Tokens, "usage.input_tokens", raw.InputTokens)
	out.CachedTokens = n.float(quantity.Tokens, "usage.cached_tokens", raw.CachedTokens)
	out.OutputTokens = n.float(quantity.Tokens, "usage.output_tokens", raw.OutputTokens)
	if n.err != nil {
		return n.err
	}
	*u = out
	return nil
}

// ParseSubstitutes reads "gpt-4o=qwen2.5-72b, claude-sonnet-4=none" (the
// form's and the CLI's spelling of BreakEvenBody.Substitutes).
func ParseSubstitutes(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		api, open, ok := strings.Cut(part, "=")
		api, open = strings.TrimSpace(api), strings.TrimSpace(open)
		if !ok || api == "" || open == "" {
			return nil, BadInput("substitutes: %q is not api-model=open-model (or =none)", part)
		}
		out[api] = open
	}
	return out, nil
}

// FormatSubstitutes is the inverse of ParseSubstitutes, sorted.
func FormatSubstitutes(m map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ", ")
}

// ParseUsage reads a typed usage mix, the monthly tokens per API model:
// "gpt-4o=1B/200M, gpt-4o-mini=2B/500M/100M" (model=input/output[/cached],
// comma-separated; the numbers as people write them, through quantity's
// bounds). The break-even page's Usage mix and the CLI's --usage both read
// it here, so that one mix prices alike in both. label names the input in
// errors ("--usage", "Usage mix").
func ParseUsage(label, s string) ([]UsageBody, error) {
	var us []UsageBody
	var errs []error
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		model, toks, ok := strings.Cut(part, "=")
		nums := strings.Split(toks, "/")
		if !ok || strings.TrimSpace(model) == "" || len(nums) < 2 || len(nums) > 3 {
			return nil, BadInput("%s: %q is not model=input/output[/cached]", label, part)
		}
		u := UsageBody{Model: strings.TrimSpace(model)}
		for i, dst := range []*float64{&u.InputTokens, &u.OutputTokens, &u.CachedTokens} {
			if i >= len(nums) {
				break
			}
			name := label + " " + u.Model + " " + [...]string{"input", "output", "cached"}[i]
			d, err := quantity.Tokens.ParseHuman(name, strings.TrimSpace(nums[i]))
			if err != nil {
				errs = append(errs, err)
				continue
			}
			*dst = d.InexactFloat64()
		}
		us = append(us, u)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return us, nil
}

// FormatUsage writes a mix as ParseUsage reads it, counts in full.
func FormatUsage(us []UsageBody) string {
	n := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	parts := make([]string, 0, len(us))
	for _, u := range us {
		p := u.Model + "=" + n(u.InputTokens) + "/" + n(u.OutputTokens)
		if u.CachedTokens != 0 {
			p += "/" + n(u.CachedTokens)
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

// MixUsage turns an org's usage rows into the break-even's per-model usage
// (uncached input: the rollup's input includes cache reads).
func MixUsage(us []store.LLMUsage) []UsageBody {
	out := make([]UsageBody, 0, len(us))
	for _, u := range us {
		out = append(out, UsageBody{Model: u.Model, InputTokens: float64(u.UncachedInputTokens()),
			CachedTokens: float64(u.CachedTokens), OutputTokens: float64(u.OutputTokens)})
	}
	return out
}

// LargestSpend returns the usage row that costs the most at its own model's
// price in table (rows whose model the table lacks come last); ok is false
// when us is empty.
func LargestSpend(us []store.LLMUsage, table *pricing.LLMPriceTable) (store.LLMUsage, bool) {
	var best store.LLMUsage
	bestCost := decimal.NewFromInt(-1)
	for _, u := range us {
		c := decimal.NewFromInt(-1)
		if p, ok := table.Lookup(u.Model); ok {
			c = p.Cost(u.UncachedInputTokens(), u.CachedTokens, u.OutputTokens)
		}
		if c.GreaterThan(bestCost) || best.Model == "" {
			best, bestCost = u, c
		}
	}
	return best, best.Model != ""
}

// UsageWindow is how much of an org's LLM usage the break-even takes: the
// last 30 whole days up to today in the org's time zone, as one month.
const UsageWindow = 30

// OrgUsage returns org's LLM usage per model over the UsageWindow days
// ending today, and the window [from, to).
func OrgUsage(ctx context.Context, st *store.Store, org store.Org, now time.Time) ([]store.LLMUsage, time.Time, time.Time, error) {
	y, m, d := now.In(org.Location()).Date()
	to := time.Date(y, m, d, 0, 0, 0, 0, org.Location()).AddDate(0, 0, 1)
	from := to.AddDate(0, 0, -UsageWindow)
	us, err := st.LLMUsageByModel(ctx, org.ID, from, to)
	return us, from, to, err
}

// UnmarshalJSON reads the body with every number through quantity's
// bounds: {"overhead_month_usd": 1e10000000} is a 422 naming the field, not
// minutes of decimal arithmetic. Saved scenarios are read the same way.
func (b *BreakEvenBody) UnmarshalJSON(data []byte) error {
	type plain BreakEvenBody
	var raw struct {
		plain
		InputTokens      quantity.Text `json:"input_tokens"`
		OutputTokens     quantity.Text `json:"output_tokens"`
		CachedTokens     quantity.Text `json:"cached_tokens"`
		OpenParams       quantity.Text `json:"open_params"`
		GPUPrice         quantity.Text `json:"gpu_price"`
		Throughput       quantity.Text `json:"throughput"`
		Utilization      quantity.Text `json:"utilization"`
		PeakFactor       quantity.Text `json:"peak_factor"`
		OverheadMonthUSD quantity.Text `json:"overhead_month_usd"`
		SeqLen           quantity.Text `json:"seq_len"`
	}
	if err := strictUnmarshal(data, &raw); err != nil {
		return err
	}
	var n jsonNumbers
	out := BreakEvenBody(raw.plain)
	out.InputTokens = n.float(quantity.Tokens, "input_tokens", raw.InputTokens)
	out.OutputTokens = n.float(quantity.Tokens, "output_tokens", raw.OutputTokens)
	out.CachedTokens = n.float(quantity.Tokens, "cached_tokens", raw.CachedTokens)
	out.OpenParams = n.float(quantity.Params, "open_params", raw.OpenParams)
	out.GPUPrice = n.money("gpu_price", raw.GPUPrice)
	out.Throughput = n.float(quantity.Rate, "throughput", raw.Throughput)
	out.Utilization = n.float(quantity.Fraction, "utilization", raw.Utilization)
	out.PeakFactor = n.float(quantity.Factor, "peak_factor", raw.PeakFactor)
	out.OverheadMonthUSD = n.money("overhead_month_usd", raw.OverheadMonthUSD)
	out.SeqLen = n.int(quantity.Count, "seq_len", raw.SeqLen)
	if n.err != nil {
		return n.err
	}
	*b = out
	return nil
}

// ModelList is Model followed by Models (commas also separate), without
// blanks or repeats.
func (b BreakEvenBody) ModelList() []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range append(strings.Split(b.Model, ","), b.Models...) {
		for _, part := range strings.Split(m, ",") {
			part = strings.TrimSpace(part)
			if part != "" && !seen[strings.ToLower(part)] {
				seen[strings.ToLower(part)] = true
				out = append(out, part)
			}
		}
	}
	return out
}

// Input converts the body into the break-even model's input, priced with p.
func (b BreakEvenBody) Input(p OrgPrices) (pricing.BreakEvenInput, error) {
	var errs []string
	count := func(name string, v float64) int64 {
		if !(v >= 0) || v > 1e18 || math.IsInf(v, 0) {
			errs = append(errs, fmt.Sprintf("%s must be a token count between 0 and 1e18, got %g", name, v))
			return 0
		}
		return int64(math.Round(v))
	}
	in := pricing.BreakEvenInput{
		Models:      b.ModelList(),
		Substitutes: b.Substitutes, DatacenterOnly: b.DatacenterOnly,
		InputTokens:  count("input_tokens", b.InputTokens),
		OutputTokens: count("output_tokens", b.OutputTokens),
		CachedTokens: count("cached_tokens", b.CachedTokens),
		Prices:       p.LLM,
		OpenModel:    strings.TrimSpace(b.OpenModel), OpenParams: b.OpenParams, Precision: pricing.Precision(b.Precision),
		GPU: strings.TrimSpace(b.GPU), GPUPriceUSDPerHour: b.GPUPrice, ThroughputPerGPU: b.Throughput, Spot: b.Spot,
		Providers: ProviderList(b.Provider, b.Providers), Catalog: p.Catalog,
		Utilization: b.Utilization, PeakFactor: b.PeakFactor, SeqLen: b.SeqLen,
	}
	if b.OverheadMonthUSD != nil {
		in.OverheadMonthUSD = *b.OverheadMonthUSD
	}
	for i, u := range b.Usage {
		if u.Model == "" {
			errs = append(errs, fmt.Sprintf("usage[%d]: name the model", i))
			continue
		}
		in.Usage = append(in.Usage, pricing.ModelUsage{Model: u.Model,
			InputTokens:  count(fmt.Sprintf("usage[%d].input_tokens", i), u.InputTokens),
			CachedTokens: count(fmt.Sprintf("usage[%d].cached_tokens", i), u.CachedTokens),
			OutputTokens: count(fmt.Sprintf("usage[%d].output_tokens", i), u.OutputTokens)})
	}
	if len(in.Models) == 0 && len(in.Usage) == 0 {
		errs = append(errs, "name the API model to compare (model)")
	}
	if len(errs) > 0 {
		return in, BadInput("%s", strings.Join(errs, "; "))
	}
	return in, nil
}

// OrgPrices are the GPU catalog and LLM price table one computation uses,
// and what went into them.
type OrgPrices struct {
	Source       string // PriceCatalog, PriceOverrides or PricePaid
	Catalog      *pricing.Catalog
	LLM          *pricing.LLMPriceTable
	GPUOverrides int
	LLMOverrides int
	// Paid are the effective rates found in the org's bills (every currency);
	// PaidUsed counts the USD ones that became prices.
	Paid     []store.PaidGPURate
	PaidUsed int
	PaidFrom time.Time
	PaidTo   time.Time
}

// ParsePriceSource validates a price source; empty means PriceOverrides.
func ParsePriceSource(s string) (string, error) {
	switch s = strings.ToLower(strings.TrimSpace(s)); s {
	case "":
		return PriceOverrides, nil
	case PriceCatalog, PriceOverrides, PricePaid:
		return s, nil
	}
	return "", BadInput("price_source must be catalog, overrides or paid, got %q", s)
}

// LoadOrgPrices builds the prices of source for orgID: the embedded catalog
// and LLM table, then its effective USD rates from bills of the last 90 days
// (source paid), then the org's negotiated overrides (overrides and paid).
// Later layers win. st may be nil only for PriceCatalog.
func LoadOrgPrices(ctx context.Context, st *store.Store, orgID int64, source string, now time.Time) (OrgPrices, error) {
	src, err := ParsePriceSource(source)
	if err != nil {
		return OrgPrices{}, err
	}
	p := OrgPrices{Source: src, Catalog: pricing.DefaultCatalog(), LLM: pricing.DefaultLLMPrices()}
	if src == PriceCatalog {
		return p, nil
	}
	if st == nil {
		return OrgPrices{}, BadInput("price source %q needs an org (--org)", src)
	}
	gpu, err := st.GPUPriceOverrides(ctx, orgID)
	if err != nil {
		return OrgPrices{}, err
	}
	llm, err := st.LLMPriceOverrides(ctx, orgID)
	if err != nil {
		return OrgPrices{}, err
	}
	p.GPUOverrides, p.LLMOverrides = len(gpu), len(llm)
	if src == PricePaid {
		p.PaidTo = now.UTC()
		p.PaidFrom = p.PaidTo.Add(-PaidWindow)
		if p.Paid, err = st.PaidGPURates(ctx, orgID, p.PaidFrom, p.PaidTo); err != nil {
			return OrgPrices{}, err
		}
		insts := paidInstances(p.Catalog, p.Paid)
		p.PaidUsed = len(insts)
		p.Catalog = p.Catalog.WithPrices(insts, fmt.Sprintf("what you paid (your bills %s to %s)",
			p.PaidFrom.Format(time.DateOnly), p.PaidTo.Format(time.DateOnly)))
	}
	p.Catalog = p.Catalog.WithPrices(GPUInstances(gpu), "your negotiated prices")
	p.LLM = p.LLM.WithOverrides(llmPrices(llm), "your negotiated prices")
	return p, nil
}

// GPUInstances turns an org's GPU price overrides into catalog instances.
func GPUInstances(os []store.GPUPriceOverride) []pricing.Instance {
	out := make([]pricing.Instance, 0, len(os))
	for _, o := range os {
		out = append(out, pricing.Instance{
			Provider: o.Provider, InstanceType: o.InstanceType, GPU: o.GPU, GPUCount: o.GPUCount.InexactFloat64(),
			OnDemand: o.OnDemand, Spot: o.Spot,
		})
	}
	return out
}

func llmPrices(os []store.LLMPriceOverride) []pricing.LLMPrice {
	out := make([]pricing.LLMPrice, 0, len(os))
	for _, o := range os {
		out = append(out, pricing.LLMPrice{Model: o.Model, Provider: o.Provider, InputPerMTok: o.Input,
			OutputPerMTok: o.Output, CachedInputPerMTok: o.CachedInput})
	}
	return out
}

// paidInstances turns effective $/GPU-hour from bills into per-instance
// on-demand prices (× the instance's GPUs). Only USD rates qualify, as the
// catalog is in USD. The catalog's spot price is kept when it is below what
// was paid, so "spot allowed" still finds the market's discount.
func paidInstances(cat *pricing.Catalog, rates []store.PaidGPURate) []pricing.Instance {
	var out []pricing.Instance
	for _, r := range rates {
		if r.Currency != "USD" || !r.PerGPUHour.IsPositive() || r.InstanceType == "" {
			continue
		}
		provider := CatalogProvider(r.Provider)
		in := pricing.Instance{Provider: provider, InstanceType: r.InstanceType, GPU: r.GPUType, GPUCount: r.GPUCount.InexactFloat64()}
		if base, ok := cat.Instance(provider, r.InstanceType); ok && base.GPUCount > 0 {
			in.GPU, in.GPUCount = base.GPU, base.GPUCount
			price := r.PerGPUHour.Mul(decimal.NewFromFloat(in.GPUCount)).Round(4)
			in.OnDemand = &price
			if base.Spot != nil && base.Spot.LessThan(price) {
				in.Spot = base.Spot
			}
		} else {
			if in.GPUCount <= 0 {
				continue
			}
			price := r.PerGPUHour.Mul(decimal.NewFromFloat(in.GPUCount)).Round(4)
			in.OnDemand = &price
		}
		out = append(out, in)
	}
	return out
}

// CatalogProvider maps a bill's provider name (FOCUS ProviderName: "AWS",
// "Google Cloud", "Microsoft", …) to the catalog's lower-case provider.
func CatalogProvider(billName string) string {
	k := strings.ToLower(strings.TrimSpace(billName))
	switch {
	case k == "aws" || strings.Contains(k, "amazon"):
		return "aws"
	case k == "gcp" || strings.Contains(k, "google"):
		return "gcp"
	case strings.Contains(k, "azure") || strings.Contains(k, "microsoft"):
		return "azure"
	case strings.Contains(k, "lambda"):
		return "lambda"
	case k == "oci" || strings.Contains(k, "oracle"):
		return "oci"
	}
	return strings.ReplaceAll(k, " ", "")
}

// Advise runs the advisor for orgID (st may be nil with price source
// catalog). Bad input is an error with HTTP status 422.
func Advise(ctx context.Context, st *store.Store, orgID int64, b AdviseBody, now time.Time) (pricing.Advice, OrgPrices, error) {
	p, err := LoadOrgPrices(ctx, st, orgID, b.PriceSource, now)
	if err != nil {
		return pricing.Advice{}, p, err
	}
	req, err := b.Request()
	if err != nil {
		return pricing.Advice{}, p, err
	}
	adv, err := pricing.Advise(req, p.Catalog)
	return adv, p, asInputError(err)
}

// BreakEven runs the break-even model for orgID (st may be nil with price
// source catalog). Bad input is an error with HTTP status 422.
func BreakEven(ctx context.Context, st *store.Store, orgID int64, b BreakEvenBody, now time.Time) (pricing.BreakEvenResult, OrgPrices, error) {
	p, err := LoadOrgPrices(ctx, st, orgID, b.PriceSource, now)
	if err != nil {
		return pricing.BreakEvenResult{}, p, err
	}
	if b.OrgUsage {
		if st == nil {
			return pricing.BreakEvenResult{}, p, BadInput("org_usage needs an org (--org)")
		}
		org, err := st.Org(ctx, orgID)
		if err != nil {
			return pricing.BreakEvenResult{}, p, err
		}
		us, _, _, err := OrgUsage(ctx, st, org, now)
		if err != nil {
			return pricing.BreakEvenResult{}, p, err
		}
		if len(us) == 0 {
			return pricing.BreakEvenResult{}, p, BadInput("org_usage: no LLM usage imported in the last %d days", UsageWindow)
		}
		b.Usage = MixUsage(us)
	}
	saved, err := OrgSubstitutes(ctx, st, orgID)
	if err != nil {
		return pricing.BreakEvenResult{}, p, err
	}
	if b.Substitutes, err = withOrgSubstitutes(saved, b.Substitutes); err != nil {
		return pricing.BreakEvenResult{}, p, err
	}
	in, err := b.Input(p)
	if err != nil {
		return pricing.BreakEvenResult{}, p, err
	}
	res, err := pricing.BreakEven(in)
	return res, p, asInputError(err)
}
