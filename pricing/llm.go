package pricing

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/quantity"
)

//go:embed data/llm_prices.csv
var llmPricesCSV []byte

//go:embed data/litellm_model_prices.json
var litellmJSON []byte

// Provenance of the embedded LLM price tables.
const (
	// LLMPricesSource names the curated table (99 chat models).
	LLMPricesSource = "LiteLLM model_prices_and_context_window.json (BerriAI/litellm, MIT) via mirror RoCry/llm-api-price@8442b939"
	// LLMPricesAsOf is the sync date of the curated table.
	LLMPricesAsOf = "2026-07-24"
	// LiteLLMFallbackSource names the full LiteLLM table used for models the curated table lacks and for batch prices.
	LiteLLMFallbackSource = "LiteLLM model_prices_and_context_window.json (BerriAI/litellm, MIT) via mirror Prajwalsrinvas/token-tariff@dc2baf9d"
	// LiteLLMFallbackAsOf is the date of the full LiteLLM table.
	LiteLLMFallbackAsOf = "2026-08-01"
)

// LLMPrice is the price of one API model in USD per 1M tokens.
type LLMPrice struct {
	// Model is the table's model name, e.g. "gpt-4.1-mini" or "gemini/gemini-2.5-flash".
	Model string `json:"model"`
	// Provider is the API provider (openai, anthropic, gemini, …).
	Provider string `json:"provider"`
	// InputPerMTok is the price of 1M uncached input tokens.
	InputPerMTok decimal.Decimal `json:"input_usd_per_mtok"`
	// OutputPerMTok is the price of 1M output tokens.
	OutputPerMTok decimal.Decimal `json:"output_usd_per_mtok"`
	// CachedInputPerMTok is the price of 1M cache-read input tokens; nil when unknown (then the input price applies).
	CachedInputPerMTok *decimal.Decimal `json:"cached_input_usd_per_mtok"`
	// BatchInputPerMTok is the batch-API input price where LiteLLM knows it; nil otherwise.
	BatchInputPerMTok *decimal.Decimal `json:"batch_input_usd_per_mtok,omitempty"`
	// BatchOutputPerMTok is the batch-API output price where LiteLLM knows it; nil otherwise.
	BatchOutputPerMTok *decimal.Decimal `json:"batch_output_usd_per_mtok,omitempty"`
	// MaxInputTokens is the context window (0 when unknown).
	MaxInputTokens int64 `json:"max_input_tokens,omitempty"`
	// LongContext is the price of requests whose input is over 200k
	// tokens, where the table has one (some Claude Sonnet models); nil
	// otherwise, and then such requests cost the price above.
	LongContext *LongContextPrice `json:"long_context,omitempty"`
	// curated marks a price of the shipped curated table, whose
	// long-context rates are the full table's (fullLongContext).
	curated bool
	// Source says where the price comes from (table or override label).
	Source string `json:"source"`
	// Override is true for prices set with WithOverrides.
	Override bool `json:"override,omitempty"`
}

var million = decimal.NewFromInt(1_000_000)

// LongContextPrice is a model's price, in USD per 1M tokens, of requests
// whose input is over LongContextTokens.
type LongContextPrice struct {
	InputPerMTok  decimal.Decimal `json:"input_usd_per_mtok"`
	OutputPerMTok decimal.Decimal `json:"output_usd_per_mtok"`
	// CachedInputPerMTok is the cache-read price; nil: the price of a
	// cache read under the threshold.
	CachedInputPerMTok *decimal.Decimal `json:"cached_input_usd_per_mtok,omitempty"`
}

// LongContextTokens is the input size above which a request is priced at
// a model's long-context rates (LiteLLM's "_above_200k_tokens" prices).
const LongContextTokens = 200_000

// Anthropic prices prompt-cache writes as multiples of the base input
// price (its pricing page, "Prompt caching"): 1.25× for the 5-minute cache,
// 2× for the 1-hour cache. Reads have a price of their own in the table.
var (
	cacheWrite5mFactor = decimal.New(125, -2)
	cacheWrite1hFactor = decimal.NewFromInt(2)
)

// fullLongContext returns the long-context rates the full LiteLLM table
// has for p's model at p's prices, or nil. It is asked only when a request
// is priced over 200k tokens: the full table is parsed on first use.
func fullLongContext(p LLMPrice) *LongContextPrice {
	full := litellmTable()
	if j, ok := full.exact[foldLLM(p.Model)]; ok {
		if f := full.prices[j]; f.InputPerMTok.Equal(p.InputPerMTok) && f.OutputPerMTok.Equal(p.OutputPerMTok) {
			return f.LongContext
		}
	}
	return nil
}

// TokenUsage is one model's tokens in a bucket of usage, by the kinds a
// provider prices apart.
type TokenUsage struct {
	Uncached     int64 // input neither read from nor written to a cache
	CacheRead    int64 // input read from the prompt cache
	CacheWrite5m int64 // input written to the 5-minute prompt cache
	CacheWrite1h int64 // input written to the 1-hour prompt cache
	Output       int64
	// LongContext says the requests' input was over LongContextTokens:
	// every kind is priced at the model's long-context rates, where the
	// table has them.
	LongContext bool
}

// UsageCost is the price of u: each kind of token at its own rate —
// uncached input, cache reads (the cached-input price), 5-minute and
// 1-hour cache writes (1.25× and 2× the input price), output — at the
// long-context rates when u.LongContext and the price has them.
func (p LLMPrice) UsageCost(u TokenUsage) decimal.Decimal {
	in, out, cached := p.InputPerMTok, p.OutputPerMTok, p.InputPerMTok
	if p.CachedInputPerMTok != nil {
		cached = *p.CachedInputPerMTok
	}
	lc := p.LongContext
	if u.LongContext && lc == nil && p.curated {
		lc = fullLongContext(p)
	}
	if u.LongContext && lc != nil {
		in, out = lc.InputPerMTok, lc.OutputPerMTok
		if lc.CachedInputPerMTok != nil {
			cached = *lc.CachedInputPerMTok
		}
	}
	n := decimal.NewFromInt
	return n(u.Uncached).Mul(in).
		Add(n(u.CacheRead).Mul(cached)).
		Add(n(u.CacheWrite5m).Mul(in).Mul(cacheWrite5mFactor)).
		Add(n(u.CacheWrite1h).Mul(in).Mul(cacheWrite1hFactor)).
		Add(n(u.Output).Mul(out)).
		Div(million)
}

// Cost is the price of the given token counts: (uncached·input + cached·cached-input + output·output) / 1e6.
// Cached tokens are priced at the input price when no cached price is known.
func (p LLMPrice) Cost(uncachedInput, cachedInput, output int64) decimal.Decimal {
	cached := p.InputPerMTok
	if p.CachedInputPerMTok != nil {
		cached = *p.CachedInputPerMTok
	}
	return decimal.NewFromInt(uncachedInput).Mul(p.InputPerMTok).
		Add(decimal.NewFromInt(cachedInput).Mul(cached)).
		Add(decimal.NewFromInt(output).Mul(p.OutputPerMTok)).
		Div(million)
}

// BlendedPerMTok is the average price of 1M tokens in the given mix (counts need not be per month).
// It returns zero when all counts are zero.
func (p LLMPrice) BlendedPerMTok(uncachedInput, cachedInput, output int64) decimal.Decimal {
	total := uncachedInput + cachedInput + output
	if total == 0 {
		return decimal.Zero
	}
	return p.Cost(uncachedInput, cachedInput, output).Mul(million).Div(decimal.NewFromInt(total))
}

// LLMPriceTable is an immutable set of API prices with alias-tolerant lookup. Safe for concurrent use.
type LLMPriceTable struct {
	// Source describes the curated table (an override label is appended by WithOverrides).
	Source string `json:"source"`
	// AsOf is the date of the curated table (YYYY-MM-DD).
	AsOf string `json:"as_of"`

	prices   []LLMPrice
	exact    map[string]int // folded full name → index
	bare     map[string]int // folded name without provider path → index (first-party providers win)
	undated  map[string]int // bare name without snapshot suffix → index (for "claude-3-haiku" → claude-3-haiku-20240307)
	fallback bool           // consult the embedded full LiteLLM table when nothing matches
	over     *LLMPriceTable // overrides, consulted first with every alias form
}

var defaultLLMPrices = sync.OnceValues(func() (*LLMPriceTable, error) {
	ps, err := ParseLLMPricesCSV(bytes.NewReader(llmPricesCSV))
	if err != nil {
		return nil, err
	}
	// The curated table carries three prices a model; its long-context
	// rates are the full table's (fullLongContext).
	for i := range ps {
		ps[i].curated = true
	}
	t := NewLLMPriceTable(ps, LLMPricesSource, LLMPricesAsOf)
	t.fallback = true
	return t, nil
})

// DefaultLLMPrices returns the embedded LLM price table (llm_prices.csv), falling back to the full
// embedded LiteLLM table for models it lacks. Parsed on first use; panics only on corrupt embedded data.
func DefaultLLMPrices() *LLMPriceTable {
	t, err := defaultLLMPrices()
	if err != nil {
		panic("pricing: embedded LLM price table is corrupt: " + err.Error())
	}
	return t
}

// NewLLMPriceTable builds a table from prices (later rows with the same name win); it has no fallback.
func NewLLMPriceTable(prices []LLMPrice, source, asOf string) *LLMPriceTable {
	t := &LLMPriceTable{Source: source, AsOf: asOf}
	for _, p := range prices {
		t.add(p)
	}
	return t
}

func (t *LLMPriceTable) add(p LLMPrice) {
	if t.exact == nil {
		t.exact, t.bare, t.undated = map[string]int{}, map[string]int{}, map[string]int{}
	}
	k := foldLLM(p.Model)
	if i, ok := t.exact[k]; ok {
		t.prices[i] = p
	} else {
		t.exact[k] = len(t.prices)
		t.prices = append(t.prices, p)
	}
	i := t.exact[k]
	b := bareLLM(k)
	better := func(m map[string]int, key string) bool {
		j, ok := m[key]
		return !ok || providerRank(t.prices[j].Provider) > providerRank(p.Provider) || p.Override
	}
	if better(t.bare, b) {
		t.bare[b] = i
	}
	if _, undated := llmCandidates(b); len(undated) > 0 {
		if u := undated[len(undated)-1]; better(t.undated, u) {
			t.undated[u] = i
		}
	}
}

// All returns every price in the table, in table order.
func (t *LLMPriceTable) All() []LLMPrice { return append([]LLMPrice(nil), t.prices...) }

// WithOverrides returns a new table where the given prices (e.g. an org's negotiated rates) take
// precedence over rows of the same model name and over alias matches; their Source is sourceLabel.
func (t *LLMPriceTable) WithOverrides(overrides []LLMPrice, sourceLabel string) *LLMPriceTable {
	n := &LLMPriceTable{Source: t.Source, AsOf: t.AsOf, fallback: t.fallback, over: &LLMPriceTable{}}
	if len(overrides) > 0 && sourceLabel != "" {
		n.Source = t.Source + "; overridden by " + sourceLabel
	}
	for _, p := range t.prices {
		n.add(p)
	}
	if t.over != nil {
		for _, p := range t.over.prices {
			n.over.add(p)
		}
	}
	for _, o := range overrides {
		o.Override = true
		o.Source = sourceLabel
		n.add(o)
		n.over.add(o)
	}
	return n
}

// Lookup finds the price of a model by the name a usage log or bill carries. It tolerates provider
// prefixes ("openai/", "anthropic/", "openrouter/openai/…", "models/", "bedrock/us.anthropic.…"),
// dated snapshots ("gpt-4o-2024-08-06", "claude-3-5-haiku-20241022", "…@20250514", "…-v1:0"),
// "-latest" and dots vs dashes in versions ("claude-haiku-4.5"). Exact names win over aliases, an
// exact dated snapshot in the full LiteLLM table wins over the undated alias, and first-party
// providers win over resellers.
func (t *LLMPriceTable) Lookup(model string) (LLMPrice, bool) {
	given, undated := llmCandidates(model)
	if len(given) == 0 {
		return LLMPrice{}, false
	}
	if t.over != nil && len(t.over.prices) > 0 {
		if p, ok := t.over.find(given, undated, nil); ok {
			return p, true
		}
	}
	var fb *LLMPriceTable
	if t.fallback {
		fb = litellmTable()
	}
	return t.find(given, undated, fb)
}

// find searches t, then fb, first with the names as given (minus provider paths), then without
// date/version suffixes.
func (t *LLMPriceTable) find(given, undated []string, fb *LLMPriceTable) (LLMPrice, bool) {
	for _, stage := range [][]string{given, undated} {
		for _, tbl := range []*LLMPriceTable{t, fb} {
			if tbl == nil {
				continue
			}
			for _, c := range stage {
				if i, ok := tbl.exact[c]; ok {
					return tbl.prices[i], true
				}
				if i, ok := tbl.bare[bareLLM(c)]; ok {
					return tbl.prices[i], true
				}
				if i, ok := tbl.undated[bareLLM(c)]; ok {
					return tbl.prices[i], true
				}
			}
		}
	}
	return LLMPrice{}, false
}

// NormalizeLLMModel folds a model name to the canonical form Lookup matches on: lower case, provider
// path and dated snapshot removed, dots and underscores as dashes ("openai/gpt-4o-2024-08-06" →
// "gpt-4o"). Useful as a grouping key for usage rows.
func NormalizeLLMModel(name string) string {
	given, undated := llmCandidates(name)
	c := append(given, undated...)
	if len(c) == 0 {
		return ""
	}
	return bareLLM(c[len(c)-1])
}

var versionDot = regexp.MustCompile(`(\d)\.(\d)`)

// foldLLM lower-cases, maps '_', '@' and spaces to '-', and dots between digits to '-', so
// "claude-haiku-4.5" matches "claude-haiku-4-5" and "claude-sonnet-4@20250514" matches "claude-sonnet-4-20250514".
func foldLLM(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.NewReplacer("_", "-", "@", "-", " ", "-").Replace(s)
	for range 2 { // "1.2.3" needs two passes: matches do not overlap
		s = versionDot.ReplaceAllString(s, "$1-$2")
	}
	return s
}

var (
	// vendorPrefix matches Bedrock cross-region and vendor prefixes: "us.anthropic.", "anthropic.", "meta.".
	vendorPrefix = regexp.MustCompile(`^(?:(?:us|eu|apac|au|jp|global|us-gov)\.)?(?:anthropic|meta|amazon|mistral|cohere|ai21)\.`)
	// bedrockVersion matches Bedrock model versions: "-v1:0", ":0".
	bedrockVersion = regexp.MustCompile(`(?:-v\d+)?:\d+$`)
)

// bareLLM strips the provider path, Bedrock-style vendor prefixes and Bedrock versions from a folded name.
func bareLLM(k string) string {
	if i := strings.LastIndex(k, "/"); i >= 0 {
		k = k[i+1:]
	}
	return bedrockVersion.ReplaceAllString(vendorPrefix.ReplaceAllString(k, ""), "")
}

var (
	dateSuffix    = regexp.MustCompile(`(?:-\d{4}-\d{2}-\d{2}|-\d{8}|-\d{4}|-latest|-v\d+:\d+|:\d+|-preview-\d{2}-\d{2})$`)
	knownPrefixes = []string{"models/", "openrouter/", "litellm-proxy/", "litellm/", "vertex-ai/", "bedrock/", "azure/",
		"openai/", "anthropic/", "google/", "gemini/", "x-ai/", "xai/", "deepseek/", "mistralai/", "mistral/", "meta-llama/"}
)

// llmCandidates returns the folded name as given followed by its forms with provider paths
// removed, and separately the forms with snapshot suffixes removed.
func llmCandidates(model string) (given, undated []string) {
	k := foldLLM(model)
	if k == "" {
		return nil, nil
	}
	given = []string{k}
	// Provider paths: try the name with each leading known prefix removed.
	for changed := true; changed; {
		changed = false
		for _, p := range knownPrefixes {
			if rest, ok := strings.CutPrefix(k, p); ok && rest != "" {
				k = rest
				given = append(given, k)
				changed = true
			}
		}
	}
	// Snapshot suffixes, repeatedly ("-v1:0" then "-20241022").
	for {
		s := dateSuffix.ReplaceAllString(k, "")
		if s == k || s == "" {
			break
		}
		k = s
		undated = append(undated, k)
	}
	return given, undated
}

// providerRank orders providers for alias matches: first-party APIs before clouds before resellers.
func providerRank(p string) int {
	switch p {
	case "openai", "anthropic", "gemini", "deepseek", "xai", "mistral", "cohere":
		return 0
	case "vertex_ai-language-models", "vertex_ai-anthropic_models", "azure", "bedrock", "bedrock_converse":
		return 1
	}
	return 2
}

// ParseLLMPricesCSV reads a table shaped like llm_prices.csv: columns model, input_usd_per_mtok,
// output_usd_per_mtok (required), provider, cached_input_usd_per_mtok, max_input_tokens, source.
// An org's override upload uses the same shape. Errors name the line and column.
func ParseLLMPricesCSV(r io.Reader) ([]LLMPrice, error) {
	t, err := newTable(r, "model", "input_usd_per_mtok", "output_usd_per_mtok")
	if err != nil {
		return nil, err
	}
	var out []LLMPrice
	for t.next() {
		p := LLMPrice{Model: t.str("model"), Provider: strings.ToLower(t.str("provider")), Source: t.str("source")}
		if p.Model == "" {
			t.fail("model", "empty model name")
		}
		p.InputPerMTok = t.requiredMoney("input_usd_per_mtok")
		p.OutputPerMTok = t.requiredMoney("output_usd_per_mtok")
		p.CachedInputPerMTok = t.money("cached_input_usd_per_mtok")
		p.MaxInputTokens = int64(t.float("max_input_tokens", false, quantity.Tokens))
		out = append(out, p)
	}
	return out, t.err
}

func (t *table) requiredMoney(col string) decimal.Decimal {
	s := t.str(col)
	if s == "" {
		t.fail(col, "missing price")
		return decimal.Zero
	}
	d, err := quantity.Price.Parse("", s)
	if errors.Is(err, quantity.ErrNotNumber) {
		t.fail(col, fmt.Sprintf("%q is not a price", s))
		return decimal.Zero
	}
	if err != nil {
		t.fail(col, numberError(s, err, "is not a price"))
		return decimal.Zero
	}
	return d
}

// litellmEntry is the subset of a LiteLLM table entry we read (prices per single token).
type litellmEntry struct {
	Provider       string          `json:"litellm_provider"`
	Mode           string          `json:"mode"`
	Input          json.Number     `json:"input_cost_per_token"`
	Output         json.Number     `json:"output_cost_per_token"`
	CacheRead      json.Number     `json:"cache_read_input_token_cost"`
	BatchInput     json.Number     `json:"input_cost_per_token_batches"`
	BatchOutput    json.Number     `json:"output_cost_per_token_batches"`
	MaxInputTokens json.RawMessage `json:"max_input_tokens"`
	// Rates of requests whose input is over 200k tokens.
	InputLong     json.Number `json:"input_cost_per_token_above_200k_tokens"`
	OutputLong    json.Number `json:"output_cost_per_token_above_200k_tokens"`
	CacheReadLong json.Number `json:"cache_read_input_token_cost_above_200k_tokens"`
}

var litellmTable = sync.OnceValue(func() *LLMPriceTable {
	t, err := parseLiteLLM(litellmJSON)
	if err != nil {
		panic("pricing: embedded LiteLLM table is corrupt: " + err.Error())
	}
	return t
})

// parseLiteLLM turns LiteLLM's model_prices_and_context_window.json into a table of its chat and
// completion models that have token prices.
func parseLiteLLM(data []byte) (*LLMPriceTable, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(raw))
	for k := range raw {
		names = append(names, k)
	}
	sort.Strings(names) // deterministic alias resolution
	var prices []LLMPrice
	perM := func(n json.Number) *decimal.Decimal {
		if n == "" {
			return nil
		}
		d, err := decimal.NewFromString(string(n))
		if err != nil {
			return nil
		}
		d = d.Mul(million)
		return &d
	}
	for _, name := range names {
		if name == "sample_spec" {
			continue
		}
		var e litellmEntry
		if err := json.Unmarshal(raw[name], &e); err != nil {
			continue // entries with other shapes are not token-priced chat models
		}
		if e.Mode != "chat" && e.Mode != "completion" && e.Mode != "responses" {
			continue
		}
		in, out := perM(e.Input), perM(e.Output)
		if in == nil || out == nil {
			continue
		}
		p := LLMPrice{Model: name, Provider: e.Provider, InputPerMTok: *in, OutputPerMTok: *out,
			CachedInputPerMTok: perM(e.CacheRead), BatchInputPerMTok: perM(e.BatchInput), BatchOutputPerMTok: perM(e.BatchOutput),
			Source: LiteLLMFallbackSource + " (" + LiteLLMFallbackAsOf + ")"}
		var mi float64
		if json.Unmarshal(e.MaxInputTokens, &mi) == nil {
			p.MaxInputTokens = int64(mi)
		}
		if li, lo := perM(e.InputLong), perM(e.OutputLong); li != nil && lo != nil {
			p.LongContext = &LongContextPrice{InputPerMTok: *li, OutputPerMTok: *lo, CachedInputPerMTok: perM(e.CacheReadLong)}
		}
		prices = append(prices, p)
	}
	return NewLLMPriceTable(prices, LiteLLMFallbackSource, LiteLLMFallbackAsOf), nil
}
