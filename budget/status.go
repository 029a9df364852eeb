package budget

import (
	"cmp"
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
	// ForecastOK is false when the forecast is withheld (Withheld says
	// why): Forecast, RunsOut and "on track" are then not to be shown.
	ForecastOK bool
	Withheld   string
	// Late names data that is late: the forecast lacks it, and the
	// budget is not said to be on track.
	Late        string
	Crossed     []int // thresholds Spent has reached, ascending
	FromCharges bool  // tag scope: summed from charges, not daily_spend
	History     []PeriodSpend
	// Cumulative is the spend to the end of each day of the current
	// period, First to Last: actual for its first Actual days (the
	// complete ones), forecast after (the burn-down chart's line).
	Cumulative []decimal.Decimal
	Actual     int
}

// BurnDay is one day of a budget's burn-down: what may be spent by its end
// at an even pace, and the spend to its end, actual or forecast.
type BurnDay struct {
	Day        time.Time
	Pace       decimal.Decimal
	Cumulative decimal.Decimal
	Actual     bool // Cumulative is actual spend; otherwise forecast
}

// BurnDown is s's current period day by day, for the burn-down chart: the
// even pace, the spend added up while the days are complete, then the
// forecast (none when withheld).
func (s Status) BurnDown() []BurnDay {
	p := Period(s.Budget.Period)
	out := make([]BurnDay, 0, len(s.Cumulative))
	for i, c := range s.Cumulative {
		d := AddDays(s.First, i)
		bd := BurnDay{Day: d, Pace: Pace(p, s.Budget.Amount, d), Cumulative: c, Actual: i < s.Actual}
		if p == Daily {
			bd.Pace = s.Budget.Amount
		}
		if !bd.Actual && !s.ForecastOK {
			break
		}
		out = append(out, bd)
	}
	return out
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

// SpendFrom is the first day whose spend StatusFor needs for b on basis at
// with history past periods: the current period's, the run-rate window's,
// or the oldest history period's.
func SpendFrom(b store.Budget, at Basis, history int) time.Time {
	today := at.Day
	from, _ := Bounds(Period(b.Period), today)
	if w := AddDays(at.complete(), -ForecastWindow); w.Before(from) {
		from = w
	}
	if hs := historyStarts(b, today, history); len(hs) > 0 && hs[0].Before(from) {
		from = hs[0]
	}
	return from
}

// StatusFor computes b's status on basis at (its Day: today, or the day a
// report is of), with history past periods, from its spend per day (from
// SpendFrom to at.Day; missing days spent nothing). The forecast is
// ForecastPeriod's, as every face shows it.
func StatusFor(b store.Budget, at Basis, history int, daily map[time.Time]decimal.Decimal) Status {
	p := Period(b.Period)
	today := at.Day
	first, last := Bounds(p, today)
	fc := ForecastPeriod(p, at, daily)
	s := Status{
		Budget: b, First: first, Last: last, Spent: fc.Spent, Forecast: fc.Total, Method: fc.Method(b.Currency),
		Remaining: b.Amount.Sub(fc.Spent), Percent: Percent(fc.Spent, b.Amount),
		Standing: fc.Standing(b.Amount), DaysLeft: fc.DaysLeft, ForecastOK: fc.OK(), Withheld: fc.Withheld, Late: fc.Late,
		FromCharges: len(b.Scope.Tags) > 0, Today: today, Cumulative: fc.Cumulative, Actual: fc.Actual,
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

// Rank orders statuses worst first, for every list that shows several:
// over budget, then forecast over, then not known to be on track (stale
// data), then on track; within each, the larger
// share of the amount spent first, then by name.
func Rank(ss []Status) {
	rank := map[Standing]int{StatusOver: 0, StatusWarn: 1, StatusStale: 2, StatusOK: 3}
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
