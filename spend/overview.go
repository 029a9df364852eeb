package spend

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/budget"
	"github.com/burnrate/burnrate/quantity"
	"github.com/burnrate/burnrate/store"
)

// TopMovers is how many day-over-day and week-over-week movers of each
// currency are kept.
const TopMovers = 10

// Overview is what a view of an org's spend shows: the series of its days,
// per currency, with their anomalies and movers; the month-to-date cards;
// and where the money went (drivers, GPU types, models) with the values each
// dimension takes. It is the dashboard's numbers, computed once and laid
// out as a page, JSON or CSV by the caller.
type Overview struct {
	Filter     store.SpendFilter
	Group      store.Dimension
	Today      time.Time
	Currencies []CurrencyOverview // alphabetical
	Cards      []MonthCard        // today's month, with the view's filters
	// Drivers is every driver of the range, largest first, across
	// currencies; DriverTotals sums them per currency.
	Drivers      []store.Driver
	DriverTotals map[string]decimal.Decimal
	GPUs         []store.GPUUsage
	Models       []store.ModelUsage // TopModels per currency, the rest folded
	// Facets lists the values each dimension takes in the range, for
	// filter choices.
	Facets map[store.Dimension][]string
}

// CurrencyOverview is one currency of an Overview.
type CurrencyOverview struct {
	Series    Series    // the range's days, TopGroups groups and the folded rest
	Anomalies []Anomaly // days of the range
	// DoD and WoW compare the view's last complete day (MoversDay:
	// yesterday, or the range's last day when it ends earlier) with the
	// day before, and the 7 days to it with the 7 before; empty, and
	// MoversDay zero, when that day is not in the range.
	DoD, WoW  []Mover
	MoversDay time.Time
}

// Dashboard computes the Overview of orgID's spend under f (its days, its
// filters, its cost basis), grouped by group, on the org's day today. It
// reads daily_spend only.
func Dashboard(ctx context.Context, st *store.Store, orgID int64, f store.SpendFilter, group store.Dimension, today time.Time) (Overview, error) {
	o, _, err := DashboardWith(ctx, st, orgID, f, group, today, nil)
	return o, err
}

// DashboardWith is Dashboard returning also the range's breakdown, as
// st.SpendBreakdown(ctx, orgID, f) returns it: it does not depend on the
// group, so views that differ only in their group (or chart) can share it.
// Given one (known), DashboardWith does not read it again; otherwise it
// reads it beside the series, on a second connection when one is free
// (store.Both): they are a cold view's two largest reads.
func DashboardWith(ctx context.Context, st *store.Store, orgID int64, f store.SpendFilter, group store.Dimension, today time.Time, known *store.Breakdown) (Overview, store.Breakdown, error) {
	var (
		rows, monthRows []store.DaySpend
		breakdown       store.Breakdown
	)
	series := func(st *store.Store) (err error) {
		rows, monthRows, err = dashboardRows(ctx, st, orgID, f, group, today)
		return err
	}
	var err error
	if known != nil {
		breakdown = *known
		err = series(st)
	} else {
		err = st.Both(ctx, series, func(st *store.Store) (err error) {
			breakdown, err = st.SpendBreakdown(ctx, orgID, f)
			return err
		})
	}
	if err != nil {
		return Overview{Filter: f, Group: group, Today: today}, breakdown, err
	}
	return Compose(f, group, today, rows, monthRows, breakdown), breakdown, nil
}

// dashboardRows reads a view's series: the range's days by their top
// groups and, for the month cards, last month's first day to today (the
// same rows when the two spans are near).
func dashboardRows(ctx context.Context, st *store.Store, orgID int64, f store.SpendFilter, group store.Dimension, today time.Time) (rows, monthRows []store.DaySpend, err error) {
	// One query serves the series, the anomalies, the movers and the
	// month-to-date cards: the range's days with AnomalyWindow days before
	// as the baseline of its first days (and of week-over-week movers on
	// short ranges), and last month's first day to today for the cards
	// (the month's run-rate and last month to the same day), when the two
	// spans are near.
	monthStart := time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, time.UTC)
	wide := f
	wide.From = budget.AddDays(f.From, -AnomalyWindow)
	month := f
	month.From, month.To = monthStart.AddDate(0, -1, 0), today
	span := wide
	joined := !month.From.After(budget.AddDays(wide.To, 31)) && !wide.From.After(budget.AddDays(month.To, 31))
	if joined {
		if month.From.Before(span.From) {
			span.From = month.From
		}
		if month.To.After(span.To) {
			span.To = month.To
		}
	}
	// The range's top groups, the rest summed as one per day: this query
	// and all that is built from it stay the same size however many
	// values the group takes.
	if rows, err = st.SpendByDayTop(ctx, orgID, span, group, store.TopGroups{N: TopGroups, From: f.From, To: f.To}); err != nil {
		return nil, nil, err
	}
	if rows, err = withUnmodelled(ctx, st, orgID, span, group, rows); err != nil {
		return nil, nil, err
	}
	monthRows = rows
	if !joined {
		if monthRows, err = st.SpendByDay(ctx, orgID, month, ""); err != nil {
			return nil, nil, err
		}
	}
	return rows, monthRows, nil
}

// Compose lays out the Overview of a view from what DashboardWith reads:
// rows, the view's days by its top groups from AnomalyWindow days before
// f.From (as SpendByDayTop returns them), monthRows, the days from last
// month's first to today (the same rows when they cover them), and the
// range's breakdown. It reads nothing more.
func Compose(f store.SpendFilter, group store.Dimension, today time.Time, rows, monthRows []store.DaySpend, breakdown store.Breakdown) Overview {
	o := Overview{Filter: f, Group: group, Today: today}
	o.Cards = MonthCards(monthRows, budget.Today(today))
	o.Facets = breakdown.Facets

	for _, ws := range Build(rows, budget.AddDays(f.From, -AnomalyWindow), f.To, group) {
		co := CurrencyOverview{Series: ws.Trim(f.From), Anomalies: Anomalies(ws, AnomalyWindow)}
		if len(co.Series.Groups) == 0 {
			// Spend only in the baseline days before the range: the range
			// has nothing of this currency to chart, as for a currency
			// never seen (a range just after the last bill, say).
			continue
		}
		if last := LastCompleteDay(ws, today); last >= AnomalyWindow {
			co.DoD = Movers(ws, last, 1, TopMovers)
			co.WoW = Movers(ws, last, 7, TopMovers)
			co.MoversDay = ws.Days[last]
		}
		o.Currencies = append(o.Currencies, co)
	}

	o.Drivers = breakdown.Drivers
	driverTotals := quantity.Sums[string]{}
	for _, dr := range breakdown.Drivers {
		driverTotals.Add(dr.Currency, dr.Amount)
	}
	o.DriverTotals = driverTotals.Values()
	o.GPUs, o.Models = breakdown.GPUs, FoldModels(breakdown.Models, TopModels)
	return o
}

// DaySpend is one day's spend in one currency by group, every group of it.
type DaySpend struct {
	Day      time.Time
	Currency string
	Groups   map[string]decimal.Decimal
}

// Daily is orgID's spend per day and currency under f, by every value of
// group (none when group is ""), days in order and currencies alphabetical
// within a day; totals are per currency, never summed across currencies.
// It is what GET /api/v1/spend answers.
func Daily(ctx context.Context, st *store.Store, orgID int64, f store.SpendFilter, group store.Dimension) ([]DaySpend, map[string]decimal.Decimal, error) {
	rows, err := st.SpendByDay(ctx, orgID, f, group)
	if err == nil {
		rows, err = withUnmodelled(ctx, st, orgID, f, group, rows)
	}
	if err != nil {
		return nil, nil, err
	}
	slices.SortStableFunc(rows, func(a, b store.DaySpend) int {
		return cmp.Or(a.Day.Compare(b.Day), strings.Compare(a.Currency, b.Currency))
	})
	days := []DaySpend{}
	totals := quantity.Sums[string]{}
	for _, r := range rows {
		if n := len(days); n == 0 || !days[n-1].Day.Equal(r.Day) || days[n-1].Currency != r.Currency {
			days = append(days, DaySpend{Day: r.Day, Currency: r.Currency, Groups: map[string]decimal.Decimal{}})
		}
		g := days[len(days)-1].Groups
		g[r.Group] = add(g[r.Group], r.Amount)
		totals.Add(r.Currency, r.Amount)
	}
	return days, totals.Values(), nil
}
