package pricing

import (
	"math"
	"strings"
	"testing"
)

// The advisor's answers checked against what an ML engineer knows and what
// was published (docs/advisor.md, "Calibration").

func TestQLoRA70BAtBF16NeverRunsBF16OnV100(t *testing.T) {
	t.Parallel()
	off := false
	a := mustAdvise(t, AdviceRequest{Job: JobQLoRA, Model: "llama-3.1-70b", Precision: BF16, Tokens: 1e8, MaxOptions: -1, DatacenterOnly: &off}, nil)
	if len(a.Options) == 0 {
		t.Fatal("no options")
	}
	var volta int
	for _, o := range a.Options {
		g, _ := DefaultCatalog().GPU(o.GPU)
		if !g.BF16 {
			volta++
			if o.Precision != FP16 || len(o.Notes) == 0 || !strings.Contains(o.Notes[0], "runs at fp16") || !strings.Contains(o.Reason, "has no bf16") {
				t.Errorf("%s %s (%s) at %s, notes %q", o.Provider, o.InstanceType, o.GPU, o.Precision, o.Notes)
			}
		} else if o.Precision != BF16 {
			t.Errorf("%s %s: precision %s on a GPU with bf16", o.Provider, o.InstanceType, o.Precision)
		}
	}
	if volta == 0 {
		t.Error("no V100/T4 option at all: the conversion is untested")
	}
	// fp8 training needs FP8 tensor cores: the V100 and the A100 are excluded with the reason.
	f := mustAdvise(t, AdviceRequest{Job: JobFullFinetune, Model: "llama-3.2-1b", Precision: FP8, Tokens: 1e8, MaxOptions: -1}, nil)
	for _, it := range []string{"p3.16xlarge", "p4d.24xlarge"} {
		if e, ok := findExcluded(f, it); !ok || !strings.Contains(e.Reason, "no FP8 tensor cores") {
			t.Errorf("%s: exclusion %+v", it, e)
		}
	}
	for _, o := range f.Options {
		if g, _ := DefaultCatalog().GPU(o.GPU); !g.FP8 {
			t.Errorf("fp8 training on %s", o.GPU)
		}
	}
	// fp8 serving on an A100 runs as FP8 weights with 16-bit compute, and says so; int8 on V100 is excluded.
	s := mustAdvise(t, AdviceRequest{Job: JobServing, Model: "llama-3.1-8b", Precision: FP8, Concurrency: 8, GPU: "A100-80GB", MaxOptions: -1}, nil)
	if len(s.Options) == 0 || !strings.Contains(s.Options[0].Reason, "fp8 weights with 16-bit compute") {
		t.Errorf("fp8 on A100: %+v", s.Options)
	}
	v := mustAdvise(t, AdviceRequest{Job: JobServing, Model: "llama-3.1-8b", Precision: INT8, Concurrency: 8, GPU: "V100", MaxOptions: -1}, nil)
	if len(v.Options) != 0 || len(v.Excluded) == 0 || !strings.Contains(v.Excluded[0].Reason, "no INT8 tensor cores") {
		t.Errorf("int8 on V100: options %d, excluded %+v", len(v.Options), v.Excluded)
	}
}

func TestQLoRA70BFitsOn48GBCards(t *testing.T) {
	t.Parallel()
	// Llama 3.1 70B at the QLoRA paper's 512-token sequences: NF4 base 0.5159 · (70.6e9 − 2.1e9) +
	// 2 · 2.1e9 (16-bit embeddings and output layer) = 39.54 GB, rank-16 adapters 207M × 4 B = 0.83 GB,
	// activations 2·512·8192·80 + 34·512·8192 + 6·512·128256 = 1.21 GB → 41.6 GB of the
	// 0.9 · 48 − 1 = 42.2 GB usable on one L40S, A6000 or A40.
	for _, gpu := range []string{"L40S", "A6000", "A40"} {
		a := mustAdvise(t, AdviceRequest{Job: JobQLoRA, Model: "llama-3.1-70b", Tokens: 1e7, SeqLen: 512, GPU: gpu, MaxOptions: -1}, nil)
		var single *Option
		for i, o := range a.Options {
			if o.GPUs == 1 {
				single = &a.Options[i]
				break
			}
		}
		if single == nil {
			t.Fatalf("%s: no single-GPU option; excluded %+v", gpu, a.Excluded)
		}
		approx(t, gpu+" memory needed", single.MemoryNeededGB, 41.6, 0.003)
		if single.MemoryAvailableGB != 42.2 || !strings.Contains(single.Reason, "margin 0.6 GB") {
			t.Errorf("%s: available %g, reason %q", gpu, single.MemoryAvailableGB, single.Reason)
		}
	}
	// At 4,096-token sequences the activations (5.37 + 1.14 + 3.15 = 9.66 GB) no longer fit one 48 GB
	// card, not even without the headroom: the exclusion says by how much, and two cards do.
	a := mustAdvise(t, AdviceRequest{Job: JobQLoRA, Model: "llama-3.1-70b", Tokens: 1e7, GPU: "L40S", MaxOptions: -1}, nil)
	if e, ok := findExcluded(a, "g6e.xlarge"); !ok || e.Reason != "needs 50 GB, 42.2 GB available" {
		t.Errorf("g6e.xlarge exclusion = %+v", e)
	}
	if len(a.Options) == 0 || a.Options[0].GPUs < 2 {
		t.Errorf("options at 4,096 tokens: %+v", a.Options)
	}
}

func TestMultiInstanceShowsInstancesTimesGPUs(t *testing.T) {
	t.Parallel()
	// 600 concurrent 4,096-token sequences of Llama 3.1 8B need several 4× RTX 3090 machines.
	off := false
	a := mustAdvise(t, AdviceRequest{Job: JobServing, Model: "llama-3.1-8b", Concurrency: 600, GPU: "RTX3090", MaxOptions: -1, DatacenterOnly: &off}, nil)
	var multi int
	for _, o := range append(append([]Option{}, a.Options...), a.MissedTarget...) {
		if o.GPUs != o.Instances*o.GPUsPerInstance {
			t.Errorf("%s: %d GPUs ≠ %d × %d", o.InstanceType, o.GPUs, o.Instances, o.GPUsPerInstance)
		}
		if o.Instances > 1 {
			multi++
			want := fmtInt(float64(o.Instances)) + " instance(s) × " + fmtInt(float64(o.GPUsPerInstance)) + " RTX3090 = " + fmtInt(float64(o.GPUs)) + " GPUs"
			if !strings.HasPrefix(o.Reason, want) || !strings.Contains(o.Config(), " instances × ") {
				t.Errorf("reason %q, config %q; want prefix %q", o.Reason, o.Config(), want)
			}
		}
		if o.Badge == "" || o.Caveat == "" {
			t.Errorf("RTX 3090 option without a badge: %+v", o)
		}
	}
	if multi == 0 {
		t.Fatal("no multi-instance option")
	}
	// 600 users at 50 ms a token is beyond RTX 3090s: none meets the target, and the summary says
	// what the cheapest that holds the load misses.
	if len(a.Options) != 0 || len(a.MissedTarget) == 0 || !strings.Contains(a.Summary, a.MissedTarget[0].Miss) ||
		!strings.HasPrefix(a.Summary, "No configuration meets TTFT ≤ 2,000 ms and TPOT ≤ 50.0 ms at p90 for 600 users") {
		t.Errorf("summary %q", a.Summary)
	}
	// With a latency target they can meet, the summary carries the winner's caveat.
	a = mustAdvise(t, AdviceRequest{Job: JobServing, Model: "llama-3.1-8b", Concurrency: 64, TPOTMs: 200, GPU: "RTX3090", MaxOptions: -1, DatacenterOnly: &off}, nil)
	if len(a.Options) == 0 || !strings.HasSuffix(a.Summary, a.Options[0].Caveat) {
		t.Errorf("summary %q lacks the winner's caveat", a.Summary)
	}
}

func TestTraining405BGetsAClusterWithinTheDefaultDeadline(t *testing.T) {
	t.Parallel()
	// Llama 3.1 405B on 15.6T tokens, no deadline or GPU cap given: 60 days, and a cap derived from
	// the job (8× what B200s would need at their single-GPU rate), so the answer is a cluster, not
	// 20 years.
	a := mustAdvise(t, AdviceRequest{Job: JobTraining, Model: "llama-3.1-405b", Tokens: 15.6e12, MaxOptions: -1}, nil)
	if len(a.Options) == 0 {
		t.Fatalf("no options: %s", a.Summary)
	}
	if a.Assumptions.DeadlineHours != DefaultTrainingDeadlineHours || a.Assumptions.MaxGPUs <= 64 {
		t.Errorf("deadline %g, cap %d", a.Assumptions.DeadlineHours, a.Assumptions.MaxGPUs)
	}
	for _, o := range a.Options {
		if o.Hours > DefaultTrainingDeadlineHours || o.GPUs > a.Assumptions.MaxGPUs || o.GPUs != o.Instances*o.GPUsPerInstance {
			t.Errorf("%s %s: %g h on %d GPUs", o.Provider, o.InstanceType, o.Hours, o.GPUs)
		}
	}
	w := a.Options[0]
	if w.GPUs < 4000 || !strings.Contains(a.Summary, "finishing in") || !strings.Contains(w.Reason, "restarts after hardware failures") {
		t.Errorf("winner %d GPUs, summary %q, reason %q", w.GPUs, a.Summary, w.Reason)
	}
	t.Logf("405B in 60 days: %s", a.Summary)

	// Communication and restarts grow with the cluster (FSDP moves 3·2·405.9e9/8 bytes per GPU a
	// step; a restart comes every 1/(GPUs · 1.97e-5) hours): finishing sooner costs GPU-hours. The
	// same job given 120 days takes fewer GPU-hours on the same instance type.
	slow := mustAdvise(t, AdviceRequest{Job: JobTraining, Model: "llama-3.1-405b", Tokens: 15.6e12, DeadlineHours: 120 * 24,
		GPU: w.GPU, Providers: []string{w.Provider}, MaxOptions: -1}, nil)
	o, ok := findOption(slow, w.Provider, w.InstanceType, w.Pricing)
	if !ok || o.GPUHours >= w.GPUHours || o.GPUs >= w.GPUs {
		t.Errorf("120 days: %+v (found %v); 60 days: %d GPUs, %g GPU-hours", o, ok, w.GPUs, w.GPUHours)
	}

	// With the old fixed cap of 64 GPUs nothing fits, and the summary says which limit to raise to what.
	c := mustAdvise(t, AdviceRequest{Job: JobTraining, Model: "llama-3.1-405b", Tokens: 15.6e12, MaxGPUs: 64, Providers: []string{"aws"}}, nil)
	if len(c.Options) != 0 || !strings.Contains(c.Summary, "raise max_gpus to ") || !strings.Contains(c.Summary, "raise the deadline to ") {
		t.Errorf("capped summary = %q", c.Summary)
	}
}

// servingBenchmark is a published serving throughput, in total (prompt +
// generated) tokens per second.
type servingBenchmark struct {
	name       string
	model      string
	precision  Precision
	gpu        string
	gpus       int
	inputShare float64 // prompt tokens / all tokens of the run
	total      float64 // published total tokens/s
	source     string
}

// servingBenchmarks are ShareGPT serving runs (vLLM's and SGLang's
// `bench serve`, many prompts at once): the model is run at vLLM's default
// batch cap of 256 sequences and 512 tokens of context per sequence (ShareGPT
// requests average about 215 prompt + 200 generated tokens).
var servingBenchmarks = []servingBenchmark{
	{"SGLang Llama 3.1 8B, 1× H100", "llama-3.1-8b", BF16, "H100", 1, 6070.0 / (6070 + 5595), 6070 + 5595,
		"arc53/llm-price-compass gpu-benchmarks.csv: 1000 prompts, 6,070 input + 5,595 output tok/s"},
	{"vLLM Llama 3.1 8B, 1× L4", "llama-3.1-8b", BF16, "L4", 1, 558.0 / (558 + 513), 558 + 513,
		"arc53/llm-price-compass gpu-benchmarks.csv: 1000 prompts, 558 input + 513 output tok/s"},
	{"vLLM 0.6.6 Llama 3.3 70B, 4× A100-80GB TP4", "llama-3.3-70b", BF16, "A100-80GB", 4, 0.5, (1414 + 1496) / 2.0,
		"github.com/vllm-project/vllm/issues/12315: 200 ShareGPT prompts, 1,414–1,496 total tok/s (714–756 output)"},
	{"vLLM Qwen3-VL-32B FP8 (text), 1× L40S", "qwen3-32b", FP8, "L40S", 1, 217393.0 / (217393 + 189963), 1333.62,
		"vllm-project/vllm pull #29217 (before the kernel tuning): 1000 ShareGPT prompts, 217,393 input + 189,963 output tokens, 1,333.62 total tok/s"},
}

func TestServingBenchmarksWithin1_4x(t *testing.T) {
	t.Parallel()
	a := DefaultAssumptions()
	for _, b := range servingBenchmarks {
		m, err := LookupModel(b.model)
		if err != nil {
			t.Fatal(err)
		}
		g, _ := DefaultCatalog().GPU(b.gpu)
		tp, err := EstimateThroughput(m, b.precision, g, b.gpus, 512, 256, a)
		if err != nil {
			t.Errorf("%s: %v", b.name, err)
			continue
		}
		got := tp.MixedTokensPerSec(b.inputShare)
		ratio := got / b.total
		t.Logf("%-45s published %7s tok/s, model %7s tok/s (batch %d, %s), ratio %.2f", b.name, fmtInt(b.total), fmtInt(got),
			tp.Batch, map[bool]string{true: "bandwidth-bound", false: "compute-bound"}[tp.BandwidthBound], ratio)
		if ratio < 1/1.4 || ratio > 1.4 || math.IsNaN(ratio) {
			t.Errorf("%s: model %.0f tok/s vs published %.0f (ratio %.2f), want within 1.4×", b.name, got, b.total, ratio)
		}
	}
}

func BenchmarkAdviseTraining405B(b *testing.B) {
	DefaultCatalog()
	req := AdviceRequest{Job: JobTraining, Model: "llama-3.1-405b", Tokens: 15.6e12}
	for b.Loop() {
		if _, err := Advise(req, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBreakEvenMix(b *testing.B) {
	DefaultCatalog()
	in := BreakEvenInput{Usage: []ModelUsage{
		{Model: "gpt-4o", InputTokens: 1e9, OutputTokens: 2e8},
		{Model: "gpt-4o-mini", InputTokens: 2e9, OutputTokens: 5e8},
		{Model: "gpt-4.1-mini", InputTokens: 5e8, OutputTokens: 1e8},
		{Model: "claude-sonnet-4-5", InputTokens: 1e8, OutputTokens: 1e7},
	}}
	for b.Loop() {
		if _, err := BreakEven(in); err != nil {
			b.Fatal(err)
		}
	}
}

// TestServingLatencyModelMatchesPublishedThroughput runs the serving
// latency model on the published benchmarks' load (256 requests in flight,
// vLLM's default cap, with ShareGPT's ≈215-token prompts and ≈200-token
// answers) and checks the tokens per second it serves within 1.4×.
func TestServingLatencyModelMatchesPublishedThroughput(t *testing.T) {
	t.Parallel()
	a := DefaultAssumptions()
	for _, b := range servingBenchmarks {
		m, _ := LookupModel(b.model)
		g, _ := DefaultCatalog().GPU(b.gpu)
		load := ServingLoad{Concurrency: 256, PromptTokens: 215, OutputTokens: 200, TTFTMs: 1e9, TPOTMs: 1e9, Percentile: 50}
		e, err := EstimateServing(m, b.precision, g, b.gpus, 1, load, a)
		if err != nil {
			t.Errorf("%s: %v", b.name, err)
			continue
		}
		if e.Batch > e.MaxBatch {
			// As vLLM does, run the sequences the KV cache holds.
			load.Concurrency = e.MaxBatch
			e, _ = EstimateServing(m, b.precision, g, b.gpus, 1, load, a)
		}
		got := e.RequestsPerSec * float64(load.PromptTokens+load.OutputTokens)
		ratio := got / b.total
		t.Logf("%-45s published %7s tok/s, model %7s tok/s (batch %d, TTFT %s ms, TPOT %s ms), ratio %.2f", b.name, fmtInt(b.total), fmtInt(got),
			e.Batch, fmtMs(e.TTFTMs), fmtMs(e.TPOTMs), ratio)
		if ratio < 1/1.4 || ratio > 1.4 || math.IsNaN(ratio) {
			t.Errorf("%s: model %.0f tok/s vs published %.0f (ratio %.2f), want within 1.4×", b.name, got, b.total, ratio)
		}
	}
}
