// Package spend is the arithmetic every face of Burnrate shows about an
// org's spend, computed once: the daily series per currency and group (the
// largest groups, the rest folded into one "Other"), anomalous days,
// day-over-day and week-over-week movers, the month-to-date cards with
// their forecast, and what one day cost against the day before.
//
// The dashboard, the spend API, the daily digest and budget alerts all call
// it; it reads through *store.Store (daily_spend only) and returns plain
// structs that each caller lays out its own way. Days are civil dates in
// the org's time zone as midnight UTC, as in package budget.
package spend
