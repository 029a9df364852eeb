package budget

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/store"
)

// Status is where a budget stands on a day: its current period's spend,
// forecast and "runs out on", the thresholds that spend has crossed, and
// the spend of the periods before. The budgets pages, the dashboard's
// budget cards, the digest and the alerts all read it.
type Status struct {
	Budget      store.Budget
	Today       time.Time
	First, Last time.Time // the current period
	Spent       decimal.Decimal
	Remaining   decimal.Decimal // Amount - Spent, negative when over
	Forecast    decimal.Decimal // the period's projected spend
	Method      string          // how Forecast was made, for a tooltip
	Percent     int             // Spent as a whole percentage of Amount
	Standing    Standing
	DaysLeft    int       // of the period, today included
	RunsOut     time.Time // the day the forecast reaches Amount, when RunsOutOK
	RunsOutOK   bool
	Crossed     []int // thresholds Spent has reached, ascending
	FromCharges bool  // tag scope: summed from charges, not daily_spend
	History     []PeriodSpend
	// Cumulative is the spend to the end of each day of the current
	// period, First to Last: actual before Today, forecast from Today on
	// (the burn-down chart's line).
	Cumulative []decimal.Decimal
}

// PeriodSpend is a past period of a budget.
type PeriodSpend struct {
	First, Last time.Time
	Spent       decimal.Decimal
	Percent     int
	Standing    Standing
}

// historyStarts are the first days of the history periods before today's,
// oldest first.
func historyStarts(b store.Budget, today time.Time, history int) []time.Time {
	p := Period(b.Period)
	first, _ := Bounds(p, today)
	var starts []time.Time
	for k := history; k >= 1; k-- {
		if p == Monthly {
			starts = append(starts, first.AddDate(0, -k, 0))
		} else {
			starts = append(starts, AddDays(first, -k))
		}
	}
	return starts
}

// SpendFrom is the first day whose spend StatusFor needs for b on today
// with history past periods: the current period's, the run-rate window's,
// or the oldest history period's.
func SpendFrom(b store.Budget, today time.Time, history int) time.Time {
	from, _ := Bounds(Period(b.Period), today)
	if w := AddDays(today, -ForecastWindow); w.Before(from) {
		from = w
	}
	if hs := historyStarts(b, today, history); len(hs) > 0 && hs[0].Before(from) {
		from = hs[0]
	}
	return from
}

// StatusFor computes b's status on today, with history past periods, from
// its spend per day (from SpendFrom to today; missing days spent nothing).
func StatusFor(b store.Budget, today time.Time, history int, daily map[time.Time]decimal.Decimal) Status {
	p := Period(b.Period)
	first, last := Bounds(p, today)
	fc := ForecastPeriod(p, today, today, daily)
	s := Status{
		Budget: b, First: first, Last: last, Spent: fc.Spent, Forecast: fc.Total, Method: fc.Method(b.Currency),
		Remaining: b.Amount.Sub(fc.Spent), Percent: Percent(fc.Spent, b.Amount),
		Standing: StatusOf(fc.Spent, fc.Total, b.Amount), DaysLeft: fc.DaysLeft,
		FromCharges: len(b.Scope.Tags) > 0, Today: today, Cumulative: fc.Cumulative,
	}
	s.RunsOut, s.RunsOutOK = fc.RunsOut(b.Amount)
	s.Crossed = Crossed(b.Thresholds, fc.Spent, b.Amount)
	starts := historyStarts(b, today, history)
	for i := len(starts) - 1; i >= 0; i-- {
		pf, pl := Bounds(p, starts[i])
		ps := PeriodSpend{First: pf, Last: pl}
		for d := pf; !d.After(pl); d = AddDays(d, 1) {
			ps.Spent = ps.Spent.Add(daily[d])
		}
		ps.Percent = Percent(ps.Spent, b.Amount)
		ps.Standing = StatusOf(ps.Spent, ps.Spent, b.Amount)
		s.History = append(s.History, ps)
	}
	return s
}

// Load reads b's spend and computes its status on today (a day in org's
// time zone), with history past periods. A budget scoped by tags is summed
// from charges, the others from daily_spend.
func Load(ctx context.Context, st *store.Store, org store.Org, b store.Budget, today time.Time, history int) (Status, error) {
	daily, err := st.BudgetSpendByDay(ctx, org.ID, b, SpendFrom(b, today, history), today, org.Location())
	if err != nil {
		return Status{}, err
	}
	return StatusFor(b, today, history, daily), nil
}

// Statuses computes the status on today of each of budgets not scoped by
// tags, in order, summing all of them in one pass over daily_spend.
// Budgets scoped by tags are left out: they need charges (Load).
func Statuses(ctx context.Context, st *store.Store, orgID int64, budgets []store.Budget, today time.Time) ([]Status, error) {
	var untagged []store.Budget
	from := today
	for _, b := range budgets {
		if len(b.Scope.Tags) > 0 {
			continue
		}
		untagged = append(untagged, b)
		if f := SpendFrom(b, today, 0); f.Before(from) {
			from = f
		}
	}
	if len(untagged) == 0 {
		return nil, nil
	}
	spend, err := st.BudgetsSpendByDay(ctx, orgID, untagged, from, today)
	if err != nil {
		return nil, err
	}
	out := make([]Status, 0, len(untagged))
	for _, b := range untagged {
		out = append(out, StatusFor(b, today, 0, spend[b.ID]))
	}
	return out, nil
}

// Rank orders statuses worst first, for every list that shows several:
// over budget, then forecast over, then on track; within each, the larger
// share of the amount spent first, then by name.
func Rank(ss []Status) {
	rank := map[Standing]int{StatusOver: 0, StatusWarn: 1, StatusOK: 2}
	slices.SortStableFunc(ss, func(a, b Status) int {
		if c := cmp.Compare(rank[a.Standing], rank[b.Standing]); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Percent, a.Percent); c != 0 {
			return c
		}
		return strings.Compare(a.Budget.Name, b.Budget.Name)
	})
}
