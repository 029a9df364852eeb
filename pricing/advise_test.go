package pricing

import (
	"encoding/json"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"
)

func mustAdvise(t *testing.T, req AdviceRequest, cat *Catalog) Advice {
	t.Helper()
	a, err := Advise(req, cat)
	if err != nil {
		t.Fatalf("Advise: %v", err)
	}
	return a
}

func findOption(a Advice, provider, instanceType, pricing string) (Option, bool) {
	for _, o := range a.Options {
		if o.Provider == provider && o.InstanceType == instanceType && o.Pricing == pricing {
			return o, true
		}
	}
	return Option{}, false
}

func findExcluded(a Advice, instanceType string) (Excluded, bool) {
	for _, e := range a.Excluded {
		if e.InstanceType == instanceType {
			return e, true
		}
	}
	return Excluded{}, false
}

func TestKVCachePerToken(t *testing.T) {
	t.Parallel()
	tests := []struct {
		model string
		want  float64
	}{
		// 2 (K,V) · 32 layers · 8 KV heads · 128 head dim · 2 bytes = 131,072 B = 128 KiB.
		{"llama-3.1-8b", 128 * 1024},
		// 2 · 80 · 8 · 128 · 2 = 327,680 B = 320 KiB.
		{"Meta-Llama-3.1-70B-Instruct", 320 * 1024},
		// Qwen2.5 7B: 2 · 28 · 4 · 128 · 2 = 57,344 B.
		{"Qwen/Qwen2.5-7B-Instruct", 57344},
		// DeepSeek-V3 MLA: 61 layers · 576 latent values · 2 bytes = 70,272 B.
		{"deepseek-v3", 70272},
	}
	for _, tt := range tests {
		m, err := LookupModel(tt.model)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.KVBytesPerToken(BF16.kvBytesPerValue()); got != tt.want {
			t.Errorf("%s KV/token = %g, want %g", tt.model, got, tt.want)
		}
	}
}

func TestLookupModel(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"llama-3.1-8b": "llama-3.1-8b", "meta-llama/Llama-3.1-8B-Instruct": "llama-3.1-8b", "llama3.1-8b": "llama-3.1-8b",
		"Llama-3.3-70B-Instruct": "llama-3.3-70b", "mistralai/Mixtral-8x7B-Instruct-v0.1": "mixtral-8x7b",
		"google/gemma-2-9b-it": "gemma-2-9b", "deepseek-ai/DeepSeek-V3": "deepseek-v3", "Mistral-7B-v0.3": "mistral-7b",
	} {
		m, err := LookupModel(in)
		if err != nil || m.Name != want {
			t.Errorf("LookupModel(%q) = %q, %v; want %q", in, m.Name, err, want)
		}
	}
	_, err := LookupModel("gpt-17")
	if err == nil || !strings.Contains(err.Error(), "llama-3.1-8b") || !strings.Contains(err.Error(), "deepseek-v3") {
		t.Errorf("unknown model error = %v, want the known names listed", err)
	}
	mix, _ := LookupModel("mixtral-8x7b")
	if mix.Params != 46.7e9 || mix.ActiveParams != 12.9e9 || !mix.MoE {
		t.Errorf("mixtral = %+v", mix)
	}
}

func TestCustomModel(t *testing.T) {
	t.Parallel()
	// 7e9 params: L = round(cbrt(7e9 / (12·128²))) = round(32.9) = 33;
	// h = sqrt(7e9 / (12·33)) = 4204 → nearest multiple of 128 = 4224; 33 heads of 128, 8 KV heads.
	m, err := CustomModel(7e9)
	if err != nil {
		t.Fatal(err)
	}
	if m.Layers != 33 || m.Hidden != 4224 || m.Heads != 33 || m.KVHeads != 8 || m.HeadDim != 128 || !m.Custom || m.Notes == "" {
		t.Errorf("CustomModel(7e9) = %+v", m)
	}
	if _, err := CustomModel(-5); err == nil {
		t.Error("negative params accepted")
	}
}

func TestTrainingHours8BOneTrillionTokens(t *testing.T) {
	t.Parallel()
	// 6·N·D = 6 · 8e9 · 1e12 = 4.8e22 FLOPs (the old flat formula: 33,704 GPU-hours at MFU 0.4).
	approx(t, "TrainingHours", TrainingHours(6, 8e9, 1e12, 1, 989, 0.4), 33704, 0.001)
	// The time model (docs/advisor.md, "Training time"), custom 8B (34 layers, hidden 4480), 4,096-token
	// sequences, on H100 (Hopper: matmuls at 0.36 of 989 TFLOPS, attention at 0.4 of that rate):
	//   per token 6·8e9/(989e12·0.36) + 12·34·4096·4480/(989e12·0.36·0.4) = 134.8 µs + 52.6 µs = 187.4 µs;
	// on 40 GPUs each takes 4M/40 = 100k tokens a step: 18.74 s, which hides the 0.94 s of FSDP traffic
	// (3·2·8e9 bytes · 39/40 over 50 GB/s); + 0.1 s overhead = 18.84 s × 250,000 steps = 1,308.2 h,
	// × (1 + 40 · 1.97e-5 · 0.5) for failures = 1,308.8 h: 52,350 GPU-hours.
	a := mustAdvise(t, AdviceRequest{Job: JobTraining, Params: 8e9, Tokens: 1e12, GPU: "H100", MaxOptions: -1}, nil)
	if len(a.Options) == 0 {
		t.Fatal("no H100 options")
	}
	for _, o := range a.Options {
		// Every 8-GPU H100 (SXM) option has NVLink and the same node size: the same GPU-hours everywhere.
		approx(t, o.Provider+" "+o.InstanceType+" gpu_hours", o.GPUHours, 52350, 0.001)
		if o.GPU != "H100" || o.Pricing != "on-demand" || o.Hours > DefaultTrainingDeadlineHours {
			t.Errorf("option %+v: want on-demand H100 only, within the default deadline", o)
		}
	}
	// The default 60-day deadline (1,440 h): 4 nodes take 1,633 h (125k tokens per GPU a step), 5
	// p5.48xlarge nodes 1,308.8 h × $55.04 × 5 = $360,171.
	p5, ok := findOption(a, "aws", "p5.48xlarge", "on-demand")
	if !ok {
		t.Fatal("p5.48xlarge missing")
	}
	if p5.Instances != 5 || p5.GPUsPerInstance != 8 || p5.GPUs != 40 || !strings.HasPrefix(p5.Reason, "5 instance(s) × 8 H100 = 40 GPUs") {
		t.Errorf("p5 = %d × %d = %d GPUs, reason %q", p5.Instances, p5.GPUsPerInstance, p5.GPUs, p5.Reason)
	}
	approx(t, "p5 hours", p5.Hours, 1308.76, 0.001)
	approx(t, "p5 cost", p5.CostUSD.InexactFloat64(), 360171, 0.001)
	if !strings.Contains(p5.Reason, "MFU 0.3") || !strings.Contains(p5.Reason, "hides 0.94 s of gradient traffic") {
		t.Errorf("p5 reason %q does not say where the time goes", p5.Reason)
	}
	if e, ok := findExcluded(a, "p5.4xlarge"); !ok || !strings.Contains(e.Reason, "deadline 1,440 h (a single machine") {
		t.Errorf("p5.4xlarge exclusion = %+v", e)
	}
	// Without the deadline, a single H100 still cannot hold 16 B/param · 8e9 = 128 GB of training
	// state in its 0.9 · 80 − 1 = 71 GB usable.
	a = mustAdvise(t, AdviceRequest{Job: JobTraining, Params: 8e9, Tokens: 1e12, GPU: "H100", DeadlineHours: 1e7, MaxOptions: -1}, nil)
	if e, ok := findExcluded(a, "p5.4xlarge"); !ok || !strings.HasPrefix(e.Reason, "needs 1") || !strings.HasSuffix(e.Reason, "71 GB available") {
		t.Errorf("p5.4xlarge exclusion = %+v", e)
	}
}

func TestFullFinetune7BNeedsTwoGPUs(t *testing.T) {
	t.Parallel()
	// States: 16 B/param · 7e9 = 112 GB. Activations (selective recompute, micro-batch 1,
	// s = 4096, custom 7B: h = 4224, L = 33): 34 · 4096 · 4224 · 33 = 19.41 GB per GPU.
	// Usable per A100-80GB: 0.9 · 80 − 1 = 71 GB. One: 131.4 GB > 71. Two with plain sharding:
	// 56 + 19.4 = 75.4 > 71, so tensor parallel ×2 splits the activations: 56 + 9.7 = 65.7 ≤ 71.
	a := mustAdvise(t, AdviceRequest{Job: JobFullFinetune, Params: 7e9, Tokens: 1e8, GPU: "A100-80GB", MaxOptions: -1}, nil)
	e, ok := findExcluded(a, "Standard_NC24ads_A100_v4")
	if !ok || e.Reason != "needs 131.4 GB, 71 GB available" {
		t.Errorf("1×A100-80GB exclusion = %+v, want needs 131.4 GB, 71 GB available", e)
	}
	if len(a.Options) == 0 {
		t.Fatal("no options")
	}
	for _, o := range a.Options {
		if o.GPUs < 2 {
			t.Errorf("%s %s fits on %d GPU, want ≥ 2", o.Provider, o.InstanceType, o.GPUs)
		}
	}
	two, ok := findOption(a, "azure", "Standard_NC48ads_A100_v4", "on-demand")
	if !ok {
		t.Fatal("2×A100-80GB option missing")
	}
	// Memory across 2 GPUs: 112 + 2 · 19.41 / 2 = 131.4 GB of 142 usable; margin 10.6 GB in the reason.
	approx(t, "memory needed", two.MemoryNeededGB, 131.4, 0.001)
	if two.MemoryAvailableGB != 142 || two.MemoryMarginGB != 10.6 || !strings.Contains(two.Reason, "margin 10.6 GB") ||
		!strings.Contains(two.Reason, "tensor parallel ×2") {
		t.Errorf("memory available = %g, margin %g, reason %q", two.MemoryAvailableGB, two.MemoryMarginGB, two.Reason)
	}
}

func TestQLoRA65BFitsOne48GBGPU(t *testing.T) {
	t.Parallel()
	// The QLoRA paper's setting (docs/advisor.md, "QLoRA memory"): LLaMA 65B (custom 65B: L = 69,
	// h = 8832, 32,000-token vocabulary), rank-64 adapters on every linear layer, 512-token
	// sequences, batch 1, gradient checkpointing, paged AdamW:
	//   NF4 base 0.5159 B · (65e9 − 2·32000·8832) + 2 B · 565M = 33.24 + 1.13 = 34.37 GB
	//   adapters 769.6M × 4 B (bf16 weights and gradients) = 3.08 GB
	//   activations 2·512·8832·69 + 34·512·8832 + 6·512·32000 = 0.62 + 0.15 + 0.10 = 0.88 GB
	// = 38.3 GB: one 48 GB card with 3.9 GB to spare (the paper: "less than 48 GB"; Guanaco 65B listed
	// at 41 GB).
	paper := DefaultAssumptions()
	paper.LoRARank = 64
	for _, gpu := range []string{"L40S", "A6000"} {
		a := mustAdvise(t, AdviceRequest{Job: JobQLoRA, Params: 65e9, Tokens: 1e7, SeqLen: 512, GPU: gpu, Assumptions: paper, MaxOptions: -1}, nil)
		single := singleGPU(t, a, gpu)
		approx(t, gpu+" memory needed", single.MemoryNeededGB, 38.3, 0.003)
		if single.MemoryAvailableGB != 42.2 || single.Tight {
			t.Errorf("%s: available %g, tight %v", gpu, single.MemoryAvailableGB, single.Tight)
		}
	}
	// `burnrate advise --job qlora --params 65B`: rank 16 and 4,096-token sequences: 34.37 GB base +
	// 192.4M × 4 B = 0.77 GB adapters + 4.99 + 1.23 + 0.79 = 7.01 GB activations = 42.1 GB of 42.2.
	// No tokens given: the configurations that hold it, cheapest hour first, without time or cost.
	a := mustAdvise(t, AdviceRequest{Job: JobQLoRA, Params: 65e9, MaxOptions: -1}, nil)
	var on48 int
	for _, o := range a.Options {
		g, _ := DefaultCatalog().GPU(o.GPU)
		if o.GPUs == 1 && g.MemoryGB == 48 {
			on48++
			approx(t, o.InstanceType+" memory needed", o.MemoryNeededGB, 42.1, 0.003)
		}
		if o.Hours != 0 || !o.CostUSD.IsZero() || !o.USDPerHour.IsPositive() {
			t.Errorf("fit only: %s %g h, cost %s, %s/h", o.InstanceType, o.Hours, o.CostUSD, o.USDPerHour)
		}
	}
	if on48 == 0 || !strings.HasPrefix(a.Summary, "No tokens given") {
		t.Errorf("no single 48 GB GPU among %d options; summary %q", len(a.Options), a.Summary)
	}
}

// singleGPU returns a's first option on one GPU, failing when there is none.
func singleGPU(t *testing.T, a Advice, gpu string) Option {
	t.Helper()
	for _, o := range a.Options {
		if o.GPUs == 1 {
			return o
		}
	}
	t.Fatalf("%s: no single-GPU option; excluded: %+v", gpu, a.Excluded)
	return Option{}
}

func TestTightFitIsListedNotDropped(t *testing.T) {
	t.Parallel()
	// Llama 3.1 70B QLoRA at 1,024 tokens: 40.37 GB of states + activations
	// 2·1024·8192·80 + 34·1024·8192 + 6·1024·128256 = 1.34 + 0.29 + 0.79 = 2.41 GB = 42.8 GB: over the
	// 42.2 GB planned on a 48 GB card (90% − 1 GB), under the 47 GB without the headroom.
	a := mustAdvise(t, AdviceRequest{Job: JobQLoRA, Model: "llama-3.1-70b", Tokens: 1e7, SeqLen: 1024, GPU: "L40S", MaxOptions: -1}, nil)
	o := singleGPU(t, a, "L40S")
	approx(t, "memory needed", o.MemoryNeededGB, 42.8, 0.003)
	if !o.Tight || !strings.Contains(o.Reason, "fits, tight: 4.2 GB free without the 10% headroom") {
		t.Errorf("tight option: tight %v, reason %q", o.Tight, o.Reason)
	}
	// With memory_fraction 0.95 the plan itself holds it: not tight.
	more := DefaultAssumptions()
	more.MemoryFraction = 0.95
	a = mustAdvise(t, AdviceRequest{Job: JobQLoRA, Model: "llama-3.1-70b", Tokens: 1e7, SeqLen: 1024, GPU: "L40S", Assumptions: more, MaxOptions: -1}, nil)
	if o := singleGPU(t, a, "L40S"); o.Tight {
		t.Errorf("at 0.95 still tight: %q", o.Reason)
	}
}

func TestServingLlama8BMemoryFit(t *testing.T) {
	t.Parallel()
	// Weights 8.03e9 · 2 B = 16.06 GB; KV for one sequence of the default 1,024 + 256 tokens
	// 131,072 · 1,280 = 0.168 GB → 16.2 GB: over a 16 GB T4 (0.9 · 16 − 1 = 13.4 GB usable), under
	// 24 GB cards (20.6 GB usable). Those hold it but miss the default target: the L4 reads the
	// weights at 0.7 · 300 GB/s, 76 ms a step, over the 50 ms TPOT even at batch 1.
	a := mustAdvise(t, AdviceRequest{Job: JobServing, Model: "llama-3.1-8b", Concurrency: 4, MaxOptions: -1}, nil)
	e, ok := findExcluded(a, "g4dn.xlarge")
	if !ok || e.Reason != "needs 16.2 GB, 13.4 GB available" {
		t.Errorf("T4 exclusion = %+v", e)
	}
	for _, it := range []string{"g5.xlarge", "g6.xlarge", "1x_L4_SECURE"} {
		var found bool
		for _, o := range append(append([]Option{}, a.Options...), a.MissedTarget...) {
			if o.InstanceType == it && o.GPUsPerInstance == 1 {
				found = true
				// Each replica holds the weights and its share of the 4 sequences.
				k := float64(o.Instances)
				approx(t, it+" memory needed", o.MemoryNeededGB, k*16.06+k*math.Ceil(4/k)*0.168, 0.003)
				if o.GPU == "L4" && (o.Miss == "" || !strings.Contains(o.Miss, "TPOT") || !strings.Contains(o.Miss, "even at batch 1")) {
					t.Errorf("%s: miss %q", it, o.Miss)
				}
			}
		}
		if !found {
			t.Errorf("%s (24 GB) neither meets nor misses the target", it)
		}
	}
	// Serving defaults to datacenter GPUs only: the RTX 4090 is excluded, and comes back with a
	// badge and a caveat when the filter is off.
	if e, ok := findExcluded(a, "1x_RTX4090_SECURE"); !ok || !strings.Contains(e.Reason, "consumer GPU") {
		t.Errorf("RTX 4090 exclusion = %+v", e)
	}
	for _, o := range a.Options {
		if o.GPU == "T4" && o.GPUs < 2 {
			t.Errorf("T4 option with %d GPU: %+v", o.GPUs, o)
		}
		if o.USDPerMTok == nil || !o.USDPerMTok.IsPositive() {
			t.Errorf("%s: no $/1M tokens for serving", o.InstanceType)
		}
		if o.GPU == "RTX4090" || o.GPU == "RTX3090" || o.Provider == "vast" {
			t.Errorf("consumer or marketplace offer with datacenter only: %+v", o)
		}
	}
	off := false
	a = mustAdvise(t, AdviceRequest{Job: JobServing, Model: "llama-3.1-8b", Concurrency: 4, MaxOptions: -1, DatacenterOnly: &off}, nil)
	o, ok := findOption(a, "runpod", "1x_RTX4090_SECURE", "on-demand")
	if !ok || o.Badge != BadgeConsumer || !strings.Contains(o.Caveat, "no ECC") {
		t.Errorf("RTX 4090 with the filter off: %+v (found %v)", o, ok)
	}
	for _, o := range a.Options {
		if o.Provider == "vast" && (o.Badge != BadgeMarketplace || o.Caveat == "") {
			t.Errorf("vast offer without the marketplace badge: %+v", o)
		}
	}
}

func TestServingThroughputModel(t *testing.T) {
	t.Parallel()
	// Llama 3.1 8B bf16 on one H100, 4096-token context, batch capped at 16:
	// bandwidth bound 0.7 · 3350e9 · 16 / (16.06e9 + 16 · 0.5369e9) = 3.752e13 / 24.65e9 = 1,522 tok/s;
	// compute bound 989e12 · 0.2 / (2 · 8.03e9) = 12,316 tok/s → decode 1,522 tok/s, bandwidth-bound.
	m, _ := LookupModel("llama-3.1-8b")
	h100, _ := DefaultCatalog().GPU("H100")
	tp, err := EstimateThroughput(m, BF16, h100, 1, 4096, 16, DefaultAssumptions())
	if err != nil {
		t.Fatal(err)
	}
	approx(t, "decode", tp.DecodeTokensPerSec, 1522, 0.002)
	approx(t, "prefill", tp.PrefillTokensPerSec, 12316, 0.001)
	if !tp.BandwidthBound || tp.Batch != 16 {
		t.Errorf("throughput = %+v", tp)
	}
	// Max batch: (0.9 · 80 − 1 − 16.06) GB / 0.537 GB = 102 sequences.
	if tp.MaxBatch != 102 {
		t.Errorf("max batch = %d, want 102", tp.MaxBatch)
	}
	// A 3:1 prompt:generated mix at batch 16: 1 / (0.75/12316 + 0.25/1522) = 4,442 tok/s.
	approx(t, "mixed", tp.MixedTokensPerSec(0.75), 4442, 0.002)
}

// qloraAWS is a compute-bound job that fits every AWS GPU: QLoRA of Llama 3.1 8B (about 6 GB).
func qloraAWS() AdviceRequest {
	return AdviceRequest{Job: JobQLoRA, Model: "llama-3.1-8b", Tokens: 1e8, Providers: []string{"aws"}, MaxOptions: -1}
}

func TestAdvisorRanksByCostPerJobNotPerHour(t *testing.T) {
	t.Parallel()
	// 4·N matmul FLOPs a token plus attention 12·32·4096·4096 = 6.44e9, over 1e8 tokens in 25 steps
	// of the 4M-token batch:
	//   g6e.xlarge (L40S, 362 TFLOPS at 0.36, $1.861/h): 4·8.03e9/(362e12·0.36) + 6.44e9/(362e12·0.36·0.4)
	//     = 370.0 µs a token → 25 · (1,480.2 s + 0.1 s) = 10.28 h → $19.13
	//   g4dn.xlarge (T4, 65 TFLOPS at 0.49, $0.526/h): 1,514.1 µs a token → 42.06 h → $22.12
	// The T4 is the cheapest per hour among fits, the L40S the cheapest per job.
	a := mustAdvise(t, qloraAWS(), nil)
	w := a.Options[0]
	if w.InstanceType != "g6e.xlarge" || w.Pricing != "on-demand" {
		t.Fatalf("winner = %s %s, want g6e.xlarge on-demand; options: %v", w.InstanceType, w.Pricing, a.Options[:3])
	}
	approx(t, "winner hours", w.Hours, 10.28, 0.002)
	approx(t, "winner cost", w.CostUSD.InexactFloat64(), 19.13, 0.002)
	t4, ok := findOption(a, "aws", "g4dn.xlarge", "on-demand")
	if !ok {
		t.Fatal("g4dn.xlarge missing")
	}
	approx(t, "t4 cost", t4.CostUSD.InexactFloat64(), 22.12, 0.002)
	for _, o := range a.Options {
		if o.HourlyUSD.LessThan(t4.HourlyUSD) {
			t.Errorf("%s is cheaper per hour than the T4; test premise broken", o.InstanceType)
		}
	}
	if !strings.Contains(a.Summary, "g6e.xlarge") || !strings.Contains(a.Summary, "g4dn.xlarge") || !strings.Contains(a.Summary, "slower") {
		t.Errorf("summary = %q", a.Summary)
	}
	if !sort.SliceIsSorted(a.Options, func(i, j int) bool { return a.Options[i].CostUSD.LessThan(a.Options[j].CostUSD) }) {
		t.Error("options not sorted by cost")
	}
}

func TestSpotOnlyWhenAllowedWithOverhead(t *testing.T) {
	t.Parallel()
	noSpot := mustAdvise(t, qloraAWS(), nil)
	for _, o := range noSpot.Options {
		if o.Pricing != "on-demand" {
			t.Fatalf("spot option without spot allowed: %+v", o)
		}
	}
	req := qloraAWS()
	req.Spot = true
	a := mustAdvise(t, req, nil)
	// Overhead: 1 + λ·(restart + interval/2) + write/interval = 1 + 0.02·(0.25 + 0.25) + (2/60)/0.5 = 1.07667.
	// g6e.xlarge spot: 10.28 h · 1.07667 = 11.07 h × $0.5261 = $5.82 — cheaper than any on-demand option.
	approx(t, "spot overhead", DefaultAssumptions().SpotOverhead(), 1.076667, 1e-5)
	w := a.Options[0]
	if w.Pricing != "spot" {
		t.Fatalf("winner %s %s, want a spot option", w.InstanceType, w.Pricing)
	}
	s, ok := findOption(a, "aws", "g6e.xlarge", "spot")
	if !ok {
		t.Fatal("g6e.xlarge spot missing")
	}
	approx(t, "spot hours", s.Hours, 11.07, 0.002)
	approx(t, "spot cost", s.CostUSD.InexactFloat64(), 5.82, 0.005)
	if !strings.Contains(s.Reason, "interruption overhead") {
		t.Errorf("reason = %q", s.Reason)
	}
	// No spot quote (p5.4xlarge) → only on-demand.
	if _, ok := findOption(a, "aws", "p5.4xlarge", "spot"); ok {
		t.Error("p5.4xlarge has no spot quote but got a spot option")
	}
}

func TestOverridePricesTakePrecedence(t *testing.T) {
	t.Parallel()
	// Negotiated $0.05/h for g4dn.xlarge: 42.06 h × $0.05 = $2.10 beats the L40S's $19.13.
	cat := DefaultCatalog().WithPrices([]Instance{{Provider: "aws", InstanceType: "g4dn.xlarge", OnDemand: ptr(dec("0.05"))}}, "negotiated 2026")
	a := mustAdvise(t, qloraAWS(), cat)
	w := a.Options[0]
	if w.InstanceType != "g4dn.xlarge" {
		t.Fatalf("winner = %s, want the overridden g4dn.xlarge", w.InstanceType)
	}
	approx(t, "override cost", w.CostUSD.InexactFloat64(), 2.10, 0.005)
	if !strings.Contains(w.Reason, "negotiated 2026") || w.PriceSource != "negotiated 2026" {
		t.Errorf("reason/source = %q / %q", w.Reason, w.PriceSource)
	}
}

func ptr[T any](v T) *T { return &v }

func TestSuspiciousPricesExcludedByDefault(t *testing.T) {
	t.Parallel()
	req := AdviceRequest{Job: JobLoRA, Model: "llama-3.1-8b", Tokens: 1e8, Providers: []string{"gcp"}, GPU: "H100", MaxOptions: -1}
	a := mustAdvise(t, req, nil)
	if len(a.Options) != 0 {
		t.Errorf("suspicious GCP H100 prices used: %+v", a.Options)
	}
	e, ok := findExcluded(a, "a3-highgpu-8g")
	if !ok || !strings.HasPrefix(e.Reason, "suspicious price") {
		t.Errorf("a3-highgpu-8g exclusion = %+v", e)
	}
	req.IncludeSuspicious = true
	a = mustAdvise(t, req, nil)
	if len(a.Options) == 0 || !strings.Contains(a.Options[0].Reason, "suspicious") {
		t.Errorf("IncludeSuspicious options = %+v", a.Options)
	}
}

func TestDeadlineExcludesSlowOptions(t *testing.T) {
	t.Parallel()
	// The T4 needs 42.1 h, the L40S 10.3 h: a 20 h deadline keeps the L40S and drops single T4s.
	req := qloraAWS()
	req.DeadlineHours = 20
	a := mustAdvise(t, req, nil)
	e, ok := findExcluded(a, "g4dn.xlarge")
	if !ok || !strings.Contains(e.Reason, "deadline 20") {
		t.Errorf("g4dn.xlarge exclusion = %+v", e)
	}
	for _, o := range a.Options {
		if o.Hours > 20 {
			t.Errorf("%s takes %g h past the deadline", o.InstanceType, o.Hours)
		}
	}
}

func TestPCIeMultiGPUTrainingPenalised(t *testing.T) {
	t.Parallel()
	// g5.12xlarge: 4× A10G over PCIe. Matmuls at Ampere's 0.49 of 70 TFLOPS, × 0.6 without NVLink:
	// 0.294. Llama 3.2 1B at 4,096 tokens: 6·1.24e9/(70e12·0.294) + 12·16·4096·2048/(70e12·0.294·0.4)
	// = 361.5 µs + 195.7 µs = 557.2 µs a token; 1e6 tokens per GPU per step → 557.3 s × 25 steps = 3.87 h.
	// (The size-derated model took 13.13 h: MFU 0.056 for a 1B model.)
	a := mustAdvise(t, AdviceRequest{Job: JobFullFinetune, Model: "llama-3.2-1b", Tokens: 1e8, GPU: "A10G", MaxOptions: -1}, nil)
	o, ok := findOption(a, "aws", "g5.12xlarge", "on-demand")
	if !ok {
		t.Fatalf("g5.12xlarge missing: %+v", a.Excluded)
	}
	approx(t, "hours", o.Hours, 3.87, 0.002)
	if !strings.Contains(o.Reason, "no NVLink") {
		t.Errorf("reason = %q", o.Reason)
	}
}

func TestBatchInferenceCostPerToken(t *testing.T) {
	t.Parallel()
	// 1e9 generated tokens of Llama 3.1 8B on p5.4xlarge (1× H100, $6.88/h), 4096 context, batch 102:
	// decode = min(0.7·3350e9·102/(16.06e9 + 102·0.5369e9), 12,316) = 3,377 tok/s → 82.25 h → $565.9,
	// $0.5659 per 1M tokens.
	a := mustAdvise(t, AdviceRequest{Job: JobBatchInference, Model: "llama-3.1-8b", Tokens: 1e9, MaxOptions: -1}, nil)
	o, ok := findOption(a, "aws", "p5.4xlarge", "on-demand")
	if !ok {
		t.Fatal("p5.4xlarge missing")
	}
	approx(t, "hours", o.Hours, 82.25, 0.003)
	approx(t, "$/Mtok", o.USDPerMTok.InexactFloat64(), 0.5659, 0.003)
}

func TestAdviseValidation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		req  AdviceRequest
		want string
	}{
		{"UnknownModel", AdviceRequest{Job: JobTraining, Model: "llama-9", Tokens: 1}, "known models: deepseek-v3"},
		{"NoModel", AdviceRequest{Job: JobTraining, Tokens: 1}, "give a model"},
		{"UnknownJob", AdviceRequest{Job: "pretrain", Model: "mistral-7b", Tokens: 1}, `unknown job type "pretrain"`},
		{"NegativeTokens", AdviceRequest{Job: JobTraining, Model: "mistral-7b", Tokens: -5}, "tokens must be a non-negative number"},
		{"MissingTokens", AdviceRequest{Job: JobBatchInference, Model: "mistral-7b"}, "batch-inference needs a positive token count"},
		{"ServingNoTarget", AdviceRequest{Job: JobServing, Model: "mistral-7b"}, "serving needs a load"},
		{"BadPercentile", AdviceRequest{Job: JobServing, Model: "mistral-7b", Concurrency: 1, LatencyPercentile: 20}, "latency_percentile must be between 50 and 99.9"},
		{"BadPrecision", AdviceRequest{Job: JobServing, Model: "mistral-7b", Concurrency: 1, Precision: "fp64"}, `unknown precision "fp64"`},
		{"TrainInt4", AdviceRequest{Job: JobTraining, Model: "mistral-7b", Tokens: 1, Precision: INT4}, "use qlora"},
		{"UnknownGPU", AdviceRequest{Job: JobServing, Model: "mistral-7b", Concurrency: 1, GPU: "TPUv5"}, `unknown GPU "TPUv5"`},
		{"UnknownProvider", AdviceRequest{Job: JobServing, Model: "mistral-7b", Concurrency: 1, Providers: []string{"ibm"}}, `unknown provider "ibm"`},
		{"BadMFU", AdviceRequest{Job: JobServing, Model: "mistral-7b", Concurrency: 1, Assumptions: func() Assumptions {
			a := DefaultAssumptions()
			a.MFU = 1.5
			return a
		}()}, "mfu must be in [0, 1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Advise(tt.req, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestAdviceJSONShape(t *testing.T) {
	t.Parallel()
	a := mustAdvise(t, AdviceRequest{Job: JobServing, Model: "llama-3.1-8b", TargetTokensPerSec: 2000, MaxOptions: 3}, nil)
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Options     []map[string]any `json:"options"`
		Excluded    []map[string]any `json:"excluded"`
		Assumptions map[string]any   `json:"assumptions"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	keys := func(m map[string]any) []string {
		var k []string
		for s := range m {
			k = append(k, s)
		}
		sort.Strings(k)
		return k
	}
	wantOpt := []string{"batch", "cost_usd", "gpu", "gpu_hours", "gpus", "gpus_per_instance", "hours", "instance_type", "instances", "memory_available_gb", "memory_margin_gb", "memory_needed_gb", "output_tokens_per_s", "precision", "pricing", "provider", "reason", "tpot_ms", "ttft_ms", "usd_per_hour", "usd_per_mtok"}
	// badge, caveat and notes appear only on the options they apply to.
	optKeys := slices.DeleteFunc(keys(doc.Options[0]), func(k string) bool { return k == "badge" || k == "caveat" || k == "notes" })
	if len(doc.Options) != 3 || !slices.Equal(optKeys, wantOpt) {
		t.Errorf("option keys = %v, want %v", optKeys, wantOpt)
	}
	if _, isString := doc.Options[0]["cost_usd"].(string); !isString {
		t.Errorf("cost_usd = %#v, want a JSON string", doc.Options[0]["cost_usd"])
	}
	if !slices.Equal(keys(doc.Excluded[0]), []string{"gpu", "instance_type", "reason"}) {
		t.Errorf("excluded keys = %v", keys(doc.Excluded[0]))
	}
	for _, k := range []string{"mfu", "eta", "lora_flops_factor", "inference_memory_overhead", "spot_interruptions_per_hour", "model", "kv_bytes_per_token", "notes"} {
		if _, ok := doc.Assumptions[k]; !ok {
			t.Errorf("assumptions lack %q", k)
		}
	}
	// Serving with a target: the delivered rate is the target.
	if a.Options[0].TokensPerSec != 2000 {
		t.Errorf("delivered tok/s = %g", a.Options[0].TokensPerSec)
	}
}

func BenchmarkAdvise(b *testing.B) {
	DefaultCatalog()
	req := AdviceRequest{Job: JobServing, Model: "llama-3.1-70b", Precision: FP8, Concurrency: 64, TargetTokensPerSec: 5000, Spot: true}
	for b.Loop() {
		if _, err := Advise(req, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func TestMultiNodeTrainingWithTensorParallel(t *testing.T) {
	t.Parallel()
	// Llama 3.1 405B: states 16 · 405.9e9 = 6,494 GB; activations 34 · 4096 · 16384 · 126 = 287.5 GB
	// per micro-batch, ÷ 8 with tensor parallelism inside an 8-GPU node = 35.9 GB.
	// Usable per H200: 0.9 · 141 − 1 = 125.9 GB. On 8×H200 nodes: 9 nodes → 6494/72 + 35.9 = 126.1 GB
	// > 125.9; 10 nodes → 81.2 + 35.9 = 117.1 GB ≤ 125.9.
	// Time (no deadline): 10 ranks of 8 take 400k tokens a step: compute 400k · 7.553 ms / 8 = 377.6 s,
	// tensor-parallel traffic 400k · 4·2·(7/8)·2·16384·126 B / 450 GB/s = 25.7 s, + 0.1 s: 403.4 s
	// × 25,000 steps = 2,801.6 h, × 1.0008 for failures = 2,803.8 h.
	a := mustAdvise(t, AdviceRequest{Job: JobTraining, Model: "llama-3.1-405b", Tokens: 1e11, GPU: "H200", DeadlineHours: 1e6, MaxGPUs: 128, MaxOptions: -1}, nil)
	o, ok := findOption(a, "nebius", "gpu-h200-sxm_8gpu-128vcpu-1600gb", "on-demand")
	if !ok {
		t.Fatalf("8×H200 nodes missing: %+v", a.Excluded)
	}
	if o.GPUs != 80 || o.Instances != 10 || !strings.Contains(o.Reason, "tensor parallel ×8") {
		t.Errorf("option = %d GPUs on %d nodes, reason %q", o.GPUs, o.Instances, o.Reason)
	}
	approx(t, "hours", o.Hours, 2803.8, 0.002)
	// 80 GB H100s cannot hold it within 64 GPUs.
	h := mustAdvise(t, AdviceRequest{Job: JobTraining, Model: "llama-3.1-405b", Tokens: 1e11, GPU: "H100", Providers: []string{"aws"}, MaxGPUs: 64, DeadlineHours: 1e6}, nil)
	if e, ok := findExcluded(h, "p5.48xlarge"); len(h.Options) != 0 || !ok || !strings.Contains(e.Reason, "even on 64 GPUs") {
		t.Errorf("H100 405B: options %d, exclusion %+v", len(h.Options), e)
	}
}

func TestServingWithALatencyTarget(t *testing.T) {
	t.Parallel()
	// Llama 3.1 70B for 64 requests in flight, TTFT ≤ 2 s and TPOT ≤ 50 ms at p90: every option
	// shows the latency it expects within the target; 4× A40 holds the load but reads 141.2 GB of
	// weights and one sequence's 0.38 GB of KV over 0.7 · 4 · 696 = 1,949 GB/s, 72.6 ms a step even at batch
	// 1, and keeps 0.8 GB for the cache of 64 sequences: below the line.
	a := mustAdvise(t, AdviceRequest{Job: JobServing, Model: "llama-3.1-70b", Concurrency: 64, TTFTMs: 2000, TPOTMs: 50, MaxOptions: -1}, nil)
	if len(a.Options) == 0 {
		t.Fatalf("no option meets the target: %s", a.Summary)
	}
	for _, o := range a.Options {
		if o.Miss != "" || o.TTFTMs <= 0 || o.TTFTMs > 2000 || o.TPOTMs <= 0 || o.TPOTMs > 50 || o.OutputTokensPerSec <= 0 || o.USDPerMTok == nil {
			t.Errorf("%s %s: TTFT %g ms, TPOT %g ms, %g tok/s, miss %q", o.Provider, o.InstanceType, o.TTFTMs, o.TPOTMs, o.OutputTokensPerSec, o.Miss)
		}
	}
	a40, ok := findMissed(a, "runpod", "4x_A40_SECURE")
	if !ok || !strings.HasPrefix(a40.Miss, "TPOT ") || !strings.Contains(a40.Miss, "> 50.0 ms at 64 users") || !strings.Contains(a40.Miss, "72.6 ms even at batch 1") {
		t.Errorf("4× A40: %+v (found %v)", a40, ok)
	}
	if !strings.Contains(a.Summary, "meeting TTFT ≤ 2,000 ms and TPOT ≤ 50.0 ms at p90 for 64 users") {
		t.Errorf("summary %q", a.Summary)
	}
	// A looser target lets cheaper cards meet it; a request rate works as a load too.
	loose := mustAdvise(t, AdviceRequest{Job: JobServing, Model: "llama-3.1-70b", RequestsPerSec: 2, TPOTMs: 150, LatencyPercentile: 99, MaxOptions: -1}, nil)
	if len(loose.Options) == 0 || !loose.Options[0].CostUSD.LessThan(a.Options[0].CostUSD) || loose.Assumptions.Serving.RequestsPerSec != 2 {
		t.Errorf("loose target: %s", loose.Summary)
	}
}

func findMissed(a Advice, provider, instanceType string) (Option, bool) {
	for _, o := range a.MissedTarget {
		if o.Provider == provider && o.InstanceType == instanceType {
			return o, true
		}
	}
	return Option{}, false
}

func TestZScore(t *testing.T) {
	t.Parallel()
	for p, want := range map[float64]float64{50: 0, 90: 1.2816, 95: 1.6449, 99: 2.3263} {
		approx(t, "z", zScore(p)+1, want+1, 0.0005)
	}
}
