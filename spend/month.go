package spend

import (
	"maps"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/budget"
	"github.com/burnrate/burnrate/quantity"
	"github.com/burnrate/burnrate/store"
)

// MonthCard is one currency's month to date, its forecast to the month's
// end, and last month up to the same day.
type MonthCard struct {
	Currency    string
	MonthToDate decimal.Decimal
	Forecast    decimal.Decimal
	// ForecastOK is false when the forecast is withheld: the data is too
	// old to forecast from (Method says so).
	ForecastOK   bool
	Method       string // how Forecast was made, for a tooltip
	Late         string // data the forecast lacks, when some is late
	LastMonth    decimal.Decimal
	LastMonthDay time.Time // the last day LastMonth counts
}

// MonthCards makes the month-to-date cards of at's Day (today, or the day
// a report is of), one per currency in alphabetical order, from daily
// totals since the first of last month (rows outside that span are
// ignored). The forecast is budget.ForecastPeriod's on at.
func MonthCards(rows []store.DaySpend, at budget.Basis) []MonthCard {
	return monthCards(rows, at)
}

// lastMonthTo is the span of last month that a month-to-date card of day
// compares with: its first day to the same day, or to its last day if
// shorter (31 March → 28 February).
func lastMonthTo(day time.Time) (first, same time.Time) {
	first = time.Date(day.Year(), day.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, -1, 0)
	return first, first.AddDate(0, 0, min(day.Day(), budget.DaysInMonth(first))-1)
}

// monthCards makes the cards of at.Day's month on basis at: the dashboard
// asks about today, the report of a past day about the end of it (the days
// after it left out).
func monthCards(rows []store.DaySpend, at budget.Basis) []MonthCard {
	day := at.Day
	lastStart, _ := lastMonthTo(day)
	// A day's rows are its groups (a dozen) or its total: added as a
	// quantity.Sum per day, without allocating.
	sums := map[string]quantity.Sums[time.Time]{}
	for _, r := range rows {
		if r.Day.Before(lastStart) || r.Day.After(day) {
			continue // the chart's days, fetched in the same query
		}
		if sums[r.Currency] == nil {
			sums[r.Currency] = quantity.Sums[time.Time]{}
		}
		sums[r.Currency].Add(r.Day, r.Amount)
	}
	var cards []MonthCard
	for _, cur := range slices.Sorted(maps.Keys(sums)) {
		cards = append(cards, monthCard(cur, at, sums[cur].Values()))
	}
	return cards
}

// monthCard is currency cur's card of at.Day's month from its spend by
// day (none: nothing this month or last, against nothing).
func monthCard(cur string, at budget.Basis, days map[time.Time]decimal.Decimal) MonthCard {
	lastStart, lastSame := lastMonthTo(at.Day)
	fc := budget.ForecastPeriod(budget.Monthly, at, days)
	card := MonthCard{Currency: cur, MonthToDate: fc.Spent, Forecast: fc.Total, ForecastOK: fc.OK(), Method: fc.Method(cur),
		Late: fc.Late, LastMonthDay: lastSame}
	var last quantity.Sum
	for d := lastStart; !d.After(lastSame); d = budget.AddDays(d, 1) {
		last.Add(days[d])
	}
	card.LastMonth = last.Value()
	return card
}
