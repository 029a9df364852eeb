package pricing

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/quantity"
)

// BreakEvenInput describes an "API vs self-hosted GPU" scenario (docs/advisor.md, "The break-even model"). Token counts are per
// month. Zero values mean the documented defaults.
type BreakEvenInput struct {
	// Models are the API models compared (at least one); the first is the primary whose figures
	// fill the top level of the result.
	Models []string `json:"models"`
	// InputTokens is the monthly uncached input tokens. All three counts zero is allowed (the mix
	// then defaults to 3:1 input:output).
	InputTokens int64 `json:"input_tokens"`
	// CachedTokens is the monthly cache-read input tokens.
	CachedTokens int64 `json:"cached_tokens"`
	// OutputTokens is the monthly output tokens.
	OutputTokens int64 `json:"output_tokens"`
	// Prices is the API price table (DefaultLLMPrices when nil; pass one WithOverrides for an org).
	Prices *LLMPriceTable `json:"-"`

	// OpenModel is the self-hosted open model (default llama-3.1-8b).
	OpenModel string `json:"open_model"`
	// OpenParams is a custom parameter count used when OpenModel is empty.
	OpenParams float64 `json:"open_params"`
	// Precision of the self-hosted weights (default bf16).
	Precision Precision `json:"precision"`
	// GPU is the GPU type to self-host on; empty lets the advisor pick the cheapest $/token.
	GPU string `json:"gpu"`
	// GPUPriceUSDPerHour is a price per GPU-hour to use instead of the catalog.
	GPUPriceUSDPerHour *decimal.Decimal `json:"gpu_price"`
	// ThroughputPerGPU is a measured total (input + output) tokens/s per GPU to use instead of the
	// advisor's model.
	ThroughputPerGPU float64 `json:"throughput"`
	// Spot prices the GPUs at spot rates (with the serving spot overhead).
	Spot bool `json:"spot"`
	// Providers restricts the catalog search (empty = all).
	Providers []string `json:"providers"`
	// Catalog is the GPU catalog (DefaultCatalog when nil; pass one WithPrices for an org).
	Catalog *Catalog `json:"-"`
	// Utilization is the planned busy fraction of each GPU at the peak hour (default 0.7).
	Utilization float64 `json:"utilization"`
	// PeakFactor is the peak-hour token rate over the monthly average rate (default 2; at least 1).
	PeakFactor float64 `json:"peak_factor"`
	// OverheadMonthUSD is fixed monthly self-hosting cost: ops time, storage, egress.
	OverheadMonthUSD decimal.Decimal `json:"overhead_month_usd"`
	// SeqLen is the context per sequence for the throughput model (default 4096).
	SeqLen int `json:"seq_len"`
	// Assumptions are the throughput model constants (zero value = DefaultAssumptions()).
	Assumptions Assumptions `json:"assumptions"`
	// Usage, when given, is the monthly tokens of every API model the org uses: each is priced at
	// its own rates and compared with its own open substitute, and the result has a Mix. Without
	// Models, the primary comparison is the largest-spend model that has a substitute, on its own tokens.
	Usage []ModelUsage `json:"usage"`
	// Substitutes override the tier table: API model → open model, or "none".
	Substitutes map[string]string `json:"substitutes"`
	// DatacenterOnly leaves consumer GPUs and peer-marketplace offers out of the catalog search;
	// nil means on (serving, see DatacenterOnlyDefault).
	DatacenterOnly *bool `json:"datacenter_only"`
}

// BreakEvenResult is the outcome for the primary API model; its JSON is the `burnrate breakeven
// --json` shape (docs/advisor.md, "Break-even output") plus the additive "models" and "self_host" objects. Money marshals
// as JSON strings.
type BreakEvenResult struct {
	// APICostMonthUSD is what the current volume costs on the primary API model.
	APICostMonthUSD decimal.Decimal `json:"api_cost_month_usd"`
	// SelfHostCostMonthUSD is what the current volume costs self-hosted (whole GPUs, 730 h, overhead).
	SelfHostCostMonthUSD decimal.Decimal `json:"self_host_cost_month_usd"`
	// GPUsNeeded is the whole GPUs the current volume needs at its peak (at least one deployment).
	GPUsNeeded int `json:"gpus_needed"`
	// BreakEvenTokensPerMonth is the lowest monthly volume where self-hosting is no dearer; nil when never.
	BreakEvenTokensPerMonth *int64 `json:"break_even_tokens_per_month"`
	// UtilizationAtBreakEven is the average busy fraction of the GPUs at that volume; nil when never.
	UtilizationAtBreakEven *float64 `json:"utilization_at_break_even"`
	// Verdict states the answer and its main sensitivity in one sentence.
	Verdict string `json:"verdict"`
	// Curve is monthly cost against monthly tokens on a log axis (1e6…1e12, plus the current
	// volume, the break-even and the GPU step edges).
	Curve []CurvePoint `json:"curve"`
	// Models has the figures for every API model compared, the primary first.
	Models []ModelBreakEven `json:"models"`
	// SelfHost describes the self-hosted deployment the figures assume.
	SelfHost SelfHostPlan `json:"self_host"`
	// Replicas is the whole replicas of SelfHost.GPUsPerReplica GPUs the current volume needs
	// (GPUsNeeded = Replicas × GPUsPerReplica).
	Replicas int `json:"replicas"`
	// OpenModelSource says where the self-hosted model came from: "yours", "tier table (<tier>)"
	// or "default".
	OpenModelSource string `json:"open_model_source"`
	// NoSubstitute, when set, says the primary API model has no credible open substitute: the
	// comparison is shown, but the open model cannot do its work.
	NoSubstitute string `json:"no_substitute,omitempty"`
	// Mix is the break-even of the whole usage, model by model (only with BreakEvenInput.Usage).
	Mix *MixBreakEven `json:"mix,omitempty"`
}

// CurvePoint is one point of the cost curves.
type CurvePoint struct {
	// TokensPerMonth is the monthly volume of this point.
	TokensPerMonth int64 `json:"tokens_per_month"`
	// APIUSD is the primary API model's monthly cost at that volume.
	APIUSD decimal.Decimal `json:"api_usd"`
	// SelfHostUSD is the self-hosted monthly cost at that volume (a step function of whole GPUs).
	SelfHostUSD decimal.Decimal `json:"self_host_usd"`
	// APIUSDByModel has the API cost of every compared model at this volume. Go callers only.
	APIUSDByModel map[string]decimal.Decimal `json:"-"`
}

// ModelBreakEven is the comparison for one API model.
type ModelBreakEven struct {
	// Model is the name as given in BreakEvenInput.Models.
	Model string `json:"model"`
	// PriceModel is the price-table row the name resolved to.
	PriceModel string `json:"price_model"`
	// PriceSource is where that price comes from.
	PriceSource string `json:"price_source"`
	// APICostMonthUSD is the current volume's cost on this API.
	APICostMonthUSD decimal.Decimal `json:"api_cost_month_usd"`
	// APIUSDPerMTok is the blended price per 1M tokens in the current mix.
	APIUSDPerMTok decimal.Decimal `json:"api_usd_per_mtok"`
	// BreakEvenTokensPerMonth is the volume above which self-hosting wins; nil when it never does.
	BreakEvenTokensPerMonth *int64 `json:"break_even_tokens_per_month"`
	// UtilizationAtBreakEven is the average GPU busy fraction at the break-even volume; nil when never.
	UtilizationAtBreakEven *float64 `json:"utilization_at_break_even"`
	// NeverReason says why self-hosting never wins (empty otherwise).
	NeverReason string `json:"never_reason,omitempty"`
	// Verdict is the sentence for this model.
	Verdict string `json:"verdict"`
}

// SelfHostPlan is the self-hosted deployment unit and its economics.
type SelfHostPlan struct {
	// OpenModel is the canonical name of the self-hosted model.
	OpenModel string `json:"open_model"`
	// GPU is the GPU type.
	GPU string `json:"gpu"`
	// Provider is the catalog provider; empty when the price was entered by the user.
	Provider string `json:"provider,omitempty"`
	// InstanceType is the catalog instance type; empty when the price was entered by the user.
	InstanceType string `json:"instance_type,omitempty"`
	// Pricing is "on-demand" or "spot".
	Pricing string `json:"pricing"`
	// GPUsPerReplica is the GPUs one model replica needs (the unit the deployment grows by).
	GPUsPerReplica int `json:"gpus_per_replica"`
	// USDPerGPUHour is the effective price per GPU-hour (spot includes its overhead).
	USDPerGPUHour decimal.Decimal `json:"usd_per_gpu_hour"`
	// TokensPerSecPerGPU is the total (input + output) throughput per GPU at 100% busy.
	TokensPerSecPerGPU float64 `json:"tokens_per_s_per_gpu"`
	// ThroughputSource is "measured (user)" or "model".
	ThroughputSource string `json:"throughput_source"`
	// CapacityTokensPerMonthPerGPU is the tokens one GPU serves in 730 h at 100% busy.
	CapacityTokensPerMonthPerGPU float64 `json:"capacity_tokens_per_month_per_gpu"`
	// USDPerMTokAtFullUtilization is the self-hosted cost per 1M tokens with GPUs 100% busy.
	USDPerMTokAtFullUtilization decimal.Decimal `json:"usd_per_mtok_at_full_utilization"`
	// USDPerMTokAtCurrentVolume is the self-hosted monthly cost over the current volume (nil at zero volume).
	USDPerMTokAtCurrentVolume *decimal.Decimal `json:"usd_per_mtok_at_current_volume"`
	// Utilization is the planned busy fraction at the peak hour.
	Utilization float64 `json:"utilization"`
	// PeakFactor is the peak-hour rate over the average rate.
	PeakFactor float64 `json:"peak_factor"`
	// InputShare is the fraction of tokens that are prompt (uncached + cached input).
	InputShare float64 `json:"input_share"`
	// OverheadMonthUSD is the fixed monthly overhead added to the GPU cost.
	OverheadMonthUSD decimal.Decimal `json:"overhead_month_usd"`
	// Notes state the assumptions in words.
	Notes []string `json:"notes"`
}

const (
	defaultOpenModel   = "llama-3.1-8b"
	defaultUtilization = 0.7
	defaultPeakFactor  = 2
)

// BreakEven compares the API model(s) with self-hosting an open model on GPUs. Self-host monthly
// cost at volume V is ceil(V·peak / (capacity·utilisation)) replicas × GPUs per replica ×
// $/GPU-hour × 730 + overhead, where capacity is a GPU's tokens per month at 100% busy; the API
// cost is V × the blended price of the current input/cached/output mix. Returns an error for
// invalid input, an API model not in the price table, or no GPU that can host the model.
func BreakEven(in BreakEvenInput) (BreakEvenResult, error) {
	subs, err := normalizeSubstitutes(in.Substitutes)
	if err != nil {
		return BreakEvenResult{}, fmt.Errorf("breakeven: %w", err)
	}
	for _, u := range in.Usage {
		if u.InputTokens < 0 || u.CachedTokens < 0 || u.OutputTokens < 0 {
			return BreakEvenResult{}, fmt.Errorf("breakeven: usage of %s: token counts must not be negative", u.Model)
		}
	}
	var mix *MixBreakEven
	if len(in.Usage) > 0 {
		if mix, err = breakEvenMix(in, subs); err != nil {
			return BreakEvenResult{}, fmt.Errorf("breakeven: %w", err)
		}
		if len(in.Models) == 0 && len(mix.Models) > 0 {
			// The default view: the largest-spend model with a substitute, on its own tokens.
			pick := mix.Models[0]
			for _, m := range mix.Models {
				if m.OpenModel != "" {
					pick = m
					break
				}
			}
			in.Models = []string{pick.Model}
			in.InputTokens, in.CachedTokens, in.OutputTokens = pick.InputTokens, pick.CachedTokens, pick.OutputTokens
		}
	}
	source := "yours"
	var none string
	if in.OpenModel == "" && in.OpenParams == 0 && len(in.Models) > 0 {
		open, row, src, known := substituteFor(in.Models[0], subs)
		switch {
		case known && open != NoSubstitute:
			in.OpenModel = open
			source = src
			if in.Precision == "" && src == "tier table" {
				in.Precision = row.Precision
			}
			if src == "tier table" {
				source = "tier table (" + row.Tier + ")"
			}
		case known:
			none = fmt.Sprintf("%s has no credible open substitute (%s); the figures compare it with %s anyway", in.Models[0], row.Evidence, defaultOpenModel)
			source = "default"
		default:
			none = fmt.Sprintf("%s is not in the tier table; compared with %s: name an open substitute of comparable quality", in.Models[0], defaultOpenModel)
			source = "default"
		}
	}
	in.Usage, in.Substitutes = nil, nil
	res, err := breakEvenOne(in)
	if err != nil {
		return res, err
	}
	res.Mix, res.OpenModelSource, res.NoSubstitute = mix, source, none
	if none != "" {
		res.Verdict = none + ". " + res.Verdict
	}
	return res, nil
}

// breakEvenOne is BreakEven for one set of tokens compared with one open model.
func breakEvenOne(in BreakEvenInput) (BreakEvenResult, error) {
	s, err := newScenario(in)
	if err != nil {
		return BreakEvenResult{}, fmt.Errorf("breakeven: %w", err)
	}
	volume := in.InputTokens + in.CachedTokens + in.OutputTokens
	res := BreakEvenResult{SelfHost: s.plan}
	for i := range s.prices {
		res.Models = append(res.Models, s.compare(i, in.Models[i], volume))
	}
	prim := res.Models[0]
	res.APICostMonthUSD = prim.APICostMonthUSD
	res.GPUsNeeded = s.gpus(float64(volume))
	res.Replicas = s.replicas(float64(volume))
	res.SelfHostCostMonthUSD = s.selfHost(float64(volume))
	res.BreakEvenTokensPerMonth = prim.BreakEvenTokensPerMonth
	res.UtilizationAtBreakEven = prim.UtilizationAtBreakEven
	res.Verdict = prim.Verdict
	if volume > 0 {
		v := res.SelfHostCostMonthUSD.Mul(million).Div(decimal.NewFromInt(volume)).Round(4)
		res.SelfHost.USDPerMTokAtCurrentVolume = &v
	}
	res.Curve = s.curve(in.Models, res.Models, volume)
	return res, nil
}

// scenario is a validated BreakEvenInput with the deployment unit chosen.
type scenario struct {
	prices      []LLMPrice
	blend       []decimal.Decimal // per model, $/1M tokens in the mix
	plan        SelfHostPlan
	unitGPUs    int
	unitMonth   decimal.Decimal // cost of one replica for 730 h
	unitCap     float64         // tokens/month one replica serves at the planned utilisation and peak
	overhead    decimal.Decimal
	inputShare  float64
	fullCapUnit float64 // tokens/month one replica serves at 100% busy
}

// newScenario validates in, fills in its defaults, prices the API models
// in the mix and chooses the self-hosted deployment unit. Every problem
// with in is reported at once.
func newScenario(in BreakEvenInput) (*scenario, error) {
	in, errs := withBreakEvenDefaults(in)
	a, prec, model, selfHostErrs := selfHostSetup(in)
	errs = append(errs, selfHostErrs...)
	prices, priceErrs := apiPrices(in)
	errs = append(errs, priceErrs...)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	s := &scenario{prices: prices, overhead: in.OverheadMonthUSD}
	s.inputShare, s.blend = blendedPrices(in, prices)
	if err := s.choose(in, model, prec, a); err != nil {
		return nil, err
	}
	if err := s.setCapacity(in); err != nil {
		return nil, err
	}
	return s, nil
}

// withBreakEvenDefaults returns in with its zero utilisation, peak factor
// and sequence length replaced by the defaults, and what is wrong with its
// counts, figures and GPU choice.
func withBreakEvenDefaults(in BreakEvenInput) (BreakEvenInput, []error) {
	var errs []error
	if len(in.Models) == 0 {
		errs = append(errs, errors.New("name at least one API model"))
	}
	if in.InputTokens < 0 || in.CachedTokens < 0 || in.OutputTokens < 0 {
		errs = append(errs, errors.New("token counts must not be negative"))
	}
	if in.Utilization == 0 {
		in.Utilization = defaultUtilization
	}
	if !(in.Utilization > 0 && in.Utilization <= 1) {
		errs = append(errs, fmt.Errorf("utilization must be in (0, 1], got %g", in.Utilization))
	}
	if in.PeakFactor == 0 {
		in.PeakFactor = defaultPeakFactor
	}
	if !(in.PeakFactor >= 1) || math.IsInf(in.PeakFactor, 0) {
		errs = append(errs, fmt.Errorf("peak_factor must be at least 1, got %g", in.PeakFactor))
	}
	if in.OverheadMonthUSD.IsNegative() {
		errs = append(errs, errors.New("overhead_month_usd must not be negative"))
	}
	errs = append(errs, gpuChoiceErrors(in)...)
	if in.SeqLen < 0 {
		errs = append(errs, fmt.Errorf("seq_len must be positive, got %d", in.SeqLen))
	}
	if in.SeqLen == 0 {
		in.SeqLen = defaultSeqLen
	}
	return in, errs
}

// gpuChoiceErrors returns what is wrong with the measured throughput, the
// GPU price and the GPU type taken together: a measured figure or a price
// alone cannot say which GPU it is for.
func gpuChoiceErrors(in BreakEvenInput) []error {
	var errs []error
	if !(in.ThroughputPerGPU >= 0) || math.IsInf(in.ThroughputPerGPU, 0) {
		errs = append(errs, fmt.Errorf("throughput must be a non-negative number, got %g", in.ThroughputPerGPU))
	}
	if in.GPUPriceUSDPerHour != nil && !in.GPUPriceUSDPerHour.IsPositive() {
		errs = append(errs, errors.New("gpu_price must be positive"))
	}
	if in.ThroughputPerGPU > 0 && in.GPU == "" && in.GPUPriceUSDPerHour == nil {
		errs = append(errs, errors.New("with a measured throughput, name the GPU or its price per GPU-hour"))
	}
	if in.GPUPriceUSDPerHour != nil && in.GPU == "" && in.ThroughputPerGPU <= 0 {
		errs = append(errs, errors.New("with a GPU price but no GPU type, give a measured throughput"))
	}
	return errs
}

// selfHostSetup returns the throughput model's assumptions (the defaults
// when none are given), the precision and the open model to self-host,
// and what is wrong with each.
func selfHostSetup(in BreakEvenInput) (Assumptions, Precision, Model, []error) {
	var errs []error
	a := in.Assumptions
	if a == (Assumptions{}) {
		a = DefaultAssumptions()
	}
	if err := a.Validate(); err != nil {
		errs = append(errs, err)
	}
	prec, err := ParsePrecision(string(in.Precision))
	if err != nil {
		errs = append(errs, err)
	}
	model, err := openModel(in)
	if err != nil {
		errs = append(errs, err)
	}
	return a, prec, model, errs
}

// openModel returns the self-hosted model: the one named, a custom one of
// OpenParams parameters, or the default.
func openModel(in BreakEvenInput) (Model, error) {
	switch {
	case in.OpenModel != "":
		return LookupModel(in.OpenModel)
	case in.OpenParams != 0:
		return CustomModel(in.OpenParams)
	default:
		return LookupModel(defaultOpenModel)
	}
}

// apiPrices returns the price-table row of each API model compared (from
// DefaultLLMPrices when in has no table); a model the table lacks is an
// error.
func apiPrices(in BreakEvenInput) ([]LLMPrice, []error) {
	table := in.Prices
	if table == nil {
		table = DefaultLLMPrices()
	}
	var prices []LLMPrice
	var errs []error
	for _, name := range in.Models {
		p, ok := table.Lookup(name)
		if !ok {
			errs = append(errs, fmt.Errorf("API model %q is not in the price table (%s); add it as an override", name, table.Source))
			continue
		}
		prices = append(prices, p)
	}
	return prices, errs
}

// blendedPrices returns the input tokens' share of the mix and each API
// model's price per 1M tokens in that mix; with no tokens given, the mix
// is 3 input to 1 output.
func blendedPrices(in BreakEvenInput, prices []LLMPrice) (inputShare float64, blend []decimal.Decimal) {
	uncached, cached, output := in.InputTokens, in.CachedTokens, in.OutputTokens
	if uncached+cached+output == 0 {
		uncached, output = 3, 1 // no usage: assume a 3:1 input:output mix
	}
	inputShare = float64(uncached+cached) / float64(uncached+cached+output)
	for _, p := range prices {
		blend = append(blend, p.BlendedPerMTok(uncached, cached, output))
	}
	return inputShare, blend
}

// setCapacity sets, once the unit is chosen, the tokens a month one
// replica serves (at full use, and at the planned utilisation and peak),
// the price per token at full use and the plan's notes. A capacity out of
// range is an error.
func (s *scenario) setCapacity(in BreakEvenInput) error {
	s.plan.Utilization, s.plan.PeakFactor, s.plan.InputShare, s.plan.OverheadMonthUSD = in.Utilization, in.PeakFactor, round2(s.inputShare), in.OverheadMonthUSD
	s.fullCapUnit = s.plan.TokensPerSecPerGPU * float64(s.unitGPUs) * 3600 * HoursPerMonth
	s.unitCap = s.fullCapUnit * in.Utilization / in.PeakFactor
	s.plan.CapacityTokensPerMonthPerGPU = math.Round(s.plan.TokensPerSecPerGPU * 3600 * HoursPerMonth)
	if !finite(s.fullCapUnit) || !(s.fullCapUnit/1e6 > 0) {
		// Extreme inputs would reach an infinite or zero capacity, which
		// decimal.NewFromFloat and Div panic on.
		return errors.New("the self-hosting estimate is out of range: check the throughput and assumptions")
	}
	s.plan.USDPerMTokAtFullUtilization = s.unitMonth.Div(decimal.NewFromFloat(s.fullCapUnit / 1e6)).Round(4)
	s.plan.Notes = append(s.plan.Notes,
		fmt.Sprintf("GPUs are paid for %d h/month whether busy or not; replicas are sized for the peak hour (%.1f× the average rate) at %.0f%% busy",
			HoursPerMonth, in.PeakFactor, in.Utilization*100))
	if in.InputTokens+in.CachedTokens+in.OutputTokens == 0 {
		s.plan.Notes = append(s.plan.Notes, "no usage given: a 3:1 input:output mix is assumed for prices and throughput")
	}
	return nil
}

// choose sets the deployment unit (one replica) and its price and throughput.
func (s *scenario) choose(in BreakEvenInput, m Model, p Precision, a Assumptions) error {
	cat := in.Catalog
	if cat == nil {
		cat = DefaultCatalog()
	}
	s.plan.OpenModel = m.Name
	s.plan.Pricing = pricingOnDemand
	spotOverhead := 1.0
	if in.Spot {
		s.plan.Pricing = pricingSpot
		spotOverhead = a.ServingSpotOverhead()
		if !finite(spotOverhead) {
			return errors.New("the spot overhead is out of range: check the spot assumptions")
		}
	}
	sm := servingModel{m: m, p: p, a: a, seqLen: in.SeqLen, measured: in.ThroughputPerGPU, inputShare: s.inputShare}
	s.plan.ThroughputSource = "model"
	if in.ThroughputPerGPU > 0 {
		s.plan.ThroughputSource = "measured (user)"
	}

	var gpu GPU
	if in.GPU != "" {
		var ok bool
		if gpu, ok = cat.GPU(in.GPU); !ok {
			return fmt.Errorf("unknown GPU %q", in.GPU)
		}
	}
	if in.GPUPriceUSDPerHour != nil {
		return s.chooseAtUserPrice(sm, gpu, in.GPUPriceUSDPerHour.Mul(decimal.NewFromFloat(spotOverhead)))
	}
	return s.chooseFromCatalog(in, cat, sm, gpu, spotOverhead)
}

// chooseAtUserPrice sets the unit for a price per GPU-hour the user entered
// (spot overhead included): the fewest GPUs of the named type that hold
// the model, or one GPU when no type is named.
func (s *scenario) chooseAtUserPrice(sm servingModel, gpu GPU, perGPUHour decimal.Decimal) error {
	n, err := sm.fewestGPUs(gpu)
	if err != nil {
		return err
	}
	tps, err := sm.tokensPerSecPerGPU(gpu, n)
	if err != nil {
		return err
	}
	s.setUnit(gpu.Name, "", "", n, perGPUHour, tps)
	if gpu.Name == "" {
		s.plan.GPU = "GPU at the entered price"
	}
	return nil
}

// chooseFromCatalog sets the unit to the catalog instance ("advisor picks")
// that serves the current volume for the least money in whole replicas;
// ties (e.g. everything fits in one replica) go to the lowest $/token at
// full use. Instances with a fractional GPU or a price flagged as
// suspicious are left out, and so are other GPU types and providers than
// the ones named.
func (s *scenario) chooseFromCatalog(in BreakEvenInput, cat *Catalog, sm servingModel, gpu GPU, spotOverhead float64) error {
	providers := map[string]bool{}
	for _, pr := range in.Providers {
		providers[strings.ToLower(strings.TrimSpace(pr))] = true
	}
	volume := float64(in.InputTokens + in.CachedTokens + in.OutputTokens)
	var best *unitCandidate
	for _, inst := range cat.instances {
		g, ok := cat.gpus[inst.GPU]
		if !ok || inst.Fractional() || inst.Suspicious || (gpu.Name != "" && g.Name != gpu.Name) ||
			(len(providers) > 0 && !providers[inst.Provider]) ||
			((in.DatacenterOnly == nil || *in.DatacenterOnly) && (g.Class == ClassConsumer || Marketplace(inst.Provider))) {
			continue
		}
		if c, ok := sm.candidate(in, inst, g, spotOverhead, volume); ok && c.beats(best) {
			best = &c
		}
	}
	if best == nil {
		what := "any catalog GPU"
		if gpu.Name != "" {
			what = gpu.Name
		}
		return fmt.Errorf("no %s price for %s that can host %s; enter a GPU price", s.plan.Pricing, what, sm.m.Name)
	}
	n := int(best.in.GPUCount)
	s.setUnit(best.in.GPU, best.in.Provider, best.in.InstanceType, n, best.price.Div(decimal.NewFromInt(int64(n))), best.tps)
	return nil
}

// servingModel is the self-hosted open model with what its throughput is
// estimated from (precision, assumptions, context, the usage's input
// share), or the throughput the user measured.
type servingModel struct {
	m          Model
	p          Precision
	a          Assumptions
	seqLen     int
	measured   float64 // the user's tokens/s per GPU; 0 means estimate it
	inputShare float64 // of the tokens in the mix, the share that is input
}

// tokensPerSecPerGPU returns the throughput per GPU of a replica on n GPUs
// of type g, in the usage's input:output mix, or the measured throughput,
// which still requires the model to fit when the GPU type is known.
func (sm servingModel) tokensPerSecPerGPU(g GPU, n int) (float64, error) {
	if sm.measured > 0 {
		if g.Name != "" {
			if _, err := EstimateThroughput(sm.m, sm.p, g, n, 1, 1, sm.a); err != nil {
				return 0, err
			}
		}
		return sm.measured, nil
	}
	t, err := EstimateThroughput(sm.m, sm.p, g, n, sm.seqLen, 0, sm.a)
	if err != nil {
		return 0, err
	}
	return t.MixedTokensPerSec(sm.inputShare) / float64(n), nil
}

// fewestGPUs returns the fewest GPUs of type g (1, 2, 4 or 8) that hold
// the model and one sequence of the full context, or 1 when no type is
// named.
func (sm servingModel) fewestGPUs(g GPU) (int, error) {
	if g.Name == "" {
		return 1, nil
	}
	for n := 1; n <= 8; n *= 2 {
		if _, err := EstimateThroughput(sm.m, sm.p, g, n, sm.seqLen, 1, sm.a); err == nil {
			return n, nil
		}
	}
	_, err := EstimateThroughput(sm.m, sm.p, g, 8, sm.seqLen, 1, sm.a)
	return 0, fmt.Errorf("%s does not fit on 8× %s: %w", sm.m.Name, g.Name, err)
}

// unitCandidate is a catalog instance priced as the deployment unit.
type unitCandidate struct {
	in    Instance
	price decimal.Decimal // per instance-hour, spot overhead included
	tps   float64         // tokens/s per GPU
	month float64         // USD per month for the replicas the volume needs
	perM  float64         // USD per 1M tokens at full use
}

// candidate prices inst (with GPU g) as the deployment unit for a monthly
// volume. ok is false when inst has no price for the chosen pricing or
// the model does not run on it.
func (sm servingModel) candidate(in BreakEvenInput, inst Instance, g GPU, spotOverhead, volume float64) (c unitCandidate, ok bool) {
	price := inst.OnDemand
	if in.Spot {
		price = inst.Spot
	}
	if price == nil {
		return c, false
	}
	n := int(inst.GPUCount)
	tps, err := sm.tokensPerSecPerGPU(g, n)
	if err != nil || tps <= 0 {
		return c, false
	}
	eff := price.Mul(decimal.NewFromFloat(spotOverhead))
	capTok := tps * float64(n) * 3600 * HoursPerMonth * in.Utilization / in.PeakFactor
	month := eff.InexactFloat64() * HoursPerMonth * math.Max(1, math.Ceil(volume/capTok-1e-9))
	perM := eff.InexactFloat64() / (tps * float64(n) * 3600 / 1e6)
	return unitCandidate{inst, eff, tps, month, perM}, true
}

// beats reports whether c is cheaper per month than best (nil when there is
// none yet), or as cheap and cheaper per token.
func (c *unitCandidate) beats(best *unitCandidate) bool {
	return best == nil || c.month < best.month || c.month == best.month && c.perM < best.perM
}

func (s *scenario) setUnit(gpu, provider, instanceType string, n int, perGPUHour decimal.Decimal, tpsPerGPU float64) {
	s.unitGPUs = n
	s.plan.GPU, s.plan.Provider, s.plan.InstanceType = gpu, provider, instanceType
	s.plan.GPUsPerReplica = n
	s.plan.USDPerGPUHour = perGPUHour.Round(4)
	s.plan.TokensPerSecPerGPU = math.Round(tpsPerGPU)
	s.unitMonth = perGPUHour.Mul(decimal.NewFromInt(int64(n) * HoursPerMonth))
}

// replicas is the whole replicas a monthly volume needs (at least one: a deployment exists).
func (s *scenario) replicas(volume float64) int {
	return max(1, int(math.Ceil(volume/s.unitCap-1e-9)))
}

func (s *scenario) gpus(volume float64) int { return s.replicas(volume) * s.unitGPUs }

func (s *scenario) selfHost(volume float64) decimal.Decimal {
	return s.unitMonth.Mul(decimal.NewFromInt(int64(s.replicas(volume)))).Add(s.overhead).Round(2)
}

// breakEven finds the lowest volume where self-hosting costs no more than the API at blend $/1M,
// walking the step function segment by segment. ok is false when it never does.
func (s *scenario) breakEven(blend decimal.Decimal) (volume float64, ok bool) {
	p := blend.InexactFloat64() / 1e6 // $ per token
	unit, over := s.unitMonth.InexactFloat64(), s.overhead.InexactFloat64()
	if p <= 0 || p*s.unitCap <= unit && (over > 0 || p*s.unitCap < unit) {
		return 0, false
	}
	// In segment k (k replicas, volume in ((k−1)·cap, k·cap]) the API catches up at (k·unit+over)/p.
	for k := 1; k < 1_000_000; k++ {
		v := (float64(k)*unit + over) / p
		if v <= float64(k)*s.unitCap*(1+1e-12) {
			return math.Max(v, float64(k-1)*s.unitCap), true
		}
	}
	return 0, false
}

func (s *scenario) compare(i int, name string, volume int64) ModelBreakEven {
	p, blend := s.prices[i], s.blend[i]
	api := blend.Mul(decimal.NewFromInt(volume)).Div(million).Round(2)
	mb := ModelBreakEven{Model: name, PriceModel: p.Model, PriceSource: p.Source, APICostMonthUSD: api, APIUSDPerMTok: blend.Round(4)}
	self := s.selfHost(float64(volume))
	where := fmt.Sprintf("%s on %s", s.plan.OpenModel, s.plan.GPU)
	now := fmt.Sprintf("at your %s/month", humanTokens(float64(volume)))
	v, ok := s.breakEven(blend)
	if !ok {
		fullPerM := s.plan.USDPerMTokAtFullUtilization
		mb.NeverReason = fmt.Sprintf("%s at %s per 1M tokens is cheaper than %s at %s per 1M tokens even with the GPUs 100%% busy",
			name, quantity.FormatMoney(blend, "USD"), where, quantity.FormatMoney(fullPerM, "USD"))
		if blend.GreaterThan(fullPerM) {
			mb.NeverReason = fmt.Sprintf("%s at %s per 1M tokens stays cheaper than %s at the planned %.0f%% utilisation and %.1f× peak (%s per 1M tokens at 100%% busy)",
				name, quantity.FormatMoney(blend, "USD"), where, s.plan.Utilization*100, s.plan.PeakFactor, quantity.FormatMoney(fullPerM, "USD"))
		}
		if !s.overhead.IsZero() && blend.GreaterThan(fullPerM) {
			mb.NeverReason += fmt.Sprintf(", after %s/month fixed overhead", quantity.FormatMoney(s.overhead, "USD"))
		}
		mb.Verdict = fmt.Sprintf("Self-hosting never wins: %s; %s the API costs %s vs %s self-hosted.", mb.NeverReason, now, quantity.FormatMoney(api, "USD"), quantity.FormatMoney(self, "USD"))
		return mb
	}
	bv := int64(math.Ceil(v))
	mb.BreakEvenTokensPerMonth = &bv
	util := round4(v / (float64(s.replicas(v)) * s.fullCapUnit))
	mb.UtilizationAtBreakEven = &util
	head := fmt.Sprintf("Self-hosting %s wins over %s above %s tokens/month (%.0f%% average GPU utilisation)", where, name, humanTokens(v), util*100)
	switch {
	case volume == 0:
		mb.Verdict = fmt.Sprintf("%s; with no usage the API costs nothing while a deployment costs %s/month.", head, quantity.FormatMoney(self, "USD"))
	case api.LessThan(self):
		mb.Verdict = fmt.Sprintf("%s; %s the API is %s cheaper (%s vs %s).", head, now, ratio(self, api), quantity.FormatMoney(api, "USD"), quantity.FormatMoney(self, "USD"))
	default:
		mb.Verdict = fmt.Sprintf("%s; %s self-hosting is %s cheaper (%s vs %s).", head, now, ratio(api, self), quantity.FormatMoney(self, "USD"), quantity.FormatMoney(api, "USD"))
	}
	return mb
}

func (s *scenario) curve(names []string, models []ModelBreakEven, volume int64) []CurvePoint {
	set := map[int64]bool{}
	for e := 6.0; e <= 12.0001; e += 0.25 {
		set[int64(math.Round(math.Pow(10, e)))] = true
	}
	if volume > 0 {
		set[volume] = true
	}
	for _, m := range models {
		if m.BreakEvenTokensPerMonth != nil {
			set[*m.BreakEvenTokensPerMonth] = true
		}
	}
	// Step edges, so a chart draws the whole-GPU steps (bounded to keep the curve small).
	if n := int(1e12 / s.unitCap); n <= 100 {
		for k := 1; k <= n; k++ {
			edge := int64(math.Floor(float64(k) * s.unitCap))
			if edge >= 1e6 {
				set[edge] = true
				set[edge+1] = true
			}
		}
	}
	vols := make([]int64, 0, len(set))
	for v := range set {
		vols = append(vols, v)
	}
	sort.Slice(vols, func(i, j int) bool { return vols[i] < vols[j] })
	out := make([]CurvePoint, 0, len(vols))
	for _, v := range vols {
		pt := CurvePoint{TokensPerMonth: v, SelfHostUSD: s.selfHost(float64(v)), APIUSDByModel: map[string]decimal.Decimal{}}
		for i, b := range s.blend {
			c := b.Mul(decimal.NewFromInt(v)).Div(million).Round(2)
			if i == 0 {
				pt.APIUSD = c
			}
			pt.APIUSDByModel[names[i]] = c
		}
		out = append(out, pt)
	}
	return out
}

// ratio formats a/b as "7.0×" (or "12×" from 10 up).
func ratio(a, b decimal.Decimal) string {
	if b.IsZero() {
		return "infinitely"
	}
	r := a.Div(b).InexactFloat64()
	if r >= 10 {
		return fmt.Sprintf("%.0f×", r)
	}
	return fmt.Sprintf("%.1f×", r)
}

// humanTokens formats 3.1e9 as "3.1B", 310e6 as "310M".
func humanTokens(v float64) string {
	switch {
	case v >= 1e12:
		return fmt.Sprintf("%.3gT", v/1e12)
	case v >= 1e9:
		return fmt.Sprintf("%.3gB", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.3gk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

func round4(v float64) float64 { return math.Round(v*1e4) / 1e4 }
