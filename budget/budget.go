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

// Pace is how much of the budget may be spent by the end of day, spending
// evenly: a monthly budget's amount × day of month / days in month.
func Pace(p Period, amount decimal.Decimal, day time.Time) decimal.Decimal {
	if p == Monthly {
		return amount.Mul(decimal.NewFromInt(int64(day.Day()))).Div(decimal.NewFromInt(int64(DaysInMonth(day))))
	}
	return amount
}

// Forecast is a period's projected spend.
type Forecast struct {
	First, Last time.Time       // the period's days
	Spent       decimal.Decimal // in the period so far, today included
	Rate        decimal.Decimal // run-rate per day
	RateDays    int             // complete days Rate averages
	DaysLeft    int             // days of the period from today on, today included
	Total       decimal.Decimal // projected spend at the end of the period
	// Cumulative is the spend to the end of each day of the period:
	// actual up to yesterday, projected from today.
	Cumulative []decimal.Decimal
}

// Method says how the forecast was made, for a tooltip; the run-rate is
// money in currency.
func (f Forecast) Method(currency string) string {
	if f.DaysLeft == 0 {
		return "The period is over: the forecast is what was spent."
	}
	return fmt.Sprintf("Run-rate: the mean of the last %d complete days (%s a day) × %d days left including today, "+
		"added to the spend so far (today counts at the run-rate or at what it has already spent, whichever is more).",
		f.RateDays, quantity.FormatMoney(f.Rate, currency), f.DaysLeft)
}

// ForecastPeriod projects p's period containing today. daily holds the
// spend of each day (missing days spent nothing) from ForecastWindow days
// before today, or from the period's first day if earlier, up to today.
// Today is not complete (bills arrive late), so the run-rate averages the
// ForecastWindow days before it; today counts at the run-rate or at what
// it has spent so far, whichever is more. A period that is over (today
// past its last day) forecasts what was spent.
func ForecastPeriod(p Period, day, today time.Time, daily map[time.Time]decimal.Decimal) Forecast {
	first, last := Bounds(p, day)
	f := Forecast{First: first, Last: last, RateDays: ForecastWindow}
	for d := AddDays(today, -ForecastWindow); d.Before(today); d = AddDays(d, 1) {
		f.Rate = f.Rate.Add(daily[d])
	}
	f.Rate = f.Rate.Div(decimal.NewFromInt(ForecastWindow))
	cum := decimal.Zero
	for d := first; !d.After(last); d = AddDays(d, 1) {
		switch {
		case d.Before(today):
			cum = cum.Add(daily[d])
			f.Spent = cum
		case d.Equal(today):
			f.Spent = cum.Add(daily[d])
			cum = cum.Add(decimal.Max(daily[d], f.Rate))
			f.DaysLeft++
		default:
			cum = cum.Add(f.Rate)
			f.DaysLeft++
		}
		f.Cumulative = append(f.Cumulative, cum)
	}
	f.Total = cum
	if f.DaysLeft == 0 {
		f.Rate = decimal.Zero
	}
	return f
}

// RunsOut is the day the forecast first reaches amount within the period,
// and whether it does. A budget already spent ran out on a past day.
func (f Forecast) RunsOut(amount decimal.Decimal) (time.Time, bool) {
	for i, c := range f.Cumulative {
		if c.GreaterThanOrEqual(amount) {
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

// The standings, from best to worst.
const (
	StatusOK   Standing = "ok"   // on track
	StatusWarn Standing = "warn" // forecast over the amount
	StatusOver Standing = "over" // spent more than the amount
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
