package pricing

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/quantity"
)

// AdviceRequest describes one job for Advise. Zero values mean the documented defaults.
type AdviceRequest struct {
	// Job is the job type (required).
	Job JobType `json:"job"`
	// Model is a known open model name (see Models); when empty, Params is used.
	Model string `json:"model"`
	// Params is a custom parameter count, used when Model is empty (see CustomModel).
	Params float64 `json:"params"`
	// Precision of the weights; default bf16. QLoRA always holds a 4-bit base (QLoRABytesPerParam)
	// and computes in bf16, whatever this says.
	Precision Precision `json:"precision"`
	// Tokens is the training tokens (training, fine-tuning, LoRA, QLoRA) or, for batch inference,
	// the tokens to generate. Required for those jobs; unused for serving.
	Tokens float64 `json:"tokens"`
	// InputTokens is, for batch inference, the prompt tokens to read (prefilled at the compute-bound rate).
	InputTokens float64 `json:"input_tokens"`
	// SeqLen is the training sequence length or the context per sequence for inference (default 4096).
	SeqLen int `json:"seq_len"`
	// Concurrency is, for serving, the concurrent sequences to hold; for batch inference, a cap on the
	// batch (0 = as large as memory allows).
	Concurrency int `json:"concurrency"`
	// TargetTokensPerSec is, for serving, the generated tokens per second to sustain.
	TargetTokensPerSec float64 `json:"target_tokens_per_s"`
	// RequestsPerSec is, for serving, the requests arriving per second (instead of a concurrency).
	RequestsPerSec float64 `json:"requests_per_s"`
	// PromptTokens and OutputTokens are a serving request's lengths (default 1,024 and 256).
	PromptTokens int `json:"prompt_tokens"`
	OutputTokens int `json:"output_tokens"`
	// TTFTMs and TPOTMs are the serving latency targets, time to first token and time per output
	// token in milliseconds, at LatencyPercentile (defaults 2,000 ms, 50 ms, 90).
	TTFTMs            float64 `json:"ttft_ms"`
	TPOTMs            float64 `json:"tpot_ms"`
	LatencyPercentile float64 `json:"latency_percentile"`
	// DeadlineHours, when positive, excludes configurations that take longer (training and batch
	// jobs use more nodes/replicas first, up to MaxGPUs). Training-type jobs default to
	// DefaultTrainingDeadlineHours (60 days).
	DeadlineHours float64 `json:"deadline_hours"`
	// Spot allows spot/preemptible prices (with the interruption overhead); on-demand is always considered.
	Spot bool `json:"spot"`
	// Providers restricts the search (empty = all).
	Providers []string `json:"providers"`
	// GPU restricts the search to one GPU type (any spelling NormalizeGPU knows).
	GPU string `json:"gpu"`
	// MaxGPUs caps the GPUs of one configuration across nodes/replicas (default 64; for training-type
	// jobs derived from the job, see derivedMaxGPUs).
	MaxGPUs int `json:"max_gpus"`
	// DatacenterOnly leaves out consumer GPUs and peer-marketplace offers; nil means
	// DatacenterOnlyDefault(Job): on for serving, training and full fine-tuning.
	DatacenterOnly *bool `json:"datacenter_only"`
	// IncludeSuspicious uses prices flagged as suspicious (GCP a2/a3/a4 tiers), marking them in the reason.
	IncludeSuspicious bool `json:"include_suspicious"`
	// MaxOptions caps the returned options (default 20; negative = all).
	MaxOptions int `json:"max_options"`
	// Assumptions are the model constants; the zero value means DefaultAssumptions().
	Assumptions Assumptions `json:"assumptions"`
}

// Advice is the result of Advise; its JSON is what `burnrate advise --json` and POST /api/v1/advise print
// (docs/advisor.md, "Advisor output").
// Money is decimal.Decimal, which marshals as a JSON string ("123.45") like every amount in the API.
type Advice struct {
	// Options are the configurations that fit, cheapest job first; for serving, those that meet
	// the latency target.
	Options []Option `json:"options"`
	// MissedTarget are, for serving, the configurations that hold the model but miss the latency
	// target, cheapest first, each with its Miss.
	MissedTarget []Option `json:"missed_target,omitempty"`
	// Excluded are the configurations that were considered and rejected, with why.
	Excluded []Excluded `json:"excluded"`
	// Assumptions echo every constant and derived model figure used.
	Assumptions AdviceAssumptions `json:"assumptions"`
	// Summary is one sentence on why the winner wins.
	Summary string `json:"summary"`
	// TotalOptions is the number of feasible options before MaxOptions was applied.
	TotalOptions int `json:"-"`
}

// Option is one feasible configuration: n instances of one type, priced on-demand or spot.
type Option struct {
	// Provider is the cloud or marketplace, e.g. "aws".
	Provider string `json:"provider"`
	// InstanceType is the provider's machine type.
	InstanceType string `json:"instance_type"`
	// GPU is the canonical GPU name.
	GPU string `json:"gpu"`
	// GPUs is the total GPU count (Instances × GPUsPerInstance).
	GPUs int `json:"gpus"`
	// Instances is the number of machines (training nodes or inference replicas).
	Instances int `json:"instances"`
	// GPUsPerInstance is the GPUs of one machine.
	GPUsPerInstance int `json:"gpus_per_instance"`
	// Precision is what the job runs at on this GPU (it differs from the request's when the GPU
	// lacks the format: fp16 on V100 for bf16; see Notes).
	Precision Precision `json:"precision"`
	// Badge is "consumer", "workstation" or "marketplace" for offers that are not datacenter GPUs
	// from a cloud, with a one-line Caveat.
	Badge  string `json:"badge,omitempty"`
	Caveat string `json:"caveat,omitempty"`
	// Notes say what was changed to run the job here (e.g. the precision).
	Notes []string `json:"notes,omitempty"`
	// Pricing is "on-demand" or "spot".
	Pricing string `json:"pricing"`
	// Hours is the wall-clock time (spot includes the interruption overhead); for serving, ServingHours.
	Hours float64 `json:"hours"`
	// GPUHours is GPUs × Hours.
	GPUHours float64 `json:"gpu_hours"`
	// CostUSD is the cost of the whole job (serving: of ServingHours), rounded to cents.
	CostUSD decimal.Decimal `json:"cost_usd"`
	// USDPerMTok is the cost per 1M tokens processed (inference jobs; null for training jobs).
	USDPerMTok *decimal.Decimal `json:"usd_per_mtok"`
	// MemoryNeededGB is what the configuration uses across all its GPUs.
	MemoryNeededGB float64 `json:"memory_needed_gb"`
	// MemoryAvailableGB is the usable GPU memory of the configuration: per GPU, MemoryFraction of
	// the card less RuntimeReserveGB.
	MemoryAvailableGB float64 `json:"memory_available_gb"`
	// MemoryMarginGB is MemoryAvailableGB − MemoryNeededGB.
	MemoryMarginGB float64 `json:"memory_margin_gb"`
	// TTFTMs and TPOTMs are, for serving, the latencies expected at the load, at the request's
	// percentile; OutputTokensPerSec the generated tokens per second served; Batch the sequences
	// each replica decodes at once; Miss why the latency target is missed.
	TTFTMs             float64 `json:"ttft_ms,omitempty"`
	TPOTMs             float64 `json:"tpot_ms,omitempty"`
	OutputTokensPerSec float64 `json:"output_tokens_per_s,omitempty"`
	Batch              int     `json:"batch,omitempty"`
	Miss               string  `json:"miss,omitempty"`
	// Tight is set when the configuration fits only in the headroom memory_fraction keeps (the
	// reason says how many GB stay free).
	Tight bool `json:"tight,omitempty"`
	// Reason says in plain words why this configuration works and what drives its cost.
	Reason string `json:"reason"`

	// USDPerHour is the price of the whole configuration for one hour (instances × the hourly price).
	USDPerHour decimal.Decimal `json:"usd_per_hour"`
	// HourlyUSD is the price of one instance-hour used. Go callers only.
	HourlyUSD decimal.Decimal `json:"-"`
	// TokensPerSec is the delivered throughput for inference jobs. Go callers only.
	TokensPerSec float64 `json:"-"`
	// Overhead is the spot wall-clock/capacity multiplier (1 for on-demand). Go callers only.
	Overhead float64 `json:"-"`
	// PriceSource is where the price comes from (catalog row source or override label). Go callers only.
	PriceSource string `json:"-"`
	// Flags are the instance's data-quality notes. Go callers only.
	Flags []string `json:"-"`
}

// Excluded is a configuration that was considered and rejected.
type Excluded struct {
	// GPU is the instance's GPU.
	GPU string `json:"gpu"`
	// InstanceType is the provider's machine type.
	InstanceType string `json:"instance_type"`
	// Reason says why, e.g. "needs 131.4 GB, 80 GB available".
	Reason string `json:"reason"`
	// Provider of the instance. Go callers only.
	Provider string `json:"-"`
}

// AdviceAssumptions is the "assumptions" object of an Advice: the editable constants plus the
// figures derived for this request.
type AdviceAssumptions struct {
	Assumptions
	// Job is the job type sized.
	Job JobType `json:"job"`
	// Model is the resolved model with its architecture figures.
	Model Model `json:"model"`
	// Precision is the weight precision used.
	Precision Precision `json:"precision"`
	// Tokens is the training tokens or tokens to generate.
	Tokens float64 `json:"tokens"`
	// InputTokens is the prompt tokens of a batch-inference job.
	InputTokens float64 `json:"input_tokens,omitempty"`
	// SeqLen is the sequence length / context used.
	SeqLen int `json:"seq_len"`
	// Concurrency is the serving concurrency or batch cap.
	Concurrency int `json:"concurrency,omitempty"`
	// TargetTokensPerSec is the serving throughput target.
	TargetTokensPerSec float64 `json:"target_tokens_per_s,omitempty"`
	// Serving is the load and latency target serving options are judged against.
	Serving *ServingLoad `json:"serving,omitempty"`
	// DeadlineHours is the deadline applied (0 = none).
	DeadlineHours float64 `json:"deadline_hours,omitempty"`
	// FitOnly is set for a training-type job given without tokens: the options hold it, ranked by
	// the price of an hour, without time or cost.
	FitOnly bool `json:"fit_only,omitempty"`
	// MaxGPUs is the GPU cap per configuration applied.
	MaxGPUs int `json:"max_gpus"`
	// DatacenterOnly is whether consumer GPUs and marketplace offers were left out.
	DatacenterOnly bool `json:"datacenter_only"`
	// SpotOverhead is the wall-clock multiplier applied to spot options.
	SpotOverhead float64 `json:"spot_overhead"`
	// WeightsGB is the model's weight size at the chosen precision.
	WeightsGB float64 `json:"weights_gb"`
	// KVBytesPerToken is the KV cache per token per sequence.
	KVBytesPerToken float64 `json:"kv_bytes_per_token"`
	// TrainingFLOPs is the total compute of a training-type job.
	TrainingFLOPs float64 `json:"training_flops,omitempty"`
	// Notes state the assumptions in words.
	Notes []string `json:"notes"`
	// PriceSource describes the catalog used.
	PriceSource string `json:"price_source"`
	// PriceAsOf is the date of the catalog's prices.
	PriceAsOf string `json:"price_as_of"`
}

// DefaultTrainingDeadlineHours is the deadline of training-type jobs that name none: 60 days. A
// run that takes longer is no plan; without a deadline the cheapest answer is one node for years.
const DefaultTrainingDeadlineHours = 60 * 24

const (
	defaultSeqLen     = 4096
	defaultMaxGPUs    = 64
	defaultMaxOptions = 20
	pricingOnDemand   = "on-demand"
	pricingSpot       = "spot"
)

// Advise ranks every instance of cat (DefaultCatalog when nil) that can run the job by its cost for
// the whole job (not its hourly price), cheapest first. Returns an error for invalid input: an
// unknown model (listing the known ones), missing or negative token counts, an unknown GPU or
// provider, or out-of-range assumptions.
func Advise(req AdviceRequest, cat *Catalog) (Advice, error) {
	if cat == nil {
		cat = DefaultCatalog()
	}
	r, err := normalizeRequest(req, cat)
	if err != nil {
		return Advice{}, fmt.Errorf("advise: %w", err)
	}
	out := Advice{Options: []Option{}, Excluded: []Excluded{}, Assumptions: r.echo(cat)}
	for _, in := range cat.instances {
		if !r.wants(in) {
			continue
		}
		opts, excl := r.evaluate(in, cat)
		out.Options = append(out.Options, opts...)
		out.Excluded = append(out.Excluded, excl...)
	}
	var meets []Option
	for _, o := range out.Options {
		if o.Miss != "" {
			out.MissedTarget = append(out.MissedTarget, o)
		} else {
			meets = append(meets, o)
		}
	}
	out.Options = append([]Option{}, meets...)
	sortOptions(out.MissedTarget)
	sortOptions(out.Options)
	out.Summary = summarize(out.Options, r)
	if r.fitOnly && len(out.Options) > 0 {
		w := out.Options[0]
		out.Summary = fmt.Sprintf("No tokens given, so no time or cost: these configurations hold the job, cheapest hour first; %s %s (%s, %s) at %s/h. Give tokens for the job's time and cost.",
			w.Provider, w.InstanceType, w.Config(), w.Pricing, quantity.FormatMoney(w.USDPerHour, "USD"))
	}
	if len(out.Options) == 0 {
		out.Summary = r.nothingFits()
		if len(out.MissedTarget) > 0 {
			m := out.MissedTarget[0]
			out.Summary = fmt.Sprintf("No configuration meets %s; the cheapest that holds the load, %s %s (%s, %s, %s per %g h), misses it: %s.",
				r.load.target(), m.Provider, m.InstanceType, m.Config(), m.Pricing, quantity.FormatMoney(m.CostUSD, "USD"), r.a.ServingHours, m.Miss)
		}
	}
	out.TotalOptions = len(out.Options)
	if r.MaxOptions >= 0 && len(out.Options) > r.MaxOptions {
		out.Options = out.Options[:r.MaxOptions]
	}
	if r.MaxOptions >= 0 && len(out.MissedTarget) > r.MaxOptions {
		out.MissedTarget = out.MissedTarget[:r.MaxOptions]
	}
	return out, nil
}

// sortOptions orders options cheapest job first, then cheapest hour,
// shortest, and by name.
func sortOptions(opts []Option) {
	sort.SliceStable(opts, func(i, j int) bool {
		a, b := opts[i], opts[j]
		if c := a.CostUSD.Cmp(b.CostUSD); c != 0 {
			return c < 0
		}
		if c := a.USDPerHour.Cmp(b.USDPerHour); c != 0 {
			return c < 0 // fit only: no job cost, the price of an hour
		}
		if a.Hours != b.Hours {
			return a.Hours < b.Hours
		}
		return a.Provider+a.InstanceType < b.Provider+b.InstanceType
	})
}

// request is a validated AdviceRequest with its model resolved.
type request struct {
	AdviceRequest
	model           Model
	gpuFilter       string
	providers       map[string]bool
	a               Assumptions
	datacenterOnly  bool
	defaultDeadline bool // the deadline is DefaultTrainingDeadlineHours
	fitOnly         bool // a training-type job without tokens: memory fit only
	load            ServingLoad
	derivedCap      bool // MaxGPUs came from derivedMaxGPUs
	// limits records, across the instances evaluated, what would make the
	// job fit when a deadline or the GPU cap rules configurations out.
	limits limitNeeds
}

// limitNeeds is the least a limit would have to be raised to for some
// configuration to fit.
type limitNeeds struct {
	gpus      int     // fewest GPUs that meet the deadline, over the cap
	gpusOn    string  // on which instance type
	hours     float64 // shortest time within the cap, over the deadline
	hoursOn   string
	hoursGPUs int
}

func (l *limitNeeds) needGPUs(n int, on string) {
	if l.gpus == 0 || n < l.gpus {
		l.gpus, l.gpusOn = n, on
	}
}

func (l *limitNeeds) needHours(h float64, gpus int, on string) {
	if l.hours == 0 || h < l.hours {
		l.hours, l.hoursGPUs, l.hoursOn = h, gpus, on
	}
}

// normalizeRequest validates req against cat and fills in the defaults. It
// reports every problem it finds at once, joined, rather than the first.
func normalizeRequest(req AdviceRequest, cat *Catalog) (*request, error) {
	r := &request{AdviceRequest: req}
	var errs []error
	job, err := ParseJobType(string(req.Job))
	if err != nil {
		errs = append(errs, err)
	}
	r.Job = job
	if r.model, err = requestModel(req); err != nil {
		errs = append(errs, err)
	}
	var perrs []error
	r.Precision, perrs = precisionFor(job, req.Precision)
	errs = append(errs, perrs...)
	errs = append(errs, sizeErrors(job, req)...)
	if r.SeqLen == 0 {
		r.SeqLen = defaultSeqLen
	}
	r.fitOnly = job.IsTraining() && req.Tokens == 0
	if job == JobServing {
		r.load = servingLoad(req)
	}
	if r.DeadlineHours == 0 && job.IsTraining() && !r.fitOnly {
		r.DeadlineHours, r.defaultDeadline = DefaultTrainingDeadlineHours, true
	}
	r.datacenterOnly = DatacenterOnlyDefault(job)
	if req.DatacenterOnly != nil {
		r.datacenterOnly = *req.DatacenterOnly
	}
	if r.MaxOptions == 0 {
		r.MaxOptions = defaultMaxOptions
	}
	r.a = req.Assumptions
	if r.a == (Assumptions{}) {
		r.a = DefaultAssumptions()
	}
	if err := r.a.Validate(); err != nil {
		errs = append(errs, err)
	}
	if r.gpuFilter, err = canonicalGPU(cat, req.GPU); err != nil {
		errs = append(errs, err)
	}
	r.providers, perrs = providerSet(cat, req.Providers)
	errs = append(errs, perrs...)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if r.MaxGPUs == 0 {
		r.MaxGPUs = defaultMaxGPUs
		if job.IsTraining() {
			if n := r.derivedMaxGPUs(cat); n > r.MaxGPUs {
				r.MaxGPUs, r.derivedCap = n, true
			}
		}
	}
	return r, nil
}

// derivedMaxGPUs is the GPU cap of a training-type job that names none:
// eight times the GPUs the fastest GPU type considered would need to finish
// within the deadline at its single-GPU rate (rounded up to whole 8-GPU
// nodes), so that slower GPUs still compete and a 405B run, whose
// communication and restarts grow with its cluster, gets a real one.
func (r *request) derivedMaxGPUs(cat *Catalog) int {
	best := math.Inf(1)
	for _, in := range cat.instances {
		g, ok := cat.gpus[in.GPU]
		if !ok || !r.wants(in) {
			continue
		}
		p, _, err := g.RunPrecision(r.Job, r.Precision)
		if err != nil {
			continue
		}
		best = math.Min(best, r.trainingTime(g, p, 1, 1, 1).Hours)
	}
	if math.IsInf(best, 0) || r.DeadlineHours <= 0 {
		return 0
	}
	need := math.Ceil(8 * best / r.DeadlineHours / 8)
	if need > 1e6 {
		return 8e6
	}
	return int(need) * 8
}

// adapters is the trainable parameters of a LoRA or QLoRA job.
func (r *request) adapters() float64 {
	if r.a.AdapterFraction > 0 {
		return r.a.AdapterFraction * r.model.Params
	}
	return r.model.LoRAParams(r.a.LoRARank)
}

// trainingTime is the time model of the job on n GPUs of g (perNode to an
// instance) at tensor-parallel degree tp.
func (r *request) trainingTime(g GPU, prec Precision, n, perNode, tp int) TrainingTime {
	return EstimateTrainingTime(TrainingConfig{Job: r.Job, Model: r.model, Tokens: r.Tokens, SeqLen: r.SeqLen,
		GPU: g, Prec: prec, GPUs: n, PerNode: perNode, TP: tp, Adapters: r.adapters()}, r.a)
}

// servingLoad is req's serving load and target with the defaults filled
// in: a rate from requests_per_s or target_tokens_per_s, else a concurrency.
func servingLoad(req AdviceRequest) ServingLoad {
	l := ServingLoad{RequestsPerSec: req.RequestsPerSec, Concurrency: req.Concurrency, PromptTokens: req.PromptTokens,
		OutputTokens: req.OutputTokens, TTFTMs: req.TTFTMs, TPOTMs: req.TPOTMs, Percentile: req.LatencyPercentile}
	if l.PromptTokens == 0 {
		l.PromptTokens = DefaultPromptTokens
	}
	if l.OutputTokens == 0 {
		l.OutputTokens = DefaultOutputTokens
	}
	if l.TTFTMs == 0 {
		l.TTFTMs = DefaultTTFTMs
	}
	if l.TPOTMs == 0 {
		l.TPOTMs = DefaultTPOTMs
	}
	if l.Percentile == 0 {
		l.Percentile = DefaultPercentile
	}
	if l.RequestsPerSec == 0 && req.TargetTokensPerSec > 0 {
		l.RequestsPerSec = req.TargetTokensPerSec / float64(l.OutputTokens)
	}
	if l.RequestsPerSec > 0 {
		l.Concurrency = 0
	}
	return l
}

// requestModel returns the known model req names, else a custom model of
// req.Params parameters.
func requestModel(req AdviceRequest) (Model, error) {
	switch {
	case strings.TrimSpace(req.Model) != "":
		return LookupModel(req.Model)
	case req.Params != 0:
		return CustomModel(req.Params)
	}
	return Model{}, fmt.Errorf("give a model (one of %s) or a parameter count", strings.Join(ModelNames(), ", "))
}

// precisionFor returns the precision the job computes in, and the errors in
// the one requested: training, full fine-tuning and LoRA cannot train
// quantised weights (QLoRA can: it computes in bf16 over a 4-bit base).
func precisionFor(job JobType, requested Precision) (Precision, []error) {
	var errs []error
	p, err := ParsePrecision(string(requested))
	if err != nil {
		errs = append(errs, err)
	}
	if job == JobQLoRA {
		p = BF16 // compute precision; the base is held in 4 bits
	}
	if job.IsTraining() && job != JobQLoRA && (p == INT4 || p == INT8) {
		errs = append(errs, fmt.Errorf("%s cannot train %s weights; use qlora for a quantised base", job, p))
	}
	return p, errs
}

// sizeErrors checks the request's token counts, rates, sequence length and
// limits, and that the job has what it is sized by: tokens, or for
// serving a concurrency or a target rate.
func sizeErrors(job JobType, req AdviceRequest) []error {
	var errs []error
	for name, v := range map[string]float64{"tokens": req.Tokens, "input_tokens": req.InputTokens,
		"target_tokens_per_s": req.TargetTokensPerSec, "deadline_hours": req.DeadlineHours} {
		if !(v >= 0) || math.IsInf(v, 0) {
			errs = append(errs, fmt.Errorf("%s must be a non-negative number, got %g", name, v))
		}
	}
	if job == JobBatchInference && !(req.Tokens > 0) && req.InputTokens <= 0 {
		errs = append(errs, fmt.Errorf("%s needs a positive token count (tokens)", job))
	}
	if job == JobServing && req.Concurrency <= 0 && req.TargetTokensPerSec <= 0 && req.RequestsPerSec <= 0 {
		errs = append(errs, errors.New("serving needs a load: concurrency, requests_per_s or target_tokens_per_s"))
	}
	for name, v := range map[string]float64{"requests_per_s": req.RequestsPerSec, "ttft_ms": req.TTFTMs, "tpot_ms": req.TPOTMs} {
		if !(v >= 0) || math.IsInf(v, 0) {
			errs = append(errs, fmt.Errorf("%s must be a non-negative number, got %g", name, v))
		}
	}
	if req.LatencyPercentile != 0 && !(req.LatencyPercentile >= 50 && req.LatencyPercentile <= 99.9) {
		errs = append(errs, fmt.Errorf("latency_percentile must be between 50 and 99.9, got %g", req.LatencyPercentile))
	}
	if req.PromptTokens < 0 || req.OutputTokens < 0 || req.PromptTokens > 10_000_000 || req.OutputTokens > 10_000_000 {
		errs = append(errs, fmt.Errorf("prompt_tokens and output_tokens must be between 1 and 10,000,000, got %d and %d", req.PromptTokens, req.OutputTokens))
	}
	if req.SeqLen < 0 || req.SeqLen > 10_000_000 {
		errs = append(errs, fmt.Errorf("seq_len must be between 1 and 10,000,000, got %d", req.SeqLen))
	}
	if req.Concurrency < 0 {
		errs = append(errs, fmt.Errorf("concurrency must not be negative, got %d", req.Concurrency))
	}
	if req.MaxGPUs < 0 {
		errs = append(errs, fmt.Errorf("max_gpus must not be negative, got %d", req.MaxGPUs))
	}
	return errs
}

// canonicalGPU returns the catalog's name for the GPU the search is
// restricted to, or "" when name is empty (any GPU).
func canonicalGPU(cat *Catalog, name string) (string, error) {
	g := strings.TrimSpace(name)
	if g == "" {
		return "", nil
	}
	spec, ok := cat.GPU(g)
	if !ok {
		names := []string{}
		for _, s := range cat.GPUs() {
			names = append(names, s.Name)
		}
		return "", fmt.Errorf("unknown GPU %q; known GPUs: %s", g, strings.Join(names, ", "))
	}
	return spec.Name, nil
}

// providerSet returns the providers the search is restricted to, lower
// case, with an error for each one the catalog has no instances of. It is
// nil when none are requested; blank names are skipped.
func providerSet(cat *Catalog, requested []string) (map[string]bool, []error) {
	if len(requested) == 0 {
		return nil, nil
	}
	known := map[string]bool{}
	for _, in := range cat.instances {
		known[in.Provider] = true
	}
	var errs []error
	set := map[string]bool{}
	for _, p := range requested {
		p = strings.ToLower(strings.TrimSpace(p))
		if p == "" {
			continue
		}
		if !known[p] {
			names := make([]string, 0, len(known))
			for k := range known {
				names = append(names, k)
			}
			sort.Strings(names)
			errs = append(errs, fmt.Errorf("unknown provider %q; known providers: %s", p, strings.Join(names, ", ")))
		}
		set[p] = true
	}
	return set, errs
}

func (r *request) wants(in Instance) bool {
	if r.providers != nil && !r.providers[in.Provider] {
		return false
	}
	return r.gpuFilter == "" || in.GPU == r.gpuFilter
}

func (r *request) echo(cat *Catalog) AdviceAssumptions {
	m := r.model
	e := AdviceAssumptions{
		Assumptions: r.a, Job: r.Job, Model: m, Precision: r.Precision, Tokens: r.Tokens,
		InputTokens: r.InputTokens, SeqLen: r.SeqLen, Concurrency: r.Concurrency,
		TargetTokensPerSec: r.TargetTokensPerSec, DeadlineHours: r.DeadlineHours, MaxGPUs: r.MaxGPUs,
		DatacenterOnly: r.datacenterOnly, FitOnly: r.fitOnly,
		SpotOverhead:    r.a.SpotOverhead(),
		WeightsGB:       round2(m.Params * r.Precision.BytesPerParam() / GB),
		KVBytesPerToken: m.KVBytesPerToken(r.Precision.kvBytesPerValue()),
		PriceSource:     cat.Source, PriceAsOf: cat.AsOf,
	}
	if r.Job == JobServing {
		e.SpotOverhead = r.a.ServingSpotOverhead()
		l := r.load
		e.Serving = &l
	}
	n := func(format string, args ...any) { e.Notes = append(e.Notes, fmt.Sprintf(format, args...)) }
	if m.Notes != "" {
		n("%s", m.Notes)
	}
	switch r.Job {
	case JobTraining, JobFullFinetune:
		e.TrainingFLOPs = r.a.TrainingFLOPsFactor * m.ActiveParams * r.Tokens
		n("compute = %g·N·D = %.3g FLOPs of matmuls, plus attention 12·L·s·d per token; see the time model below", r.a.TrainingFLOPsFactor, e.TrainingFLOPs)
		n("memory = %g B/param (mixed-precision AdamW) sharded over all GPUs (ZeRO-3/FSDP) + activations per GPU", r.a.TrainingBytesPerParam)
	case JobLoRA, JobQLoRA:
		e.TrainingFLOPs = r.a.LoRAFLOPsFactor * m.ActiveParams * r.Tokens
		n("compute = %g·N·D = %.3g FLOPs of matmuls (no weight gradients for the frozen base), plus attention 12·L·s·d per token", r.a.LoRAFLOPsFactor, e.TrainingFLOPs)
		adapters := r.adapters()
		if r.Job == JobQLoRA {
			n("memory = NF4 base at %.3f B/param (4.127 bits with double-quantised constants) + %s embedding params at 2 B + adapters (%s params, rank %g) × 4 B (bf16 weights and gradients; the paged AdamW state goes to host memory when the GPU is full) + checkpointed activations, the one layer recomputed and the logits; checked against the QLoRA paper's 65B on one 48 GB GPU (docs/advisor.md, \"QLoRA memory\")",
				r.a.QLoRABytesPerParam, HumanCount(m.EmbeddingParams()), HumanCount(adapters), r.a.LoRARank)
		} else {
			n("memory = %g B/param %s base + adapters (%s params, rank %g, × 16 B) + activations", r.Precision.BytesPerParam(), r.Precision, HumanCount(adapters), r.a.LoRARank)
		}
	case JobServing:
		l := r.load
		n("target: %s; the defaults are TTFT ≤ %d ms, TPOT ≤ %d ms at p%d, %d-token prompts and %d-token answers", l.target(), DefaultTTFTMs, DefaultTPOTMs, DefaultPercentile, DefaultPromptTokens, DefaultOutputTokens)
		n("memory = %g × weights + KV cache of every sequence in flight at its full length (%.0f B/token × %s tokens)", r.a.InferenceMemoryOverhead, e.KVBytesPerToken, fmtInt(float64(l.PromptTokens+l.OutputTokens)))
		n("decode step = max((W + B·KV at the average context)/(η·BW), 2·N·B/(peak·inference MFU)) with η %.2f and inference MFU %.2f, calibrated on published vLLM/SGLang throughput (docs/advisor.md); prefill = 2·N·prompt/(peak·inference MFU)", r.a.Eta, r.a.InferenceMFU)
		n("TTFT = prefill + one decode step + the M/M/1 wait for the prefill queue at the percentile; TPOT = decode step + the prefills that land during a request's decode (Poisson, at the percentile); B from the concurrency, or from the rate by Little's law")
	default:
		n("memory = %g × weights + KV cache (%.0f B/token/sequence × %d tokens context × sequences)",
			r.a.InferenceMemoryOverhead, e.KVBytesPerToken, r.SeqLen)
		n("decode tokens/s per replica = min(η·BW·B/(W + B·KV_seq), peak·MFU/(2·N_active)) with inference MFU %.2f; every sequence assumed at full context", r.a.InferenceMFU)
	}
	if r.Job.IsTraining() {
		tm := EstimateTrainingMemory(r.Job, m, r.Precision, r.SeqLen, r.a)
		n("activations: %s recompute, micro-batch %d, %d-token sequences: %s GB per GPU", tm.Recompute, r.a.MicroBatch, r.SeqLen, fmtGB(tm.ActivationBytesPerGPU))
		r.timeNotes(n)
	}
	n("usable memory per GPU = %.0f%% of the card − %g GB runtime reserve (CUDA context, engine); a configuration that fits only in the other %.0f%% is listed as \"fits, tight\"", r.a.MemoryFraction*100, r.a.RuntimeReserveGB, (1-r.a.MemoryFraction)*100)
	if r.defaultDeadline {
		n("deadline: %s h (%g days), the default for training jobs; set deadline_hours to change it", fmtHours(r.DeadlineHours), r.DeadlineHours/24)
	}
	if r.derivedCap {
		n("GPU cap: %s GPUs, derived from the job (8× what the fastest GPU would need to meet the deadline at its single-GPU rate); set max_gpus to change it", fmtInt(float64(r.MaxGPUs)))
	}
	if r.datacenterOnly {
		n("datacenter GPUs only: consumer cards and peer-marketplace offers are left out; set datacenter_only false for experiments")
	}
	if r.Spot {
		n("spot time × %.3f = 1 + λ·(restart + interval/2) + write/interval with λ=%g/h, restart %g h, checkpoint every %g h taking %.2g h",
			r.a.SpotOverhead(), r.a.SpotInterruptionsPerHour, r.a.RestartHours, r.a.CheckpointIntervalHours, r.a.CheckpointWriteHours)
	}
	if !r.IncludeSuspicious {
		n("prices flagged as suspicious (GCP a2/a3/a4 tiers) are excluded; set include_suspicious to use them")
	}
	return e
}

// timeNotes states the training time model and the published runs its
// defaults rest on.
func (r *request) timeNotes(n func(string, ...any)) {
	n("time per step = max(compute, gradient traffic) + tensor-parallel traffic + %g s overhead; compute = tokens per GPU × (matmul FLOPs at the matmul fraction of peak + attention FLOPs at %.2f of that rate); the %s-token global batch is shared by the data-parallel GPUs, at least one sequence each",
		r.a.StepOverheadSeconds, r.a.AttentionEfficiency, HumanCount(r.a.GlobalBatchTokens))
	if r.a.MFU > 0 {
		n("matmul fraction %.2f of peak on every GPU (yours)", r.a.MFU)
	} else {
		n("matmul fraction by GPU generation: %.2f on Ampere (A100), calibrated on the TinyLlama, LLaMA, Llama 2, MPT-7B and BLOOM runs; %.2f on Hopper (H100), calibrated on the Llama 3.1 8B, 70B and 405B runs; other generations take the closest (docs/advisor.md, \"Calibration\"); fp8 reaches %.2f of that of its doubled peak",
			ampereMatmul, hopperMatmul, fp8MatmulFactor)
	}
	n("restarts after hardware failures: wall-clock × (1 + GPUs · %.3g/h · (%g h restart + %g h half checkpoint interval)), the failure rate of Llama 3 405B's 16,384 H100s", r.a.GPUFailuresPerHour, r.a.RestartHours, r.a.CheckpointIntervalHours/2)
	n("multi-GPU training without NVLink runs at %.0f%% of the matmul fraction; multi-node only on 8-GPU NVLink-class nodes", r.a.SlowInterconnectMFUFactor*100)
}

// plan is one sized configuration before pricing.
type plan struct {
	instances  int
	gpusPer    int
	hours      float64 // on-demand wall-clock
	memNeed    float64 // bytes, whole configuration
	memHave    float64
	tokens     float64 // tokens processed (inference), for $/Mtok
	tokensPerS float64
	detail     string
	mfuPenalty bool
	tight      bool // fits only without the headroom memory_fraction keeps
	serving    *ServingEstimate
	miss       string // the serving latency target missed, and why
}

// evaluate sizes and prices instance in for the job, on demand and (when
// allowed) spot: the options it offers, or why it is excluded.
func (r *request) evaluate(in Instance, cat *Catalog) ([]Option, []Excluded) {
	ex := func(reason string) []Excluded {
		return []Excluded{{GPU: in.GPU, InstanceType: in.InstanceType, Reason: reason, Provider: in.Provider}}
	}
	g, known := cat.gpus[in.GPU]
	if reason := r.unusable(in, g, known); reason != "" {
		return nil, ex(reason)
	}
	prec, precNote, err := g.RunPrecision(r.Job, r.Precision)
	if err != nil {
		return nil, ex(err.Error())
	}
	gpusPer := int(in.GPUCount)
	if gpusPer > r.MaxGPUs {
		return nil, ex(fmt.Sprintf("%d GPUs per instance exceeds max %d", gpusPer, r.MaxGPUs))
	}
	prices := r.pricings(in)
	var opts []Option
	var excl []Excluded
	for _, pr := range prices {
		overhead := 1.0
		if pr.name == pricingSpot {
			overhead = r.a.SpotOverhead()
			if r.Job == JobServing {
				overhead = r.a.ServingSpotOverhead()
			}
		}
		p, err := r.size(in, g, prec, gpusPer, overhead)
		if err != nil {
			reason := err.Error()
			if len(prices) > 1 {
				reason = pr.name + ": " + reason
			}
			excl = append(excl, ex(reason)...)
			continue
		}
		if !finite(p.hours*overhead) || !finite(p.hours*overhead*float64(p.instances*p.gpusPer)) || !finite(p.tokens/1e6) {
			// decimal.NewFromFloat panics on ±Inf and NaN, which extreme
			// inputs and assumptions can reach: such a job has no price.
			excl = append(excl, ex(fmt.Sprintf("%s: the job is too large to estimate", pr.name))...)
			continue
		}
		o := r.price(in, g, p, pr.name, pr.price, overhead)
		o.Precision = prec
		if precNote != "" {
			o.Notes = append(o.Notes, precNote)
			o.Reason += "; " + precNote
		}
		opts = append(opts, o)
	}
	// Report an instance once when every pricing fails for the same reason.
	if len(excl) == 2 && strings.TrimPrefix(excl[0].Reason, pricingOnDemand+": ") == strings.TrimPrefix(excl[1].Reason, pricingSpot+": ") {
		excl = ex(strings.TrimPrefix(excl[0].Reason, pricingOnDemand+": "))
	}
	return opts, excl
}

// unusable returns why instance in (of GPU g, known when the catalog has
// its specifications) cannot be offered for the job whatever its size, or
// "" when it can.
func (r *request) unusable(in Instance, g GPU, known bool) string {
	switch {
	case in.Fractional():
		return fmt.Sprintf("fractional GPU (%g of a GPU)", in.GPUCount)
	case !known:
		return "no specifications for GPU " + in.GPU
	case r.datacenterOnly && g.Class == ClassConsumer:
		return fmt.Sprintf("consumer GPU (%s: no ECC, not licensed for datacenters); datacenter GPUs only is on", g.Name)
	case r.datacenterOnly && Marketplace(in.Provider):
		return "peer-marketplace offer (third-party host); datacenter GPUs only is on"
	case in.Suspicious && !r.IncludeSuspicious:
		return "suspicious price: " + strings.Join(in.Flags, "; ")
	case in.OnDemand == nil && (!r.Spot || in.Spot == nil):
		if in.Spot != nil {
			return "no on-demand price and spot not allowed"
		}
		return "no price"
	}
	return ""
}

// priced is one way to pay for an instance: its name and hourly price.
type priced struct {
	name  string
	price decimal.Decimal
}

// pricings returns the prices of in the job may use: on demand, and spot
// when the request allows it.
func (r *request) pricings(in Instance) []priced {
	var prices []priced
	if in.OnDemand != nil {
		prices = append(prices, priced{pricingOnDemand, *in.OnDemand})
	}
	if r.Spot && in.Spot != nil {
		prices = append(prices, priced{pricingSpot, *in.Spot})
	}
	return prices
}

// size finds the smallest configuration of instance in (gpusPer GPUs of g each, running at
// precision prec) that fits the job and meets the deadline with the given wall-clock overhead.
func (r *request) size(in Instance, g GPU, prec Precision, gpusPer int, overhead float64) (plan, error) {
	maxInstances := max(r.MaxGPUs/gpusPer, 1)
	where := in.Provider + " " + in.InstanceType
	switch r.Job {
	case JobServing:
		return r.sizeServing(g, prec, gpusPer, maxInstances, where)
	case JobBatchInference:
		return r.sizeBatch(g, prec, gpusPer, maxInstances, overhead, where)
	}
	return r.sizeTraining(g, prec, gpusPer, maxInstances, overhead, where)
}

// sizeBatch is size for batch inference: the fewest instances that read
// and generate the tokens within the deadline.
func (r *request) sizeBatch(g GPU, prec Precision, gpusPer, maxInstances int, overhead float64, where string) (plan, error) {
	t, err := EstimateThroughput(r.model, prec, g, gpusPer, r.SeqLen, r.Concurrency, r.a)
	if err != nil {
		return plan{}, err
	}
	secs := r.InputTokens/t.PrefillTokensPerSec + r.Tokens/t.DecodeTokensPerSec
	hours := secs / 3600
	k := 1
	if r.DeadlineHours > 0 && hours*overhead > r.DeadlineHours {
		k = int(math.Ceil(hours * overhead / r.DeadlineHours))
		if k > maxInstances {
			r.limits.needGPUs(k*gpusPer, where)
			r.limits.needHours(hours*overhead/float64(maxInstances), maxInstances*gpusPer, where)
			return plan{}, fmt.Errorf("takes %s h on %d GPUs, deadline %s h (would need %d instances, max %d GPUs)",
				fmtHours(hours*overhead/float64(maxInstances)), maxInstances*gpusPer, fmtHours(r.DeadlineHours), k, r.MaxGPUs)
		}
	}
	bound := "bandwidth-bound"
	if !t.BandwidthBound {
		bound = "compute-bound"
	}
	return plan{
		instances: k, gpusPer: gpusPer, hours: hours / float64(k),
		memNeed: float64(k) * t.MemoryNeededGB * GB, memHave: float64(k) * t.MemoryAvailableGB * GB,
		tokens: r.Tokens + r.InputTokens, tokensPerS: float64(k) * t.DecodeTokensPerSec,
		detail: fmt.Sprintf("batch %d, %s decode %s tok/s per instance", t.Batch, bound, fmtInt(t.DecodeTokensPerSec)),
	}, nil
}

// sizeTraining is size for the training-type jobs: the fewest instances
// that hold the sharded states and the activations and meet the deadline.
func (r *request) sizeTraining(g GPU, prec Precision, gpusPer, maxInstances int, overhead float64, where string) (plan, error) {
	p, err := r.sizeTrainingWithin(r.a.UsableBytes(g), g, prec, gpusPer, maxInstances, overhead, where)
	var me *memoryError
	if err == nil || !errors.As(err, &me) {
		return p, err
	}
	// Without the headroom memory_fraction keeps, does it fit? Then it is
	// listed, marked tight, rather than dropped.
	tight, terr := r.sizeTrainingWithin(r.a.TightUsableBytes(g), g, prec, gpusPer, maxInstances, overhead, where)
	if terr != nil {
		return p, err
	}
	tight.tight = true
	tight.memHave = float64(tight.instances*tight.gpusPer) * r.a.UsableBytes(g)
	return tight, nil
}

// sizeTrainingWithin is sizeTraining with usable bytes per GPU.
func (r *request) sizeTrainingWithin(usable float64, g GPU, prec Precision, gpusPer, maxInstances int, overhead float64, where string) (plan, error) {
	tm := EstimateTrainingMemory(r.Job, r.model, prec, r.SeqLen, r.a)
	tps := tensorParallelDegrees(g, gpusPer)
	if maxTP := tps[len(tps)-1]; tm.ActivationBytesPerGPU/float64(maxTP) >= usable {
		return plan{}, fmt.Errorf("activations alone need %s GB per GPU (seq_len %d), %s GB usable",
			fmtGB(tm.ActivationBytesPerGPU/float64(maxTP)), r.SeqLen, fmtGB(usable))
	}
	multiNode := gpusPer >= 8 && g.FastInterconnect()
	if !multiNode {
		maxInstances = 1
	}
	s := trainingSpeed{r: r, g: g, prec: prec, perNode: gpusPer, tm: tm, tps: tps, usable: usable}
	kStart, err := r.fewestTrainingInstances(s, maxInstances, multiNode, overhead, where)
	if err != nil {
		return plan{}, err
	}
	var lastErr error
	for k := kStart; k <= maxInstances; k++ {
		n := k * gpusPer
		tp := s.fastestTensorParallel(k)
		if tp == 0 {
			lastErr = &memoryError{need: tm.Total(n, tps[len(tps)-1]), have: float64(n) * usable}
			// Memory per GPU falls with more GPUs only through the sharded states: jump to the
			// fewest GPUs where the states' share fits next to the activations.
			if room := usable - tm.ActivationBytesPerGPU/float64(tps[len(tps)-1]); room > 0 {
				if next := int(math.Ceil(tm.StatesBytes/room/float64(gpusPer))) - 1; next > k {
					k = min(next, maxInstances)
				}
			}
			continue
		}
		t := s.time(k, tp)
		if r.DeadlineHours > 0 && t.Hours*overhead > r.DeadlineHours && k < maxInstances {
			continue // tensor parallelism costs a little time: one more instance
		}
		p := trainingPlan(tm, t, k, gpusPer, tp, usable)
		if r.fitOnly {
			p.hours, p.detail = 0, strings.SplitN(p.detail, "; ", 2)[0]
		}
		return p, nil
	}
	if me, ok := lastErr.(*memoryError); ok && maxInstances > 1 {
		return plan{}, &memoryError{need: me.need, have: me.have, suffix: fmt.Sprintf(" (even on %d GPUs)", maxInstances*gpusPer)}
	}
	return plan{}, lastErr
}

// tensorParallelDegrees returns the tensor-parallel degrees to try on an
// instance of gpusPer GPUs of g: 1 (plain ZeRO-3/FSDP data parallelism),
// then powers of two within one NVLink-class machine; the fastest degree
// that fits is used (fastestTensorParallel).
func tensorParallelDegrees(g GPU, gpusPer int) []int {
	tps := []int{1}
	if g.FastInterconnect() {
		for t := 2; t <= gpusPer && gpusPer%t == 0; t *= 2 {
			tps = append(tps, t)
		}
	}
	return tps
}

// fastestTensorParallel returns, of the degrees at which the job fits k
// instances, the one that trains fastest (tensor parallelism shrinks the
// weights each GPU gathers, at the cost of its own traffic), or 0 when
// none fits.
func (s trainingSpeed) fastestTensorParallel(k int) int {
	best, bestHours := 0, math.Inf(1)
	for _, t := range s.tps {
		if s.tm.PerGPU(k*s.perNode, t) > s.usable {
			continue
		}
		if h := s.time(k, t).Hours; h < bestHours*(1-1e-9) {
			best, bestHours = t, h
		}
	}
	return best
}

// trainingSpeed is how fast the job trains on instances of one type.
type trainingSpeed struct {
	r       *request
	g       GPU
	prec    Precision
	perNode int
	tm      TrainingMemory
	tps     []int
	usable  float64
}

// time is the time model on k instances at tensor-parallel degree tp.
func (s trainingSpeed) time(k, tp int) TrainingTime {
	return s.r.trainingTime(s.g, s.prec, k*s.perNode, s.perNode, tp)
}

// timeOn is the time on k instances at the tensor-parallel degree they
// would need to hold the job (the largest when none holds it).
func (s trainingSpeed) timeOn(k int) TrainingTime {
	tp := s.fastestTensorParallel(k)
	if tp == 0 {
		tp = s.tps[len(s.tps)-1]
	}
	return s.time(k, tp)
}

// fewestTrainingInstances returns the fewest instances that meet the
// deadline (time falls with instances until communication and overheads
// dominate), or why none within maxInstances does.
func (r *request) fewestTrainingInstances(s trainingSpeed, maxInstances int, multiNode bool, overhead float64, where string) (int, error) {
	h := s.timeOn(1).Hours
	if !(r.DeadlineHours > 0 && h*overhead > r.DeadlineHours) {
		return 1, nil
	}
	if !multiNode {
		return 0, fmt.Errorf("takes %s h on %d GPUs, deadline %s h (a single machine: no NVLink-class nodes to add)",
			fmtHours(h*overhead), s.perNode, fmtHours(r.DeadlineHours))
	}
	meets := func(k int) bool { return s.timeOn(k).Hours*overhead <= r.DeadlineHours }
	if !meets(maxInstances) {
		hc := s.timeOn(maxInstances).Hours
		r.limits.needHours(hc*overhead, maxInstances*s.perNode, where)
		msg := fmt.Sprintf("takes %s h on %s GPUs (the cap), deadline %s h", fmtHours(hc*overhead), fmtInt(float64(maxInstances*s.perNode)), fmtHours(r.DeadlineHours))
		// More GPUs help only until communication, overheads and failures
		// dominate: look up to a million GPUs for a count that would do.
		if k, ok := firstMeeting(maxInstances, max(16*maxInstances, 1e6/s.perNode), meets); ok {
			r.limits.needGPUs(k*s.perNode, where)
			return 0, fmt.Errorf("%s; needs %s GPUs", msg, fmtInt(float64(k*s.perNode)))
		}
		return 0, fmt.Errorf("%s; more GPUs would not meet it (communication, overheads and restarts grow with them)", msg)
	}
	k, _ := firstMeeting(1, maxInstances, meets)
	return k, nil
}

// firstMeeting returns the least k in (lo, hi] with meets(k), by bisection
// (meets is taken to hold from some k on), and false when meets(hi) fails.
func firstMeeting(lo, hi int, meets func(int) bool) (int, bool) {
	if !meets(hi) {
		return 0, false
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if meets(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, true
}

// trainingPlan returns the plan of k instances of gpusPer GPUs at tensor
// parallel degree tp, with the memory and time model that explain it.
func trainingPlan(tm TrainingMemory, t TrainingTime, k, gpusPer, tp int, usable float64) plan {
	n := k * gpusPer
	detail := fmt.Sprintf("%s GB per GPU (states %s GB sharded over %s + activations %s GB); %s",
		fmtGB(tm.PerGPU(n, tp)), fmtGB(tm.StatesBytes), fmtInt(float64(n)), fmtGB(tm.ActivationBytesPerGPU/float64(tp)), t.explain())
	if tp > 1 {
		detail += fmt.Sprintf("; tensor parallel ×%d within each node", tp)
	}
	return plan{instances: k, gpusPer: gpusPer, hours: t.Hours, memNeed: tm.Total(n, tp), memHave: float64(n) * usable, detail: detail, mfuPenalty: t.SlowLinks}
}

// sizeServing is size for serving: the fewest replicas that hold the
// sequences in flight and meet the latency target at the load; or, when
// none within the cap does, the fewest that hold them, marked with why the
// target is missed.
func (r *request) sizeServing(g GPU, prec Precision, gpusPer, maxInstances int, where string) (plan, error) {
	est := func(k int) (ServingEstimate, error) {
		return EstimateServing(r.model, prec, g, gpusPer, k, r.load, r.a)
	}
	first, err := est(1)
	if err != nil {
		return plan{}, err
	}
	var fallback *ServingEstimate
	for k := 1; k <= maxInstances; k++ {
		e := first
		if k > 1 {
			e, _ = est(k)
		}
		if e.Miss == "" {
			return r.servingPlan(e, gpusPer), nil
		}
		if fallback == nil && e.Batch <= e.MaxBatch {
			fallback = &e
		}
	}
	last, _ := est(maxInstances)
	if fallback == nil {
		// Not even the cap holds the sequences: say so, as an exclusion.
		r.limits.needGPUs(int(math.Ceil(float64(last.Batch*maxInstances)/float64(max(last.MaxBatch, 1))))*gpusPer, where)
		return plan{}, fmt.Errorf("%s (on %d instances, max %d GPUs)", last.Miss, maxInstances, r.MaxGPUs)
	}
	// The fewest replicas that hold the load; more would not meet the target
	// within the cap either (at the cap: the miss below).
	p := r.servingPlan(*fallback, gpusPer)
	p.miss = fallback.Miss
	if maxInstances > fallback.Replicas && !strings.Contains(fallback.Miss, "even at batch 1") {
		p.miss += fmt.Sprintf("; %d replicas still miss: %s", maxInstances, last.Miss)
	}
	return p, nil
}

// servingPlan is the plan of one serving estimate.
func (r *request) servingPlan(e ServingEstimate, gpusPer int) plan {
	bound := "bandwidth-bound"
	if !e.BandwidthBound {
		bound = "compute-bound"
	}
	k := float64(e.Replicas)
	return plan{
		instances: e.Replicas, gpusPer: gpusPer, hours: r.a.ServingHours,
		memNeed: k * e.MemoryNeededBytes, memHave: k * e.MemoryAvailableBytes,
		tokens: e.OutputTokensPerSec * r.a.ServingHours * 3600, tokensPerS: e.OutputTokensPerSec,
		detail: fmt.Sprintf("%d replica(s), %s sequences each (KV cache room for %s); prefill %s ms per %s-token prompt (%.0f%% busy), %s decode step %s ms; TTFT %s ms, TPOT %s ms at p%g; %s output tok/s",
			e.Replicas, fmtInt(float64(e.Batch)), fmtInt(float64(e.MaxBatch)), fmtMs(e.PrefillMs), fmtInt(float64(r.load.PromptTokens)), e.PrefillBusy*100,
			bound, fmtMs(e.DecodeStepMs), fmtMs(e.TTFTMs), fmtMs(e.TPOTMs), r.load.Percentile, fmtInt(e.OutputTokensPerSec)),
		serving: &e,
	}
}

// finite reports whether v can become a decimal (NewFromFloat panics on
// NaN and ±Inf).
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func (r *request) price(in Instance, g GPU, p plan, pricing string, hourly decimal.Decimal, overhead float64) Option {
	wall := p.hours * overhead
	gpus := p.instances * p.gpusPer
	cost := decimal.NewFromFloat(wall).Mul(hourly).Mul(decimal.NewFromInt(int64(p.instances))).Round(2)
	o := Option{
		Provider: in.Provider, InstanceType: in.InstanceType, GPU: in.GPU, GPUs: gpus, Pricing: pricing,
		Instances: p.instances, GPUsPerInstance: p.gpusPer,
		Hours: round2(wall), GPUHours: round2(wall * float64(gpus)), CostUSD: cost,
		MemoryNeededGB: round1(p.memNeed / GB), MemoryAvailableGB: round1(p.memHave / GB),
		MemoryMarginGB: round1((p.memHave - p.memNeed) / GB),
		HourlyUSD:      hourly, USDPerHour: hourly.Mul(decimal.NewFromInt(int64(p.instances))),
		TokensPerSec: p.tokensPerS, Overhead: overhead,
		PriceSource: in.Source, Flags: in.Flags,
	}
	o.Badge, o.Caveat = OfferBadge(in.Provider, g)
	if e := p.serving; e != nil {
		o.TTFTMs, o.TPOTMs, o.OutputTokensPerSec, o.Batch = round1(e.TTFTMs), round1(e.TPOTMs), round1(e.OutputTokensPerSec), e.Batch
		o.Miss = p.miss
	}
	if !r.Job.IsTraining() && p.tokens > 0 {
		v := decimal.NewFromFloat(wall).Mul(hourly).Mul(decimal.NewFromInt(int64(p.instances))).
			Div(decimal.NewFromFloat(p.tokens / 1e6)).Round(4)
		o.USDPerMTok = &v
	}
	var b strings.Builder
	link := "PCIe"
	switch {
	case g.NVLink == "yes":
		link = "NVLink"
	case g.FastInterconnect():
		link = "Infinity Fabric"
	}
	usable := fmt.Sprintf("usable (%.0f%% of %s GB − %s GB reserve per GPU)", r.a.MemoryFraction*100, fmtGB(g.MemoryGB*GB), fmtGB(r.a.RuntimeReserveGB*GB))
	margin := fmt.Sprintf("margin %s GB", fmtGB(p.memHave-p.memNeed))
	if p.tight {
		free := float64(gpus)*r.a.TightUsableBytes(g) - p.memNeed
		margin = fmt.Sprintf("fits, tight: %s GB free without the %.0f%% headroom", fmtGB(free), (1-r.a.MemoryFraction)*100)
		o.Tight = true
	}
	if gpus == 1 {
		fmt.Fprintf(&b, "Fits on one %s (%s of %s GB %s, %s)", g.Name, fmtGB(p.memNeed), fmtGB(p.memHave), usable, margin)
	} else {
		fmt.Fprintf(&b, "%s instance(s) × %d %s = %s GPUs (%s), %s of %s GB %s, %s", fmtInt(float64(p.instances)), p.gpusPer, g.Name,
			fmtInt(float64(gpus)), link, fmtGB(p.memNeed), fmtGB(p.memHave), usable, margin)
	}
	if r.fitOnly {
		fmt.Fprintf(&b, "; %s; %s/h per instance %s (no tokens given: no time or cost)", p.detail, quantity.FormatMoney(hourly, "USD"), pricing)
	} else {
		fmt.Fprintf(&b, "; %s; %s h at %s/h per instance %s", p.detail, fmtHours(wall), quantity.FormatMoney(hourly, "USD"), pricing)
	}
	if pricing == pricingSpot {
		fmt.Fprintf(&b, " incl. +%.1f%% interruption overhead", (overhead-1)*100)
		if r.Job == JobServing {
			b.WriteString(" (keep on-demand fallback for latency SLOs)")
		}
	}
	if in.Override {
		fmt.Fprintf(&b, "; your price (%s)", in.Source)
	}
	if in.Suspicious {
		b.WriteString("; price flagged as suspicious, verify it")
	}
	o.Reason = b.String()
	return o
}

// Config is the configuration in words: "8× H100" on one instance,
// "4 instances × 8 H100 = 32 GPUs" on several.
func (o Option) Config() string {
	if o.Instances > 1 {
		return fmt.Sprintf("%s instances × %d %s = %s GPUs", fmtInt(float64(o.Instances)), o.GPUsPerInstance, o.GPU, fmtInt(float64(o.GPUs)))
	}
	return fmt.Sprintf("%d× %s", o.GPUs, o.GPU)
}

// nothingFits says, when no configuration fits, which limit to raise and
// to what, or else to look at the excluded list.
func (r *request) nothingFits() string {
	l := r.limits
	var parts []string
	if l.gpus > 0 {
		parts = append(parts, fmt.Sprintf("raise max_gpus to %s (%s)", fmtInt(float64(l.gpus)), l.gpusOn))
	}
	if l.hours > 0 && r.DeadlineHours > 0 {
		parts = append(parts, fmt.Sprintf("raise the deadline to %s h (%s days; %s GPUs on %s)",
			fmtInt(math.Ceil(l.hours)), fmtInt(math.Ceil(l.hours/24)), fmtInt(float64(l.hoursGPUs)), l.hoursOn))
	}
	if len(parts) == 0 {
		return "No configuration fits this job with the current filters; see the excluded list for why."
	}
	within := fmt.Sprintf("%s GPUs", fmtInt(float64(r.MaxGPUs)))
	if r.DeadlineHours > 0 {
		within += fmt.Sprintf(" and a %s h deadline", fmtHours(r.DeadlineHours))
	}
	return fmt.Sprintf("No configuration fits within %s: %s.", within, strings.Join(parts, ", or "))
}

// summarize explains why the winner wins in one sentence.
func summarize(opts []Option, r *request) string {
	s := whyWinner(opts, r)
	if len(opts) > 0 && opts[0].Caveat != "" {
		s += " " + opts[0].Caveat
	}
	return s
}

// whyWinner is the sentence of summarize without the winner's caveat.
func whyWinner(opts []Option, r *request) string {
	if len(opts) == 0 {
		return "No configuration fits this job with the current filters; see the excluded list for why."
	}
	w := opts[0]
	s := fmt.Sprintf("%s %s (%s, %s) is cheapest at %s for the job", w.Provider, w.InstanceType, w.Config(), w.Pricing, quantity.FormatMoney(w.CostUSD, "USD"))
	if r.Job == JobServing {
		s = fmt.Sprintf("%s %s (%s, %s) is cheapest at %s per %g h meeting %s (TTFT %s ms, TPOT %s ms expected)", w.Provider, w.InstanceType, w.Config(), w.Pricing,
			quantity.FormatMoney(w.CostUSD, "USD"), r.a.ServingHours, r.load.target(), fmtMs(w.TTFTMs), fmtMs(w.TPOTMs))
	}
	if r.Job.IsTraining() {
		s += fmt.Sprintf(", finishing in %s days", fmtHours(w.Hours/24))
	}
	// Compare with the lowest hourly price among feasible options.
	cheapHour := w
	for _, o := range opts {
		if o.HourlyUSD.Mul(decimal.NewFromInt(int64(o.Instances))).LessThan(cheapHour.HourlyUSD.Mul(decimal.NewFromInt(int64(cheapHour.Instances)))) {
			cheapHour = o
		}
	}
	if cheapHour.Provider == w.Provider && cheapHour.InstanceType == w.InstanceType && cheapHour.Pricing == w.Pricing {
		return s + ": it also has the lowest hourly price among configurations that fit."
	}
	hourly := quantity.FormatMoney(cheapHour.HourlyUSD.Mul(decimal.NewFromInt(int64(cheapHour.Instances))), "USD")
	if !cheapHour.CostUSD.GreaterThan(w.CostUSD) {
		// Half the GPUs at half the price, twice as long: the same bill, so
		// "would cost the same" is the whole story, not "slower".
		return fmt.Sprintf("%s: the lowest hourly price that fits (%s %s at %s/h) costs the same for the job, taking longer.",
			s, cheapHour.Provider, cheapHour.InstanceType, hourly)
	}
	speed := ""
	if w.Hours > 0 && cheapHour.Hours > w.Hours {
		speed = fmt.Sprintf(", because it is %.1f× slower", cheapHour.Hours/w.Hours)
	}
	return fmt.Sprintf("%s: the lowest hourly price that fits (%s %s at %s/h) would cost %s%s.",
		s, cheapHour.Provider, cheapHour.InstanceType, hourly, quantity.FormatMoney(cheapHour.CostUSD, "USD"), speed)
}

func fmtHours(h float64) string {
	switch {
	case h >= 100:
		return fmtInt(h)
	case h >= 10:
		return fmt.Sprintf("%.1f", h)
	default:
		return fmt.Sprintf("%.2f", h)
	}
}

// fmtInt formats a number rounded to an integer with thousands separators.
func fmtInt(v float64) string {
	return quantity.Group(strconv.FormatInt(int64(math.Round(v)), 10))
}
