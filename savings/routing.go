package savings

import (
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/pricing"
	"github.com/burnrate/burnrate/quantity"
	"github.com/burnrate/burnrate/store"
)

// Routes maps a model (as pricing.NormalizeLLMModel folds it) to its
// vendor's smaller model of the same generation: the model a router would
// send the easier requests to. Prices come from the LLM price table; only
// pairs whose smaller model costs less are listed.
var Routes = map[string]string{
	"gpt-5-5":           "gpt-5.4-mini",
	"gpt-5-4":           "gpt-5.4-mini",
	"gpt-5-2":           "gpt-5-mini",
	"gpt-5-1":           "gpt-5-mini",
	"gpt-5":             "gpt-5-mini",
	"gpt-5-mini":        "gpt-5-nano",
	"gpt-4-1":           "gpt-4.1-mini",
	"gpt-4-1-mini":      "gpt-4.1-nano",
	"gpt-4o":            "gpt-4o-mini",
	"o3":                "o4-mini",
	"claude-opus-4-7":   "claude-sonnet-4-6",
	"claude-opus-4-6":   "claude-sonnet-4-6",
	"claude-opus-4-5":   "claude-sonnet-4-5",
	"claude-sonnet-4-6": "claude-haiku-4-5",
	"claude-sonnet-4-5": "claude-haiku-4-5",
	"claude-sonnet-4":   "claude-haiku-4-5",
	"gemini-2-5-pro":    "gemini-2.5-flash",
	"gemini-2-5-flash":  "gemini-2.5-flash-lite",
}

// routing prices moving share of each model's requests to its Routes
// sibling, from the org's own token mix: the moved requests are assumed to
// be like the rest, so they carry share of its tokens and of what it was
// billed (USD only; the price table is in USD).
func routing(usage []store.LLMUsage, prices *pricing.LLMPriceTable, share decimal.Decimal, w window, from, to time.Time) []Finding {
	if !share.IsPositive() {
		return nil
	}
	pct := num(share.Mul(decimal.NewFromInt(100)), 1)
	var out []Finding
	for _, u := range usage {
		billed := u.Billed["USD"]
		if !billed.IsPositive() || u.TotalTokens() == 0 {
			continue
		}
		target, ok := Routes[pricing.NormalizeLLMModel(u.Model)]
		if !ok {
			continue
		}
		tp, ok := prices.Lookup(target)
		if !ok {
			continue
		}
		moved := billed.Mul(share)
		after := tp.Cost(u.UncachedInputTokens(), u.CachedTokens, u.OutputTokens).Mul(share)
		f := Finding{Kind: KindRouting, Currency: "USD", key: "llm:" + u.Model}
		if !w.price(&f, moved.Sub(after), billed) {
			continue
		}
		saves := quantity.FormatMoney(f.Monthly, "USD") + "/month"
		if f.Observed != nil {
			saves = f.Observed.Label("USD")
		}
		f.Title = fmt.Sprintf("Moving %s%% of %s requests to %s saves %s", pct, u.Model, target, saves)
		f.Detail = fmt.Sprintf("From your own mix over these days: %s input tokens (%s of them cache reads) and %s output tokens "+
			"in %s requests, billed %s. The moved requests are assumed to be like the rest, priced at %s's price "+
			"(%s per 1M input, %s per 1M output; %s). Whether %s does those requests well enough is for you to test.",
			num(decimal.NewFromInt(u.InputTokens), 0), num(decimal.NewFromInt(u.CachedTokens), 0),
			num(decimal.NewFromInt(u.OutputTokens), 0), num(decimal.NewFromInt(u.Requests), 0), quantity.FormatMoney(billed, "USD"),
			target, quantity.FormatMoney(tp.InputPerMTok, "USD"), quantity.FormatMoney(tp.OutputPerMTok, "USD"), tp.Source, target)
		f.Evidence = []Evidence{{
			Model: u.Model, From: dateOf(from), To: dateOf(to), Days: int(to.Sub(from).Hours()/24) + 1,
			Requests: u.Requests, Tokens: u.TotalTokens(), Amount: billed.Round(2),
			Hours: decimal.Zero, GPUHours: decimal.Zero,
		}}
		out = append(out, f)
	}
	return out
}
