package pricing

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/quantity"
)

// A fair break-even compares like with like: each API model the org uses is
// priced at its own rates on its own tokens, and matched with an open model
// of comparable quality (docs/advisor.md, "Fair break-even").

//go:embed data/model_tiers.csv
var modelTiersCSV []byte

// ModelTiersSource names where the embedded tier table comes from.
const ModelTiersSource = "Burnrate's tier table (pricing/data/model_tiers.csv): API models matched with the open model of comparable published MMLU, from the vendors' announcements and model cards"

// NoSubstitute is the open model of an API model with no credible open substitute.
const NoSubstitute = "none"

// ModelTier is one row of the tier table: API models whose name starts with
// APIModel are matched with OpenModel (or NoSubstitute).
type ModelTier struct {
	APIModel  string `json:"api_model"`
	OpenModel string `json:"open_model"`
	Tier      string `json:"tier"`
	// Precision is how the open model is served when the request names none (DeepSeek-V3's
	// released weights are FP8); empty means the request's.
	Precision Precision `json:"precision,omitempty"`
	Evidence  string    `json:"evidence"`
}

var modelTiers = sync.OnceValues(func() ([]ModelTier, error) {
	t, err := newTable(bytes.NewReader(modelTiersCSV), "api_model", "open_model")
	if err != nil {
		return nil, err
	}
	var out []ModelTier
	for t.next() {
		row := ModelTier{APIModel: t.str("api_model"), OpenModel: strings.ToLower(t.str("open_model")), Tier: t.str("tier"),
			Precision: Precision(t.str("precision")), Evidence: t.str("evidence")}
		if row.OpenModel != NoSubstitute {
			if _, err := LookupModel(row.OpenModel); err != nil {
				t.fail("open_model", err.Error())
			}
		}
		out = append(out, row)
	}
	return out, t.err
})

// ModelTiers returns the embedded tier table. It panics only if the embedded
// data is corrupt, which the package tests rule out.
func ModelTiers() []ModelTier {
	t, err := modelTiers()
	if err != nil {
		panic("pricing: embedded model tiers are corrupt: " + err.Error())
	}
	return t
}

// Substitute returns the tier row for an API model: the longest APIModel
// that prefixes its normalised name (NormalizeLLMModel) at a word boundary.
// ok is false for a model the table does not know.
func Substitute(apiModel string) (ModelTier, bool) {
	k := NormalizeLLMModel(apiModel)
	var best ModelTier
	bestLen := -1
	for _, row := range ModelTiers() {
		p := NormalizeLLMModel(row.APIModel)
		if rest, ok := strings.CutPrefix(k, p); ok && (rest == "" || rest[0] == '-' || rest[0] == '.') && len(p) > bestLen {
			best, bestLen = row, len(p)
		}
	}
	return best, bestLen >= 0
}

// ModelUsage is one API model's monthly tokens.
type ModelUsage struct {
	Model        string `json:"model"`
	InputTokens  int64  `json:"input_tokens"` // uncached
	CachedTokens int64  `json:"cached_tokens"`
	OutputTokens int64  `json:"output_tokens"`
}

// MixBreakEven is the break-even of an org's whole LLM usage, model by model.
type MixBreakEven struct {
	// Models has one row per API model, largest API spend first.
	Models []MixModel `json:"models"`
	// APICostMonthUSD is the whole usage priced at each model's own rates.
	APICostMonthUSD decimal.Decimal `json:"api_cost_month_usd"`
	// SubstitutableAPICostMonthUSD is the part of it on models with an open substitute.
	SubstitutableAPICostMonthUSD decimal.Decimal `json:"substitutable_api_cost_month_usd"`
	// SelfHostCostMonthUSD self-hosts every substitutable model (one deployment per open model,
	// sized for the tokens of all API models it replaces, plus the fixed overhead once).
	SelfHostCostMonthUSD decimal.Decimal `json:"self_host_cost_month_usd"`
	// BreakEvenScale is the multiple of the current volume (every model scaled alike) from which
	// self-hosting the substitutable models costs no more than their API bill; nil when never.
	BreakEvenScale *float64 `json:"break_even_scale"`
	// NoSubstitute lists the models that stay on the API: no credible open substitute.
	NoSubstitute []string `json:"no_substitute"`
	// Verdict sums it up in one sentence.
	Verdict string `json:"verdict"`
	// TiersSource names the tier table.
	TiersSource string `json:"tiers_source"`
}

// MixModel is one API model of the mix.
type MixModel struct {
	Model           string          `json:"model"`
	PriceModel      string          `json:"price_model"`
	InputTokens     int64           `json:"input_tokens"`
	CachedTokens    int64           `json:"cached_tokens"`
	OutputTokens    int64           `json:"output_tokens"`
	APIUSDPerMTok   decimal.Decimal `json:"api_usd_per_mtok"`
	APICostMonthUSD decimal.Decimal `json:"api_cost_month_usd"`
	// OpenModel is the substitute; empty when there is none (then NoSubstituteReason says why).
	OpenModel          string    `json:"open_model,omitempty"`
	Tier               string    `json:"tier,omitempty"`
	TierEvidence       string    `json:"tier_evidence,omitempty"`
	SubstituteSource   string    `json:"substitute_source,omitempty"` // "tier table" or "yours"
	Precision          Precision `json:"precision,omitempty"`         // of the self-hosted substitute
	NoSubstituteReason string    `json:"no_substitute_reason,omitempty"`
	// The model's own break-even against its substitute (nil when it has none).
	SelfHostCostMonthUSD    *decimal.Decimal `json:"self_host_cost_month_usd,omitempty"`
	BreakEvenTokensPerMonth *int64           `json:"break_even_tokens_per_month,omitempty"`
	GPU                     string           `json:"gpu,omitempty"`
	GPUsNeeded              int              `json:"gpus_needed,omitempty"`
	Verdict                 string           `json:"verdict"`
}

// substituteFor resolves an API model's open substitute: the user's choice
// (subs, keyed by NormalizeLLMModel) first, then the tier table.
func substituteFor(model string, subs map[string]string) (open string, row ModelTier, source string, known bool) {
	row, known = Substitute(model)
	if s, ok := subs[NormalizeLLMModel(model)]; ok {
		return strings.ToLower(strings.TrimSpace(s)), row, "yours", true
	}
	if known {
		return row.OpenModel, row, "tier table", true
	}
	return "", row, "", false
}

// normalizeSubstitutes keys the user's substitutes by NormalizeLLMModel and
// checks each open model is known (or "none").
func normalizeSubstitutes(in map[string]string) (map[string]string, error) {
	out := map[string]string{}
	var errs []error
	for api, open := range in {
		open = strings.ToLower(strings.TrimSpace(open))
		if open != NoSubstitute {
			m, err := LookupModel(open)
			if err != nil {
				errs = append(errs, fmt.Errorf("substitute for %s: %w", api, err))
				continue
			}
			open = m.Name
		}
		out[NormalizeLLMModel(api)] = open
	}
	return out, errors.Join(errs...)
}

// largestSpend orders usage by its API cost at each model's own price,
// largest first, with the prices found (unknown models last, unpriced).
func largestSpend(usage []ModelUsage, table *LLMPriceTable) []ModelUsage {
	out := append([]ModelUsage(nil), usage...)
	cost := func(u ModelUsage) decimal.Decimal {
		if p, ok := table.Lookup(u.Model); ok {
			return p.Cost(u.InputTokens, u.CachedTokens, u.OutputTokens)
		}
		return decimal.NewFromInt(-1)
	}
	sort.SliceStable(out, func(i, j int) bool { return cost(out[i]).GreaterThan(cost(out[j])) })
	return out
}

// breakEvenMix computes the mix of in.Usage; base carries the deployment
// choices (GPU, prices, utilisation, …) every model's comparison shares.
func breakEvenMix(in BreakEvenInput, subs map[string]string) (*MixBreakEven, error) {
	table := in.Prices
	if table == nil {
		table = DefaultLLMPrices()
	}
	mix := &MixBreakEven{TiersSource: ModelTiersSource, NoSubstitute: []string{}}
	type group struct {
		open  string
		usage ModelUsage // summed tokens
		api   decimal.Decimal
	}
	groups := map[string]*group{}
	var order []string
	var errs []error
	precOf := map[string]Precision{}
	for _, u := range largestSpend(in.Usage, table) {
		p, ok := table.Lookup(u.Model)
		if !ok {
			errs = append(errs, fmt.Errorf("API model %q is not in the price table (%s); add it as an override", u.Model, table.Source))
			continue
		}
		row := MixModel{Model: u.Model, PriceModel: p.Model, InputTokens: u.InputTokens, CachedTokens: u.CachedTokens, OutputTokens: u.OutputTokens,
			APICostMonthUSD: p.Cost(u.InputTokens, u.CachedTokens, u.OutputTokens).Round(2)}
		if u.InputTokens+u.CachedTokens+u.OutputTokens > 0 {
			row.APIUSDPerMTok = p.BlendedPerMTok(u.InputTokens, u.CachedTokens, u.OutputTokens).Round(4)
		}
		mix.APICostMonthUSD = mix.APICostMonthUSD.Add(row.APICostMonthUSD)
		open, tier, source, known := substituteFor(u.Model, subs)
		row.Tier, row.TierEvidence, row.SubstituteSource = tier.Tier, tier.Evidence, source
		switch {
		case !known:
			row.NoSubstituteReason = "not in the tier table; name an open substitute to compare it"
		case open == NoSubstitute && source == "yours":
			row.NoSubstituteReason = "you marked it as having no open substitute"
		case open == NoSubstitute:
			row.NoSubstituteReason = "no credible open substitute: " + tier.Evidence
		}
		if row.NoSubstituteReason != "" {
			row.Verdict = fmt.Sprintf("Stays on the API: %s.", row.NoSubstituteReason)
			mix.NoSubstitute = append(mix.NoSubstitute, u.Model)
			mix.Models = append(mix.Models, row)
			continue
		}
		row.OpenModel = open
		one := in
		one.Models, one.Usage, one.Substitutes = []string{u.Model}, nil, nil
		one.InputTokens, one.CachedTokens, one.OutputTokens = u.InputTokens, u.CachedTokens, u.OutputTokens
		one.OpenModel, one.OpenParams = open, 0
		if one.Precision == "" && source == "tier table" {
			one.Precision = tier.Precision
		}
		row.Precision = one.Precision
		if row.Precision == "" {
			row.Precision = BF16
		}
		res, err := breakEvenOne(one)
		if err != nil {
			row.NoSubstituteReason = fmt.Sprintf("%s cannot be self-hosted here: %v", open, err)
			row.Verdict = "Stays on the API: " + row.NoSubstituteReason + "."
			mix.NoSubstitute = append(mix.NoSubstitute, u.Model)
			mix.Models = append(mix.Models, row)
			continue
		}
		self := res.SelfHostCostMonthUSD
		row.SelfHostCostMonthUSD, row.BreakEvenTokensPerMonth = &self, res.BreakEvenTokensPerMonth
		row.GPU, row.GPUsNeeded, row.Verdict = res.SelfHost.GPU, res.GPUsNeeded, res.Verdict
		mix.Models = append(mix.Models, row)
		mix.SubstitutableAPICostMonthUSD = mix.SubstitutableAPICostMonthUSD.Add(row.APICostMonthUSD)
		precOf[open] = row.Precision
		g := groups[open]
		if g == nil {
			g = &group{open: open, usage: ModelUsage{Model: u.Model}}
			groups[open] = g
			order = append(order, open)
		}
		g.usage.InputTokens += u.InputTokens
		g.usage.CachedTokens += u.CachedTokens
		g.usage.OutputTokens += u.OutputTokens
		g.api = g.api.Add(row.APICostMonthUSD)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	// One deployment per open model, sized for all the API models it replaces.
	var scens []*scenario
	var vols []float64
	for _, open := range order {
		g := groups[open]
		one := in
		one.Models, one.Usage, one.Substitutes = []string{g.usage.Model}, nil, nil
		one.InputTokens, one.CachedTokens, one.OutputTokens = g.usage.InputTokens, g.usage.CachedTokens, g.usage.OutputTokens
		one.OpenModel, one.OpenParams, one.OverheadMonthUSD, one.Precision = open, 0, decimal.Zero, precOf[open]
		s, err := newScenario(one)
		if err != nil {
			return nil, err
		}
		v := float64(g.usage.InputTokens + g.usage.CachedTokens + g.usage.OutputTokens)
		scens, vols = append(scens, s), append(vols, v)
		mix.SelfHostCostMonthUSD = mix.SelfHostCostMonthUSD.Add(s.selfHost(v))
	}
	if len(scens) > 0 {
		mix.SelfHostCostMonthUSD = mix.SelfHostCostMonthUSD.Add(in.OverheadMonthUSD)
		if sc, ok := mixBreakEvenScale(scens, vols, mix.SubstitutableAPICostMonthUSD.InexactFloat64(), in.OverheadMonthUSD.InexactFloat64()); ok {
			sc = math.Round(sc*1000) / 1000
			mix.BreakEvenScale = &sc
		}
	}
	mix.Verdict = mixVerdict(mix)
	return mix, nil
}

// mixBreakEvenScale finds the least multiple s of the current volumes at
// which the deployments (whole replicas at s·volume each) plus overhead cost
// no more than s × the API bill: self-hosting is constant between replica
// steps and the API linear, so the answer is at the start of a segment or
// where the API line crosses the segment's level.
func mixBreakEvenScale(scens []*scenario, vols []float64, api, overhead float64) (float64, bool) {
	if api <= 0 {
		return 0, false
	}
	edges := []float64{0}
	for i, s := range scens {
		if vols[i] <= 0 {
			continue
		}
		step := s.unitCap / vols[i] // scale at which this deployment adds a replica
		for k := 1; k <= 2000 && float64(k)*step <= 1e6; k++ {
			edges = append(edges, float64(k)*step)
		}
	}
	sort.Float64s(edges)
	cost := func(scale float64) float64 {
		c := overhead
		for i, s := range scens {
			c += s.selfHost(scale*vols[i]).InexactFloat64() - s.overhead.InexactFloat64()
		}
		return c
	}
	for i, lo := range edges {
		hi := 1e6
		if i+1 < len(edges) {
			hi = edges[i+1]
		}
		if hi <= lo {
			continue
		}
		level := cost((lo + hi) / 2) // constant inside (lo, hi]
		if s := level / api; s <= hi && s > 0 {
			return math.Max(s, lo), true
		}
	}
	return 0, false
}

func mixVerdict(m *MixBreakEven) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Your usage costs %s/month on the APIs, each model at its own rates", quantity.FormatMoney(m.APICostMonthUSD, "USD"))
	if len(m.NoSubstitute) > 0 {
		fmt.Fprintf(&b, "; %s stay(s) on the API (no credible open substitute)", strings.Join(m.NoSubstitute, ", "))
	}
	if m.SubstitutableAPICostMonthUSD.IsZero() {
		b.WriteString(".")
		return b.String()
	}
	fmt.Fprintf(&b, ". Self-hosting the open substitutes of the rest (%s/month on the API) would cost %s/month",
		quantity.FormatMoney(m.SubstitutableAPICostMonthUSD, "USD"), quantity.FormatMoney(m.SelfHostCostMonthUSD, "USD"))
	switch {
	case m.BreakEvenScale == nil:
		b.WriteString(", and never pays at any volume.")
	case *m.BreakEvenScale <= 1:
		fmt.Fprintf(&b, ": it pays already (from %.2g× today's volume).", *m.BreakEvenScale)
	default:
		fmt.Fprintf(&b, ": it pays from %.3g× today's volume.", *m.BreakEvenScale)
	}
	return b.String()
}

// CheckSubstitutes validates a user's tier table edits (API model → open
// model or NoSubstitute) and returns them keyed by NormalizeLLMModel, with
// the open models' catalog names: what an org saves.
func CheckSubstitutes(in map[string]string) (map[string]string, error) {
	return normalizeSubstitutes(in)
}

// ResolveSubstitute is the open model an API model is compared with: the
// user's (subs, as CheckSubstitutes returns them) first, then the tier
// table; source is "yours" or "tier table", known false when neither has it.
func ResolveSubstitute(model string, subs map[string]string) (open string, row ModelTier, source string, known bool) {
	return substituteFor(model, subs)
}
