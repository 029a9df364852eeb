package pricing

import (
	"strings"
	"testing"
	"time"
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

// TestUsageCostEachKindAtItsRate: cache reads at their price, 5-minute and
// 1-hour cache writes at 1.25× and 2× the input price, and the long-context
// rates over 200k tokens where the table has them — the curated row of a
// model takes them from the full table.
func TestUsageCostEachKindAtItsRate(t *testing.T) {
	t.Parallel()
	tb := DefaultLLMPrices()
	sonnet, _ := tb.Lookup("claude-sonnet-4-5")
	if !strings.Contains(sonnet.Source, "RoCry") || !sonnet.curated {
		t.Fatalf("curated Sonnet 4.5: %+v", sonnet)
	}
	u := TokenUsage{Uncached: 1_000_000, CacheRead: 2_000_000, CacheWrite5m: 100_000, CacheWrite1h: 10_000, Output: 100_000}
	if got := sonnet.UsageCost(u); !got.Equal(dec("5.535")) { // 3 + 0.6 + 0.375 + 0.06 + 1.5
		t.Errorf("Sonnet 4.5 = %s, want 5.535", got)
	}
	u.LongContext = true
	if got := sonnet.UsageCost(u); !got.Equal(dec("10.32")) { // 6 + 1.2 + 0.75 + 0.12 + 2.25
		t.Errorf("Sonnet 4.5 over 200k = %s, want 10.32", got)
	}
	haiku, _ := tb.Lookup("claude-haiku-4-5-20251001")
	if got := haiku.UsageCost(TokenUsage{Uncached: 1_000_000, LongContext: true}); !got.Equal(dec("1")) {
		t.Errorf("Haiku 4.5 over 200k = %s, want its own rate, 1", got)
	}
	// An override has its own prices and no long-context rates.
	over := tb.WithOverrides([]LLMPrice{{Model: "claude-sonnet-4-5", InputPerMTok: dec("2"), OutputPerMTok: dec("10")}}, "negotiated")
	p, _ := over.Lookup("claude-sonnet-4-5")
	if got := p.UsageCost(TokenUsage{Uncached: 1_000_000, CacheWrite1h: 1_000_000, LongContext: true}); !got.Equal(dec("6")) {
		t.Errorf("override = %s, want 2 + 4", got)
	}
}

func TestClaudeModelID(t *testing.T) {
	t.Parallel()
	oct := func(d int) time.Time { return time.Date(2024, 10, d, 0, 0, 0, 0, time.UTC) }
	tests := []struct {
		name  string
		day   time.Time
		want  string
		known bool
	}{
		{"Claude 3 Haiku", oct(1), "claude-3-haiku-20240307", true},
		{"claude  haiku 4.5", oct(1), "claude-haiku-4-5-20251001", true},
		{"Claude 3.5 Sonnet", oct(21), "claude-3-5-sonnet-20240620", true},
		{"Claude 3.5 Sonnet", oct(22), "claude-3-5-sonnet-20241022", true},
		{"Claude 3.5 Sonnet (Old)", oct(30), "claude-3-5-sonnet-20240620", true},
		{"Claude Haiku 3", oct(1), "claude-3-haiku-20240307", true},
		{"Claude Opus 5", oct(1), "claude-opus-5", false},
		{"Claude Sonnet 4.7 (Preview)", oct(1), "claude-sonnet-4-7-preview", false},
		{"claude-haiku-4-5-20251001", oct(1), "claude-haiku-4-5-20251001", false},
		{"", oct(1), "", false},
	}
	for _, tt := range tests {
		if got, known := ClaudeModelID(tt.name, tt.day); got != tt.want || known != tt.known {
			t.Errorf("ClaudeModelID(%q, %s) = %q, %v; want %q, %v", tt.name, tt.day.Format(time.DateOnly), got, known, tt.want, tt.known)
		}
	}
	// Every id in the table since Claude 3 has a price, so a Console
	// file's models are priced, and break-even knows them.
	for _, names := range claudeNames() {
		for _, n := range names {
			if _, ok := DefaultLLMPrices().Lookup(n.id); !ok && !strings.HasPrefix(n.id, "claude-2") && n.id != "claude-instant-1.2" {
				t.Errorf("%s has no price", n.id)
			}
		}
	}
}
