package pricing

import (
	"encoding/json"
	"strings"
	"testing"
)

// h100Worked is the worked case of docs/advisor.md ("A break-even example"): one H100 at RunPod's $2.99/h with the measured SGLang
// throughput of Llama 3.1 8B (6,070 input + 5,595 output = 11,665 tok/s), peak factor 1.
func h100Worked(models ...string) BreakEvenInput {
	return BreakEvenInput{
		Models: models, InputTokens: 232_500_000, OutputTokens: 77_500_000, // 310M/month at 3:1
		OpenModel: "llama-3.1-8b", GPU: "H100", GPUPriceUSDPerHour: ptr(dec("2.99")), ThroughputPerGPU: 11665, PeakFactor: 1,
	}
}

func TestBreakEvenWorkedCase(t *testing.T) {
	t.Parallel()
	// Self-host: $2.99 × 730 h = $2,182.70/month. gpt-4.1-mini at 3:1 blends (3·0.40 + 1.60)/4 =
	// $0.70 per 1M → break-even 2,182.70 / 0.70 · 1e6 = 3.118e9 tokens/month.
	// One GPU serves 11,665 · 3600 · 730 = 30.66e9 tokens/month → utilisation 3.118 / 30.66 = 10.2%.
	// At 310M/month the API costs 310 · 0.70 = $217, about 10× less than $2,182.70.
	r, err := BreakEven(h100Worked("gpt-4.1-mini"))
	if err != nil {
		t.Fatal(err)
	}
	if r.BreakEvenTokensPerMonth == nil {
		t.Fatal("no break-even")
	}
	approx(t, "break-even", float64(*r.BreakEvenTokensPerMonth), 3.118e9, 0.001)
	approx(t, "utilisation", *r.UtilizationAtBreakEven, 0.1017, 0.002)
	if !r.APICostMonthUSD.Equal(dec("217")) || !r.SelfHostCostMonthUSD.Equal(dec("2182.7")) || r.GPUsNeeded != 1 {
		t.Errorf("api %s self %s gpus %d", r.APICostMonthUSD, r.SelfHostCostMonthUSD, r.GPUsNeeded)
	}
	for _, want := range []string{"above 3.12B tokens/month", "at your 310M/month the API is 10× cheaper"} {
		if !strings.Contains(r.Verdict, want) {
			t.Errorf("verdict %q lacks %q", r.Verdict, want)
		}
	}
	// $2,182.70 / 30,655.62M tokens = $0.0712 per 1M at 100% busy.
	if !r.SelfHost.USDPerMTokAtFullUtilization.Equal(dec("0.0712")) {
		t.Errorf("self-host $/1M at full use = %s", r.SelfHost.USDPerMTokAtFullUtilization)
	}
}

func TestBreakEvenSeveralModelsAndNever(t *testing.T) {
	t.Parallel()
	// gpt-4o-mini blends (3·0.15 + 0.60)/4 = $0.2625 → 2,182.70/0.2625 = 8.315e9 (27% utilisation).
	// groq llama-3.1-8b-instant blends (3·0.05 + 0.08)/4 = $0.0575 < $0.0712 at 100% busy → never.
	r, err := BreakEven(h100Worked("gpt-4.1-mini", "gpt-4o-mini", "groq/llama-3.1-8b-instant"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Models) != 3 || r.Models[0].Model != "gpt-4.1-mini" {
		t.Fatalf("models = %+v", r.Models)
	}
	approx(t, "gpt-4o-mini break-even", float64(*r.Models[1].BreakEvenTokensPerMonth), 8.315e9, 0.001)
	approx(t, "gpt-4o-mini utilisation", *r.Models[1].UtilizationAtBreakEven, 0.2712, 0.002)
	groq := r.Models[2]
	if groq.BreakEvenTokensPerMonth != nil || groq.UtilizationAtBreakEven != nil {
		t.Errorf("groq break-even = %v, want never", *groq.BreakEvenTokensPerMonth)
	}
	if !strings.Contains(groq.NeverReason, "even with the GPUs 100% busy") || !strings.HasPrefix(groq.Verdict, "Self-hosting never wins") {
		t.Errorf("groq reason %q verdict %q", groq.NeverReason, groq.Verdict)
	}
	// The primary's fields and the per-model curve values line up.
	last := r.Curve[len(r.Curve)-1]
	if last.TokensPerMonth != 1e12 || !last.APIUSD.Equal(dec("700000")) || !last.APIUSDByModel["groq/llama-3.1-8b-instant"].Equal(dec("57500")) {
		t.Errorf("last curve point = %+v", last)
	}

	// Primary "never": JSON has null break-even and utilisation.
	never, err := BreakEven(h100Worked("groq/llama-3.1-8b-instant"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(never)
	var doc map[string]any
	_ = json.Unmarshal(b, &doc)
	for _, k := range []string{"api_cost_month_usd", "self_host_cost_month_usd", "gpus_needed", "break_even_tokens_per_month", "utilization_at_break_even", "verdict", "curve"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	if doc["break_even_tokens_per_month"] != nil || doc["utilization_at_break_even"] != nil {
		t.Errorf("never: break-even %v utilisation %v, want null", doc["break_even_tokens_per_month"], doc["utilization_at_break_even"])
	}
	pt := doc["curve"].([]any)[0].(map[string]any)
	if len(pt) != 3 || pt["tokens_per_month"] == nil || pt["api_usd"] == nil || pt["self_host_usd"] == nil {
		t.Errorf("curve point = %v", pt)
	}
}

func TestBreakEvenTenMillionTokens(t *testing.T) {
	t.Parallel()
	// The brief's case: 10M tokens/month at 3:1 on gpt-4.1-mini = 10 · 0.70 = $7/month. The cheapest
	// always-on GPU that holds Llama 3.1 8B costs hundreds of dollars a month on-demand or spot.
	for _, spot := range []bool{false, true} {
		r, err := BreakEven(BreakEvenInput{Models: []string{"gpt-4.1-mini"}, OpenModel: "llama-3.1-8b", InputTokens: 7_500_000, OutputTokens: 2_500_000, Spot: spot})
		if err != nil {
			t.Fatal(err)
		}
		if !r.APICostMonthUSD.Equal(dec("7")) {
			t.Errorf("api = %s, want 7", r.APICostMonthUSD)
		}
		if ratio := r.SelfHostCostMonthUSD.Div(r.APICostMonthUSD).InexactFloat64(); ratio < 10 {
			t.Errorf("spot=%v: self-host $%s only %.1f× the API", spot, r.SelfHostCostMonthUSD, ratio)
		}
		if !strings.Contains(r.Verdict, "the API is") || r.SelfHost.Pricing != map[bool]string{false: "on-demand", true: "spot"}[spot] {
			t.Errorf("verdict %q pricing %s", r.Verdict, r.SelfHost.Pricing)
		}
	}
}

func TestBreakEvenGPUSteps(t *testing.T) {
	t.Parallel()
	// With utilisation 1 and peak 1 one H100 serves 30.66e9 tokens/month; 31e9 needs a second:
	// 2 × $2,182.70 = $4,365.40.
	in := h100Worked("gpt-4.1-mini")
	in.Utilization = 1
	for _, tt := range []struct {
		volume int64
		gpus   int
		cost   string
	}{
		{30_000_000_000, 1, "2182.7"},
		{31_000_000_000, 2, "4365.4"},
		{62_000_000_000, 3, "6548.1"},
	} {
		in.InputTokens, in.OutputTokens = tt.volume*3/4, tt.volume/4
		r, err := BreakEven(in)
		if err != nil {
			t.Fatal(err)
		}
		if r.GPUsNeeded != tt.gpus || !r.SelfHostCostMonthUSD.Equal(dec(tt.cost)) {
			t.Errorf("%d tokens: %d GPUs $%s, want %d GPUs $%s", tt.volume, r.GPUsNeeded, r.SelfHostCostMonthUSD, tt.gpus, tt.cost)
		}
	}
	// Defaults (70% busy at a 2× peak) leave 30.66e9 · 0.35 = 10.73e9 per GPU: 11e9 needs two.
	in = h100Worked("gpt-4.1-mini")
	in.PeakFactor = 0
	in.InputTokens, in.OutputTokens = 8_250_000_000, 2_750_000_000
	r, err := BreakEven(in)
	if err != nil {
		t.Fatal(err)
	}
	if r.GPUsNeeded != 2 {
		t.Errorf("11e9 tokens at defaults: %d GPUs, want 2", r.GPUsNeeded)
	}
	// The curve carries the step: self-host cost rises by one GPU-month across the first edge.
	var rises int
	for i := 1; i < len(r.Curve); i++ {
		if r.Curve[i].SelfHostUSD.Sub(r.Curve[i-1].SelfHostUSD).Equal(dec("2182.7")) {
			rises++
		}
	}
	if rises < 50 {
		t.Errorf("curve has %d one-GPU steps, want one per edge up to 1e12 (93)", rises)
	}
}

func TestBreakEvenZeroVolume(t *testing.T) {
	t.Parallel()
	// No usage: the API costs $0, a deployment still costs one GPU-month; the 3:1 mix is assumed.
	in := h100Worked("gpt-4.1-mini")
	in.InputTokens, in.OutputTokens = 0, 0
	r, err := BreakEven(in)
	if err != nil {
		t.Fatal(err)
	}
	if !r.APICostMonthUSD.IsZero() || r.GPUsNeeded != 1 || !r.SelfHostCostMonthUSD.Equal(dec("2182.7")) || r.SelfHost.USDPerMTokAtCurrentVolume != nil {
		t.Errorf("zero volume = %+v", r)
	}
	approx(t, "break-even", float64(*r.BreakEvenTokensPerMonth), 3.118e9, 0.001)
	if !strings.Contains(r.Verdict, "no usage") || len(r.Curve) < 25 {
		t.Errorf("verdict %q, %d curve points", r.Verdict, len(r.Curve))
	}
}

func TestBreakEvenOverheadAndModelThroughput(t *testing.T) {
	t.Parallel()
	// Model throughput for Llama 3.1 8B on one H100 (4096 context, batch 102, 3:1 mix):
	// decode 3,377 tok/s, prefill 12,316 tok/s → 1/(0.75/12316 + 0.25/3377) = 7,412 tok/s.
	// One replica serves 7,412 · 3600 · 730 · 0.7 / 2 = 6.817e9 tokens/month at the planned load, less
	// than (2.99 × 730 + 3,000)/0.70 = 7.404e9; with two: (2 · 2,182.70 + 3,000)/0.70 = 1.0522e10.
	in := BreakEvenInput{Models: []string{"gpt-4.1-mini"}, OpenModel: "llama-3.1-8b", InputTokens: 3, OutputTokens: 1, GPU: "H100",
		GPUPriceUSDPerHour: ptr(dec("2.99")), OverheadMonthUSD: dec("3000")}
	r, err := BreakEven(in)
	if err != nil {
		t.Fatal(err)
	}
	approx(t, "model tok/s", r.SelfHost.TokensPerSecPerGPU, 7412, 0.002)
	approx(t, "break-even", float64(*r.BreakEvenTokensPerMonth), 1.0522e10, 0.001)
	if r.SelfHost.ThroughputSource != "model" {
		t.Errorf("throughput source = %q", r.SelfHost.ThroughputSource)
	}
}

func TestBreakEvenValidation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   BreakEvenInput
		want string
	}{
		{"NoModels", BreakEvenInput{}, "name at least one API model"},
		{"UnknownAPIModel", BreakEvenInput{Models: []string{"gpt-17"}}, `API model "gpt-17" is not in the price table`},
		{"NegativeTokens", BreakEvenInput{Models: []string{"gpt-4o"}, InputTokens: -1}, "must not be negative"},
		{"BadUtilization", BreakEvenInput{Models: []string{"gpt-4o"}, Utilization: 1.5}, "utilization must be in (0, 1]"},
		{"BadPeak", BreakEvenInput{Models: []string{"gpt-4o"}, PeakFactor: 0.5}, "peak_factor must be at least 1"},
		{"ThroughputWithoutGPU", BreakEvenInput{Models: []string{"gpt-4o"}, ThroughputPerGPU: 100}, "name the GPU or its price"},
		{"UnknownOpenModel", BreakEvenInput{Models: []string{"gpt-4o"}, OpenModel: "llama-9"}, "unknown model"},
		{"TooBigForGPU", BreakEvenInput{Models: []string{"gpt-4o"}, OpenModel: "llama-3.1-405b", GPU: "L4", GPUPriceUSDPerHour: ptr(dec("1"))}, "does not fit on 8× L4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := BreakEven(tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}
