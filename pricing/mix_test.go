package pricing

import (
	"strings"
	"testing"
)

func TestTierTable(t *testing.T) {
	t.Parallel()
	if len(ModelTiers()) < 20 {
		t.Fatalf("%d tiers", len(ModelTiers()))
	}
	for model, want := range map[string]string{
		"gpt-4o": "deepseek-v3", "openai/gpt-4o-2024-08-06": "deepseek-v3", "gpt-4o-mini": "qwen3-32b",
		"gpt-4o-mini-2024-07-18": "qwen3-32b", "gpt-4.1-mini": "llama-3.3-70b", "claude-3-haiku-20240307": "llama-3.1-8b",
		"claude-sonnet-4-5-20250929": NoSubstitute, "claude-opus-4-1": NoSubstitute, "gpt-5": NoSubstitute, "gpt-5-nano": "llama-3.3-70b",
		"meta-llama/Llama-3.1-8B-Instruct": "llama-3.1-8b", "gemini/gemini-1.5-flash-8b": "llama-3.1-8b", "gemini-1.5-flash": "qwen3-32b",
	} {
		row, ok := Substitute(model)
		if !ok || row.OpenModel != want {
			t.Errorf("Substitute(%q) = %+v, %v; want %s", model, row, ok, want)
		}
	}
	if row, ok := Substitute("my-finetune"); ok {
		t.Errorf("unknown model matched %+v", row)
	}
}

func TestMixPricesEachModelAtItsOwnRatesAndTier(t *testing.T) {
	t.Parallel()
	// gpt-4o: 1,000M input × $2.50 + 200M output × $10 = $4,500 ($3.75 per 1M in its mix);
	// gpt-4o-mini: 2,000M × $0.15 + 500M × $0.60 = $600 ($0.24 per 1M). The mix costs $5,100, not
	// 3.7B tokens at either model's price.
	in := BreakEvenInput{Usage: []ModelUsage{
		{Model: "gpt-4o-mini", InputTokens: 2_000_000_000, OutputTokens: 500_000_000},
		{Model: "gpt-4o-2024-08-06", InputTokens: 1_000_000_000, OutputTokens: 200_000_000},
		{Model: "claude-sonnet-4-5", InputTokens: 100_000_000, OutputTokens: 10_000_000},
	}}
	r, err := BreakEven(in)
	if err != nil {
		t.Fatal(err)
	}
	m := r.Mix
	if m == nil || len(m.Models) != 3 {
		t.Fatalf("mix = %+v", m)
	}
	// claude-sonnet-4-5: 100M × $3 + 10M × $15 = $450, smallest spend, no credible open substitute.
	want := []struct {
		model, open, cost, perM string
	}{
		{"gpt-4o-2024-08-06", "deepseek-v3", "4500", "3.75"},
		{"gpt-4o-mini", "qwen3-32b", "600", "0.24"},
		{"claude-sonnet-4-5", "", "450", "4.0909"},
	}
	for i, w := range want {
		got := m.Models[i]
		if got.Model != w.model || got.OpenModel != w.open || !got.APICostMonthUSD.Equal(dec(w.cost)) || !got.APIUSDPerMTok.Equal(dec(w.perM)) {
			t.Errorf("row %d = %s → %q, $%s, $%s/1M; want %+v", i, got.Model, got.OpenModel, got.APICostMonthUSD, got.APIUSDPerMTok, w)
		}
	}
	if !m.APICostMonthUSD.Equal(dec("5550")) || !m.SubstitutableAPICostMonthUSD.Equal(dec("5100")) {
		t.Errorf("mix API %s, substitutable %s", m.APICostMonthUSD, m.SubstitutableAPICostMonthUSD)
	}
	if len(m.NoSubstitute) != 1 || m.NoSubstitute[0] != "claude-sonnet-4-5" || !strings.Contains(m.Models[2].Verdict, "Stays on the API") ||
		!strings.Contains(m.Verdict, "claude-sonnet-4-5 stay(s) on the API") {
		t.Errorf("no substitute %v, verdicts %q / %q", m.NoSubstitute, m.Models[2].Verdict, m.Verdict)
	}
	// Each substitutable model has its own break-even against its own open model; DeepSeek-V3 is
	// served in FP8, as released.
	if m.Models[0].Precision != FP8 || m.Models[0].SelfHostCostMonthUSD == nil || m.Models[1].SelfHostCostMonthUSD == nil || m.Models[1].GPU == "" {
		t.Errorf("rows %+v / %+v", m.Models[0], m.Models[1])
	}
	// The default view is the largest-spend model with a substitute, on its own tokens and price.
	if r.Models[0].Model != "gpt-4o-2024-08-06" || !strings.HasPrefix(r.Models[0].PriceModel, "gpt-4o") || !r.APICostMonthUSD.Equal(dec("4500")) ||
		r.SelfHost.OpenModel != "deepseek-v3" || r.OpenModelSource != "tier table (frontier open)" {
		t.Errorf("primary %s (%s) $%s vs %s (%s)", r.Models[0].Model, r.Models[0].PriceModel, r.APICostMonthUSD, r.SelfHost.OpenModel, r.OpenModelSource)
	}
	if r.GPUsNeeded != r.Replicas*r.SelfHost.GPUsPerReplica {
		t.Errorf("gpus %d ≠ %d replicas × %d", r.GPUsNeeded, r.Replicas, r.SelfHost.GPUsPerReplica)
	}
	// The mix self-hosts one deployment per open model; its break-even scale is where that stops
	// costing more than the $5,100 it replaces.
	if m.SelfHostCostMonthUSD.IsZero() || (m.BreakEvenScale != nil && *m.BreakEvenScale <= 0) {
		t.Errorf("mix self-host %s, scale %v", m.SelfHostCostMonthUSD, m.BreakEvenScale)
	}

	// The user's substitute wins over the tier table, and "none" keeps a model on the API.
	in.Substitutes = map[string]string{"gpt-4o-mini": "llama-3.1-8b", "gpt-4o": "none"}
	r, err = BreakEven(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range r.Mix.Models {
		switch row.Model {
		case "gpt-4o-mini":
			if row.OpenModel != "llama-3.1-8b" || row.SubstituteSource != "yours" {
				t.Errorf("gpt-4o-mini row %+v", row)
			}
		case "gpt-4o-2024-08-06":
			if row.OpenModel != "" || !strings.Contains(row.NoSubstituteReason, "you marked it") {
				t.Errorf("gpt-4o row %+v", row)
			}
		}
	}
	if r.Models[0].Model != "gpt-4o-mini" || r.SelfHost.OpenModel != "llama-3.1-8b" || r.OpenModelSource != "yours" {
		t.Errorf("primary with substitutes: %s vs %s (%s)", r.Models[0].Model, r.SelfHost.OpenModel, r.OpenModelSource)
	}
	if _, err := BreakEven(BreakEvenInput{Usage: []ModelUsage{{Model: "gpt-4o", InputTokens: -1}}}); err == nil || !strings.Contains(err.Error(), "must not be negative") {
		t.Errorf("negative usage: %v", err)
	}
	if _, err := BreakEven(BreakEvenInput{Usage: []ModelUsage{{Model: "gpt-17", InputTokens: 1}}}); err == nil || !strings.Contains(err.Error(), "not in the price table") {
		t.Errorf("unknown usage model: %v", err)
	}
	if _, err := BreakEven(BreakEvenInput{Usage: in.Usage, Substitutes: map[string]string{"gpt-4o": "llama-9"}}); err == nil ||
		!strings.Contains(err.Error(), "substitute for gpt-4o") {
		t.Errorf("bad substitute: %v", err)
	}
}

func TestSingleModelDefaultsToItsTier(t *testing.T) {
	t.Parallel()
	// Without an open model, gpt-4o is compared with its tier's substitute, not an 8B model.
	r, err := BreakEven(BreakEvenInput{Models: []string{"gpt-4o"}, InputTokens: 1e9, OutputTokens: 2e8})
	if err != nil {
		t.Fatal(err)
	}
	if r.SelfHost.OpenModel != "deepseek-v3" || r.NoSubstitute != "" {
		t.Errorf("gpt-4o vs %s (%q)", r.SelfHost.OpenModel, r.NoSubstitute)
	}
	// A model with no credible substitute says so in the verdict.
	r, err = BreakEven(BreakEvenInput{Models: []string{"claude-opus-4-1"}, InputTokens: 1e8, OutputTokens: 1e7})
	if err != nil {
		t.Fatal(err)
	}
	if r.NoSubstitute == "" || !strings.HasPrefix(r.Verdict, "claude-opus-4-1 has no credible open substitute") || r.OpenModelSource != "default" {
		t.Errorf("opus: %q / %q", r.NoSubstitute, r.Verdict)
	}
}
