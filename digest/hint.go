package digest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/advisor"
	"github.com/burnrate/burnrate/budget"
	"github.com/burnrate/burnrate/pricing"
	"github.com/burnrate/burnrate/quantity"
	"github.com/burnrate/burnrate/store"
)

// The cheaper-option hint looks at the org's last HintWindow days of LLM
// API usage and is only considered when that usage cost at least
// HintMinimumUSD: below it, self-hosting's fixed cost (a whole GPU around
// the clock) never wins, and a hint would be noise.
const (
	HintWindow     = 30
	HintMinimumUSD = 1000
)

// Hint is one cheaper option, shown only when it clearly applies: the
// self-hosted cost of the org's main API model's volume is at most half
// of what the API costs.
type Hint struct {
	Text string `json:"text"`
	Link string `json:"link"` // a path in the app
	// The figures behind Text, per month, in USD.
	Model        string          `json:"model"`
	APIMonth     decimal.Decimal `json:"api_cost_month_usd"`
	SelfHostCost decimal.Decimal `json:"self_host_cost_month_usd"`
}

// cheaperOption is the hint for org on day, or nil: the break-even model
// (package advisor, at the org's prices) on the last HintWindow days up to
// day of the org's LLM model that cost most in USD, against self-hosting
// the open model of comparable quality from the org's tier table (its
// saved edits over the shipped one; docs/advisor.md). It never guesses: no USD LLM
// usage, a model the price table does not know, a model with no credible
// open substitute, or a margin less than half, and there is no hint.
func cheaperOption(ctx context.Context, st *store.Store, org store.Org, day, now time.Time) (*Hint, error) {
	from, to := budget.AddDays(day, -(HintWindow-1)), budget.AddDays(day, 1)
	usage, err := st.LLMUsageByModel(ctx, org.ID, from, to)
	if err != nil {
		return nil, err
	}
	total := decimal.Zero
	var top *store.LLMUsage
	prices := pricing.DefaultLLMPrices()
	for i, u := range usage {
		usd := u.Billed["USD"]
		total = total.Add(usd)
		if _, ok := prices.Lookup(u.Model); !ok || u.TotalTokens() == 0 {
			continue
		}
		if top == nil || usd.GreaterThan(top.Billed["USD"]) {
			top = &usage[i]
		}
	}
	if top == nil || total.LessThan(decimal.NewFromInt(HintMinimumUSD)) {
		return nil, nil
	}
	loc := org.Location()
	peak, err := st.LLMPeakFactor(ctx, org.ID,
		time.Date(from.Year(), from.Month(), from.Day(), 0, 0, 0, 0, loc), time.Date(to.Year(), to.Month(), to.Day(), 0, 0, 0, 0, loc))
	if err != nil {
		return nil, err
	}
	// The org's own tier table edits win over the shipped table, as on the
	// break-even page.
	saved, err := advisor.OrgSubstitutes(ctx, st, org.ID)
	if err != nil {
		return nil, err
	}
	open, sub, source, ok := pricing.ResolveSubstitute(top.Model, saved)
	if !ok || open == pricing.NoSubstitute {
		return nil, nil
	}
	precision := "bf16"
	if sub.Precision != "" && source == "tier table" {
		precision = string(sub.Precision)
	}
	tier := sub.Tier
	if source != "tier table" {
		tier = "your choice"
	}
	body := advisor.BreakEvenBody{
		Model: top.Model, InputTokens: float64(top.UncachedInputTokens()), OutputTokens: float64(top.OutputTokens),
		CachedTokens: float64(top.CachedTokens), OpenModel: open, Precision: precision, Utilization: 0.7,
		PeakFactor: 2, SeqLen: 4096, PriceSource: advisor.PriceOverrides,
	}
	if peak.Factor >= 1 {
		body.PeakFactor = peak.Factor
	}
	res, _, err := advisor.BreakEven(ctx, st, org.ID, body, now)
	if err != nil {
		// A volume or model the model cannot take is no hint, not a failed digest.
		if ie := (*advisor.InputError)(nil); errors.As(err, &ie) {
			return nil, nil
		}
		return nil, err
	}
	api, self := res.APICostMonthUSD, res.SelfHostCostMonthUSD
	if !api.IsPositive() || self.Mul(decimal.NewFromInt(2)).GreaterThan(api) {
		return nil, nil
	}
	return &Hint{
		Model: top.Model, APIMonth: api, SelfHostCost: self,
		Text: fmt.Sprintf("Your %s volume of the last %d days costs about %s a month on the API; self-hosting %s, "+
			"an open model of comparable quality (%s), on %d× %s would cost about %s.",
			top.Model, HintWindow, quantity.FormatMoney(api, "USD"), res.SelfHost.OpenModel, tier, res.GPUsNeeded, res.SelfHost.GPU, quantity.FormatMoney(self, "USD")),
		Link: "/breakeven",
	}, nil
}
