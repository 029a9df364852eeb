package pricing

import (
	"strings"
	"testing"
)

func TestLLMLookupAliases(t *testing.T) {
	t.Parallel()
	tb := DefaultLLMPrices()
	tests := []struct {
		name, wantModel, in, out string
	}{
		{"gpt-4.1-mini", "gpt-4.1-mini", "0.4", "1.6"},
		{"GPT-4.1-MINI", "gpt-4.1-mini", "0.4", "1.6"},
		{"openai/gpt-4.1-mini", "gpt-4.1-mini", "0.4", "1.6"},
		{"openrouter/openai/gpt-4.1-mini", "gpt-4.1-mini", "0.4", "1.6"},
		{"openai/gpt-4.1-mini-2025-04-14", "gpt-4.1-mini-2025-04-14", "0.4", "1.6"}, // OpenRouter permaslug
		{"gpt-4o-2024-08-06", "gpt-4o-2024-08-06", "2.5", "10"},
		{"gpt-4o-2024-05-13", "gpt-4o-2024-05-13", "5", "15"}, // a snapshot with its own price is not the alias
		{"gpt-4o-mini-2024-07-18", "gpt-4o-mini-2024-07-18", "0.15", "0.6"},
		{"claude-3-5-haiku-20241022", "anthropic.claude-3-5-haiku-20241022-v1:0", "0.8", "4"}, // only in the full table
		{"anthropic/claude-sonnet-4-5", "claude-sonnet-4-5", "3", "15"},
		{"claude-sonnet-4-5-20250929", "anthropic.claude-sonnet-4-5-20250929-v1:0", "3", "15"}, // curated Bedrock row, same price
		{"openrouter/anthropic/claude-haiku-4.5", "claude-haiku-4-5", "1", "5"},
		{"claude-3-haiku", "claude-3-haiku-20240307", "0.25", "1.25"},
		{"models/gemini-2.5-flash", "gemini/gemini-2.5-flash", "0.3", "2.5"},
		{"gemini-2.5-flash-latest", "gemini-2.5-flash", "0.3", "2.5"},
		{"deepseek-chat", "deepseek/deepseek-chat", "0.28", "0.42"},
		{"mistral-large-latest", "mistral/mistral-large-latest", "0.5", "1.5"},
		{"us.anthropic.claude-3-5-haiku-20241022-v1:0", "us.anthropic.claude-3-5-haiku-20241022-v1:0", "0.8", "4"},
		{"vertex_ai/claude-sonnet-4@20250514", "claude-sonnet-4-20250514", "3", "15"},
	}
	for _, tt := range tests {
		p, ok := tb.Lookup(tt.name)
		if !ok {
			t.Errorf("Lookup(%q) not found", tt.name)
			continue
		}
		if p.Model != tt.wantModel || !p.InputPerMTok.Equal(dec(tt.in)) || !p.OutputPerMTok.Equal(dec(tt.out)) {
			t.Errorf("Lookup(%q) = %s %s/%s, want %s %s/%s", tt.name, p.Model, p.InputPerMTok, p.OutputPerMTok, tt.wantModel, tt.in, tt.out)
		}
	}
	for _, unknown := range []string{"", "my-finetune-v7", "gpt-17"} {
		if p, ok := tb.Lookup(unknown); ok {
			t.Errorf("Lookup(%q) = %s, want not found", unknown, p.Model)
		}
	}
	for in, want := range map[string]string{"openai/gpt-4o-2024-08-06": "gpt-4o", "claude-3-5-haiku-20241022": "claude-3-5-haiku",
		"openrouter/anthropic/claude-haiku-4.5": "claude-haiku-4-5"} {
		if got := NormalizeLLMModel(in); got != want {
			t.Errorf("NormalizeLLMModel(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLLMCost(t *testing.T) {
	t.Parallel()
	p, _ := DefaultLLMPrices().Lookup("gpt-4.1-mini")
	// 3M uncached · $0.40 + 1M cached · $0.10 + 1M output · $1.60 = $2.90.
	if got := p.Cost(3_000_000, 1_000_000, 1_000_000); !got.Equal(dec("2.9")) {
		t.Errorf("cost = %s, want 2.9", got)
	}
	// 3:1 mix: (3 · 0.40 + 1.60) / 4 = $0.70 per 1M.
	if got := p.BlendedPerMTok(3, 0, 1); !got.Equal(dec("0.7")) {
		t.Errorf("blend = %s, want 0.7", got)
	}
	// No cached price known: cached tokens at the input price. gpt-4o-2024-05-13: 1M · $5 = $5.
	old, _ := DefaultLLMPrices().Lookup("gpt-4o-2024-05-13")
	if old.CachedInputPerMTok != nil || !old.Cost(0, 1_000_000, 0).Equal(dec("5")) {
		t.Errorf("uncached fallback cost = %s", old.Cost(0, 1_000_000, 0))
	}
	// Batch prices come from the full LiteLLM table where it has them.
	snap, _ := DefaultLLMPrices().Lookup("gpt-4o-2024-08-06")
	if snap.BatchInputPerMTok == nil || !snap.BatchInputPerMTok.Equal(dec("1.25")) {
		t.Errorf("batch input = %v, want 1.25", snap.BatchInputPerMTok)
	}
}

func TestLLMOverrides(t *testing.T) {
	t.Parallel()
	ov, err := ParseLLMPricesCSV(strings.NewReader("model,input_usd_per_mtok,output_usd_per_mtok,cached_input_usd_per_mtok\ngpt-4.1-mini,0.2,0.8,0.05\n"))
	if err != nil {
		t.Fatal(err)
	}
	base := DefaultLLMPrices()
	tb := base.WithOverrides(ov, "negotiated 2026")
	for _, name := range []string{"gpt-4.1-mini", "openai/gpt-4.1-mini-2025-04-14"} {
		p, ok := tb.Lookup(name)
		if !ok || !p.InputPerMTok.Equal(dec("0.2")) || !p.Override || p.Source != "negotiated 2026" {
			t.Errorf("override Lookup(%q) = %+v", name, p)
		}
	}
	if p, _ := base.Lookup("gpt-4.1-mini"); !p.InputPerMTok.Equal(dec("0.4")) {
		t.Error("base table modified by WithOverrides")
	}
	if p, ok := tb.Lookup("gpt-4o"); !ok || !p.InputPerMTok.Equal(dec("2.5")) {
		t.Error("non-overridden model lost")
	}
	_, err = ParseLLMPricesCSV(strings.NewReader("model,input_usd_per_mtok,output_usd_per_mtok\nx,abc,1\n"))
	if err == nil || err.Error() != `line 2, column input_usd_per_mtok: "abc" is not a price` {
		t.Errorf("err = %v", err)
	}
}
