// Package budget is what Burnrate knows about budgets. This file is their
// arithmetic, with no IO: which days a period covers in the org's time
// zone, how a monthly amount spreads over its days, the forecast to the end
// of a period, the day a budget runs out, and which alert thresholds a
// spend has crossed. status.go reads a budget's spend through the store and
// says where it stands; alert.go claims the thresholds crossed and makes
// their alerts, which message.go renders for every channel.
//
// A day is a civil date in the org's time zone, represented as midnight UTC
// of that date (the way Postgres date columns scan), so that adding days
// never meets a daylight-saving change. Instants converts a period back to
// the instants it spans in the org's zone.
package budget

import (
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/quantity"
)

// Period is how often a budget resets.
type Period string

// The periods a budget can have.
const (
	Daily   Period = "daily"
	Monthly Period = "monthly"
)

// Valid reports whether p is a known period.
func (p Period) Valid() bool { return p == Daily || p == Monthly }

// DefaultThresholds are the alert thresholds, in percent, of a budget that
// names none.
var DefaultThresholds = []int{50, 80, 100}

// ForecastWindow is how many complete days the run-rate averages.
const ForecastWindow = 7

// Day is the civil date of t in loc, as midnight UTC.
func Day(t time.Time, loc *time.Location) time.Time {
	t = t.In(loc)
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// AddDays moves a day by n days.
func AddDays(day time.Time, n int) time.Time { return day.AddDate(0, 0, n) }

// DaysBetween is the number of days from a to b (b - a).
func DaysBetween(a, b time.Time) int { return int(b.Sub(a).Hours() / 24) }

// DaysInMonth is the number of days in day's month.
func DaysInMonth(day time.Time) int {
	return time.Date(day.Year(), day.Month()+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// Bounds returns the first and last day (inclusive) of p's period that
// contains day.
func Bounds(p Period, day time.Time) (first, last time.Time) {
	if p == Monthly {
		first = time.Date(day.Year(), day.Month(), 1, 0, 0, 0, 0, time.UTC)
		return first, first.AddDate(0, 1, -1)
	}
	return day, day
}

// Instants returns the instants p's period containing day starts and ends
// (exclusive) in loc: a daily period on a daylight-saving change lasts 23
// or 25 hours.
func Instants(p Period, day time.Time, loc *time.Location) (start, end time.Time) {
	first, last := Bounds(p, day)
	start = time.Date(first.Year(), first.Month(), first.Day(), 0, 0, 0, 0, loc)
	end = time.Date(last.Year(), last.Month(), last.Day()+1, 0, 0, 0, 0, loc)
	return start, end
}

// DailyAmount is the budget for day: a daily budget's amount, or a monthly
// budget's amount spread evenly over its month's days.
func DailyAmount(p Period, amount decimal.Decimal, day time.Time) decimal.Decimal {
	if p == Monthly {
		return amount.Div(decimal.NewFromInt(int64(DaysInMonth(day))))
	}
	return amount
}

// Pace is how much of the budget may be spent from the first of day's
// month to the end of day, spending evenly: a monthly budget's amount × day
// of month / days in month, a daily budget's amount × day of month. It is
// the budgets' line on the dashboard's cumulative chart and on a budget's
// burn-down (PaceLine), and what the digest's chart compares a day with.
func Pace(p Period, amount decimal.Decimal, day time.Time) decimal.Decimal {
	n := decimal.NewFromInt(int64(day.Day()))
	if p == Monthly {
		return amount.Mul(n).Div(decimal.NewFromInt(int64(DaysInMonth(day))))
	}
	return amount.Mul(n)
}

// PaceLine is Pace at the end of each day of month's month, the 1st first.
func PaceLine(p Period, amount decimal.Decimal, month time.Time) []decimal.Decimal {
	first := time.Date(month.Year(), month.Month(), 1, 0, 0, 0, 0, time.UTC)
	out := make([]decimal.Decimal, DaysInMonth(first))
	for i := range out {
		out[i] = Pace(p, amount, AddDays(first, i))
	}
	return out
}

// Basis is what a status or a forecast is computed on: which day's spend
// counts last, from which day on the spend is not complete yet, and what is
// known to be missing. Today and EndOf make the usual ones; package
// freshness makes them from what the org's sources have delivered.
type Basis struct {
	// Day is the last day whose spend counts: today on the dashboard, the
	// day a report is about in the digest. It picks the period.
	Day time.Time
	// Complete is the first day whose spend is not complete yet: the
	// run-rate averages the ForecastWindow days before it, and days from
	// it on count at the run-rate or at what they have spent, whichever is
	// more. Zero means Day (today is never complete); it is at most the
	// day after Day.
	Complete time.Time
	// Withheld, when set, says why the data is too old to forecast from
	// ("No data since Sat 31 Oct"): no forecast, no "runs out on" and no
	// "on track" are given.
	Withheld string
	// Late, when set, names data that is late ("AWS data is late: through
	// Sat 31 Oct"): the forecast is given with it as a caveat, and "on
	// track" is not claimed.
	Late string
}

// Today is the basis of a status on today: today's spend counts, and is
// not complete.
func Today(day time.Time) Basis { return Basis{Day: day, Complete: day} }

// EndOf is the basis of a report of day read the morning after: day's
// spend counts and is complete, later days' do not.
func EndOf(day time.Time) Basis { return Basis{Day: day, Complete: AddDays(day, 1)} }

// complete is b's first incomplete day: Day when unset, at most the day
// after Day.
func (b Basis) complete() time.Time {
	if b.Complete.IsZero() {
		return b.Day
	}
	if next := AddDays(b.Day, 1); b.Complete.After(next) {
		return next
	}
	return b.Complete
}

// Forecast is a period's projected spend.
type Forecast struct {
	First, Last time.Time       // the period's days
	Spent       decimal.Decimal // in the period up to the basis' Day, included
	Rate        decimal.Decimal // run-rate per day
	RateDays    int             // complete days Rate averages
	RateTo      time.Time       // the last of them
	DaysLeft    int             // days of the period not complete yet
	Total       decimal.Decimal // projected spend at the end of the period
	// Cumulative is the spend to the end of each day of the period:
	// actual while complete, projected after.
	Cumulative []decimal.Decimal
	// Actual is how many days of Cumulative, from the first, are actual
	// spend (complete days); the rest are projected.
	Actual int
	// Withheld and Late are the basis' (see Basis): with Withheld, Total
	// and Cumulative's projection are not to be shown.
	Withheld, Late string
}

// OK reports whether the forecast may be shown: its data is recent enough.
func (f Forecast) OK() bool { return f.Withheld == "" }

// Method says how the forecast was made, for a tooltip; the run-rate is
// money in currency.
func (f Forecast) Method(currency string) string {
	switch {
	case f.Withheld != "":
		return f.Withheld + ": there is no recent spend to forecast from."
	case f.DaysLeft == 0:
		return "The period is over: the forecast is what was spent."
	}
	m := fmt.Sprintf("Run-rate: the mean of the %d complete days to %s (%s a day) × %d days left, "+
		"added to the spend so far (a day not complete yet counts at the run-rate or at what it has already spent, whichever is more).",
		f.RateDays, f.RateTo.Format("Mon 2 Jan"), quantity.FormatMoney(f.Rate, currency), f.DaysLeft)
	if f.Late != "" {
		m += " " + f.Late + ": the forecast lacks it."
	}
	return m
}

// ForecastPeriod projects the period of p containing b.Day from the spend
// of each day (missing days spent nothing): daily must hold the
// ForecastWindow days before b's first incomplete day, or from the
// period's first day if earlier, up to b.Day. The run-rate averages the
// ForecastWindow complete days before the first incomplete one; complete
// days count as spent, incomplete days up to b.Day at the run-rate or at
// what they have spent, whichever is more, and the days after b.Day at the
// run-rate. A period whose days are all complete forecasts what was spent.
//
// It is the one forecast: the dashboard's month cards, every budget's
// status (dashboard, budgets pages, API, alerts) and the digest all call
// it, so that one day's forecast reads the same everywhere.
func ForecastPeriod(p Period, b Basis, daily map[time.Time]decimal.Decimal) Forecast {
	first, last := Bounds(p, b.Day)
	complete := b.complete()
	f := Forecast{First: first, Last: last, RateDays: ForecastWindow, RateTo: AddDays(complete, -1), Withheld: b.Withheld, Late: b.Late}
	for d := AddDays(complete, -ForecastWindow); d.Before(complete); d = AddDays(d, 1) {
		f.Rate = f.Rate.Add(daily[d])
	}
	f.Rate = f.Rate.Div(decimal.NewFromInt(ForecastWindow))
	cum, spent := decimal.Zero, decimal.Zero
	for d := first; !d.After(last); d = AddDays(d, 1) {
		switch {
		case d.Before(complete):
			cum = cum.Add(daily[d])
			spent = spent.Add(daily[d])
			f.Actual++
		case !d.After(b.Day):
			spent = spent.Add(daily[d])
			cum = cum.Add(decimal.Max(daily[d], f.Rate))
			f.DaysLeft++
		default:
			cum = cum.Add(f.Rate)
			f.DaysLeft++
		}
		f.Cumulative = append(f.Cumulative, cum)
	}
	f.Spent, f.Total = spent, cum
	if f.DaysLeft == 0 {
		f.Rate = decimal.Zero
	}
	return f
}

// RunsOut is the day the forecast first reaches amount within the period,
// and whether it does. A budget already spent ran out on a past day; a
// withheld forecast runs out on no day to come.
func (f Forecast) RunsOut(amount decimal.Decimal) (time.Time, bool) {
	for i, c := range f.Cumulative {
		if c.GreaterThanOrEqual(amount) {
			if i >= f.Actual && !f.OK() && !f.Spent.GreaterThanOrEqual(amount) {
				return time.Time{}, false
			}
			return AddDays(f.First, i), true
		}
	}
	return time.Time{}, false
}

// Percent is spent as a whole percentage of amount (0 when amount is not
// positive).
func Percent(spent, amount decimal.Decimal) int {
	if !amount.IsPositive() {
		return 0
	}
	return int(spent.Mul(decimal.NewFromInt(100)).Div(amount).Floor().IntPart())
}

// Crossed returns the thresholds (percent of amount) that spent has
// reached, in the order given.
func Crossed(thresholds []int, spent, amount decimal.Decimal) []int {
	var out []int
	for _, t := range thresholds {
		if spent.GreaterThanOrEqual(amount.Mul(decimal.NewFromInt(int64(t))).Div(decimal.NewFromInt(100))) {
			out = append(out, t)
		}
	}
	return out
}

// Standing is how a budget stands, for its colour.
type Standing string

// The standings, from worst to best.
const (
	StatusOver  Standing = "over"  // spent more than the amount
	StatusWarn  Standing = "warn"  // forecast over the amount
	StatusStale Standing = "stale" // not over, but the data is too old or late to say it is on track
	StatusOK    Standing = "ok"    // on track
)

// StatusOf is over when spent exceeds amount, warn when the forecast
// does, ok otherwise.
func StatusOf(spent, forecast, amount decimal.Decimal) Standing {
	switch {
	case spent.GreaterThan(amount):
		return StatusOver
	case forecast.GreaterThan(amount):
		return StatusWarn
	}
	return StatusOK
}

// Standing is how a budget of amount stands on f: over when its spend is,
// stale when f is withheld, warn when f's total is over, and stale rather
// than ok when some of its data is late (on track is not claimed on data
// that is missing).
func (f Forecast) Standing(amount decimal.Decimal) Standing {
	switch {
	case f.Spent.GreaterThan(amount):
		return StatusOver
	case !f.OK():
		return StatusStale
	case f.Total.GreaterThan(amount):
		return StatusWarn
	case f.Late != "":
		return StatusStale
	}
	return StatusOK
}
