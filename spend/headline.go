package spend

import (
	"context"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/budget"
	"github.com/burnrate/burnrate/freshness"
	"github.com/burnrate/burnrate/store"
)

// Headline is the first thing the dashboard shows, whatever the view's
// filters: what the org spent yesterday (the last complete day; bills for
// today are still arriving) against the day before and the daily budgets,
// this month so far, the forecast to the month's end against the monthly
// budgets, and every budget, worst first.
type Headline struct {
	Yesterday time.Time
	// YesterdayNote says whether yesterday's spend is in: with NoData
	// set, no source has delivered any of it yet, and its zero is not a
	// number to show.
	YesterdayNote freshness.DayNote
	// Fresh is how fresh the org's sources are: the month cards and the
	// budgets rest on it.
	Fresh      freshness.Report
	Currencies []HeadlineCurrency // the org's own currency first, the others alphabetical
	// Budgets is every budget, over first, then forecast over, then the
	// rest (see budget.Rank): daily budgets as of Yesterday (a whole day),
	// monthly ones as of today.
	Budgets []budget.Status
	// All is every budget as store.Budgets lists them.
	All []store.Budget
}

// HeadlineCurrency is one currency of a Headline.
type HeadlineCurrency struct {
	Currency string
	// Day is yesterday against the day before (the digest's numbers):
	// only its Currency, Spent and DayBefore are set.
	Day DayCurrency
	// Month is today's month so far and its forecast.
	Month MonthCard
	// DailyBudget and MonthlyBudget are the smallest of this currency's
	// budgets on all spend (no scope) of each period, the amounts Day.Spent
	// and Month.Forecast are measured against; zero when there is none.
	// Each such budget covers all spend, so two are two limits on the same
	// sum, not one limit of their total: the smallest is the one crossed
	// first.
	DailyBudget, MonthlyBudget decimal.Decimal
	// Counts of this currency's budgets (any scope) by period and
	// standing; Stale ones are not over, and rest on data too old or late
	// to say they are on track.
	DailyOver, DailyStale, DailyCount                            int
	MonthlyOver, MonthlyForecastOver, MonthlyStale, MonthlyCount int
}

// BuildHeadline computes org's Headline on rep's today (a day in the org's
// time zone), its forecasts resting on what rep says the sources have
// delivered. It reads daily_spend, and charges for budgets scoped by tags.
func BuildHeadline(ctx context.Context, st *store.Store, org store.Org, rep freshness.Report) (Headline, error) {
	today := rep.Today
	yesterday := budget.AddDays(today, -1)
	h := Headline{Yesterday: yesterday, Fresh: rep, YesterdayNote: rep.Day(freshness.Scope{}, yesterday)}
	// One query, of the org's daily totals, serves yesterday against the
	// day before and the month cards. Its days are those the digest's
	// report of yesterday reads (spend.Day: from AnomalyWindow days before
	// yesterday, or the first of its month's month before if earlier), so
	// that the headline lists the same currencies, and last month's first
	// day to today for the cards.
	monthFrom := time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, -1, 0)
	dayFrom := time.Date(yesterday.Year(), yesterday.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, -1, 0)
	if base := budget.AddDays(yesterday, -AnomalyWindow); base.Before(dayFrom) {
		dayFrom = base
	}
	from := monthFrom
	if dayFrom.Before(from) {
		from = dayFrom
	}
	rows, err := st.SpendByDay(ctx, org.ID, store.SpendFilter{From: from, To: today}, "")
	if err != nil {
		return h, err
	}
	byCur := map[string]*HeadlineCurrency{}
	month := rep.Current(freshness.Scope{})
	cur := func(c string) *HeadlineCurrency {
		if byCur[c] == nil {
			// A currency with no spend this month or last still has a
			// card: nothing so far, against nothing last month.
			byCur[c] = &HeadlineCurrency{Currency: c, Month: monthCard(c, month, nil)}
		}
		return byCur[c]
	}
	dayBefore := budget.AddDays(yesterday, -1)
	for _, r := range rows {
		if r.Day.Before(dayFrom) || r.Day.After(yesterday) {
			continue
		}
		c := cur(r.Currency)
		c.Day.Currency = r.Currency
		switch {
		case r.Day.Equal(yesterday):
			c.Day.Spent = c.Day.Spent.Add(r.Amount)
		case r.Day.Equal(dayBefore):
			c.Day.DayBefore = c.Day.DayBefore.Add(r.Amount)
		}
	}
	for _, m := range MonthCards(rows, month) {
		cur(m.Currency).Month = m
	}

	budgets, err := st.Budgets(ctx, org.ID)
	if err != nil {
		return h, err
	}
	h.All = budgets
	var daily, monthly []store.Budget
	for _, b := range budgets {
		if budget.Period(b.Period) == budget.Daily {
			daily = append(daily, b)
		} else {
			monthly = append(monthly, b)
		}
	}
	// A daily budget is judged on yesterday, a whole day; a monthly one on
	// today.
	dailyStatus, err := BudgetStatuses(ctx, st, org, daily, EndOf(rep, yesterday))
	if err != nil {
		return h, err
	}
	monthlyStatus, err := BudgetStatuses(ctx, st, org, monthly, Current(rep))
	if err != nil {
		return h, err
	}
	for _, s := range dailyStatus {
		c := cur(s.Budget.Currency)
		c.DailyCount++
		switch s.Standing {
		case budget.StatusOver:
			c.DailyOver++
		case budget.StatusStale:
			c.DailyStale++
		}
		if s.Budget.Scope.Empty() {
			c.DailyBudget = tightest(c.DailyBudget, s.Budget.Amount)
		}
	}
	for _, s := range monthlyStatus {
		c := cur(s.Budget.Currency)
		c.MonthlyCount++
		switch s.Standing {
		case budget.StatusOver:
			c.MonthlyOver++
		case budget.StatusWarn:
			c.MonthlyForecastOver++
		case budget.StatusStale:
			c.MonthlyStale++
		}
		if s.Budget.Scope.Empty() {
			c.MonthlyBudget = tightest(c.MonthlyBudget, s.Budget.Amount)
		}
	}
	h.Budgets = append(dailyStatus, monthlyStatus...)
	budget.Rank(h.Budgets)

	for _, c := range byCur {
		h.Currencies = append(h.Currencies, *c)
	}
	slices.SortFunc(h.Currencies, func(a, b HeadlineCurrency) int { return CompareCurrencies(org.Currency, a.Currency, b.Currency) })
	return h, nil
}

// tightest is the smaller of limit and amount, limit being zero while
// there is none yet.
func tightest(limit, amount decimal.Decimal) decimal.Decimal {
	if limit.IsZero() || amount.LessThan(limit) {
		return amount
	}
	return limit
}

// CompareCurrencies orders currency codes with main (the org's own) first
// and the others alphabetically, for every list of currencies shown.
func CompareCurrencies(main, a, b string) int {
	switch {
	case a == b:
		return 0
	case a == main:
		return -1
	case b == main:
		return 1
	case a < b:
		return -1
	}
	return 1
}
