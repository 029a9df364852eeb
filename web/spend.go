package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/burnrate/burnrate/budget"
	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/store"
)

// Date range presets of the dashboard, by their value in the URL.
const (
	rangeThisMonth = "this-month"
	rangeLastMonth = "last-month"
	range7d        = "7d"
	range30d       = "30d"
	range90d       = "90d"
	rangeCustom    = "custom"
)

var rangePresets = []string{rangeThisMonth, rangeLastMonth, range7d, range30d, range90d, rangeCustom}

// maxRangeDays caps a view's length: two years of days is plenty for a
// chart, and keeps one request from summing an org's whole history daily.
const maxRangeDays = 732

// spendQuery is a dashboard or API view, as held in the URL.
type spendQuery struct {
	Range  string
	Filter store.SpendFilter
	Group  store.Dimension
	Chart  string // daily, cumulative
}

func unprocessable(format string, args ...any) error {
	return echo.NewHTTPError(http.StatusUnprocessableEntity, fmt.Sprintf(format, args...))
}

func parseDay(name, v string) (time.Time, error) {
	d, err := time.Parse(time.DateOnly, v)
	if err != nil {
		return time.Time{}, unprocessable("%s: %q is not a date: use YYYY-MM-DD", name, v)
	}
	return d, nil
}

// parseSpendQuery reads a view from q; today is the org's today. A view
// with no range is the preset def (the API's is this month so far, the
// dashboard's the last 30 days: on the 1st, "this month" is one bar);
// from/to make it custom.
func parseSpendQuery(q url.Values, today time.Time, def string) (spendQuery, error) {
	sq := spendQuery{Range: q.Get("range"), Group: store.Dimension(q.Get("group_by")), Chart: q.Get("chart")}
	if sq.Group == "" {
		sq.Group = store.Dimension(q.Get("group"))
	}
	if sq.Group == "" {
		sq.Group = store.DimProvider
	}
	if !sq.Group.ValidGroup() {
		return sq, unprocessable("group_by: %q is not one of provider, service, account, team, model, source", sq.Group)
	}
	if sq.Chart != "cumulative" {
		sq.Chart = "daily"
	}
	f := &sq.Filter
	from, to := q.Get("from"), q.Get("to")
	if sq.Range == "" {
		sq.Range = def
		if from != "" || to != "" {
			sq.Range = rangeCustom
		}
	}
	monthStart := time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, time.UTC)
	switch sq.Range {
	case rangeThisMonth:
		f.From, f.To = monthStart, today
	case rangeLastMonth:
		f.From, f.To = monthStart.AddDate(0, -1, 0), monthStart.AddDate(0, 0, -1)
	case range7d, range30d, range90d:
		n := map[string]int{range7d: 7, range30d: 30, range90d: 90}[sq.Range]
		f.From, f.To = budget.AddDays(today, 1-n), today
	case rangeCustom:
		if from == "" || to == "" {
			return sq, unprocessable("from and to are both needed (YYYY-MM-DD, both days included)")
		}
		var err error
		if f.From, err = parseDay("from", from); err != nil {
			return sq, err
		}
		if f.To, err = parseDay("to", to); err != nil {
			return sq, err
		}
	default:
		return sq, unprocessable("range: %q is not one of %s", sq.Range, strings.Join(rangePresets, ", "))
	}
	if f.To.Before(f.From) {
		return sq, unprocessable("from (%s) is after to (%s)", f.From.Format(time.DateOnly), f.To.Format(time.DateOnly))
	}
	if budget.DaysBetween(f.From, f.To) >= maxRangeDays {
		return sq, unprocessable("the range is longer than %d days: pick a shorter one", maxRangeDays)
	}
	// A provider however it is spelled ("openai") is the one the rows
	// carry ("OpenAI"): see ingest.CanonicalProvider.
	f.Provider, f.Service, f.Account = q.Get("provider"), q.Get("service"), q.Get("account")
	if f.Provider != "" {
		f.Provider = ingest.CanonicalProvider(f.Provider)
	}
	f.Team, f.Model, f.Source, f.Category = q.Get("team"), q.Get("model"), q.Get("source"), q.Get("category")
	// basis=billed|amortized; cost=effective is the older name of the
	// amortized view, kept for links made before.
	basis := q.Get("basis")
	if basis == "" && q.Get("cost") == "effective" {
		basis = string(store.CostAmortized)
	} else if c := q.Get("cost"); basis == "" && c != "" && c != "billed" {
		return sq, unprocessable("cost: %q is not billed or effective (use basis=billed or basis=amortized)", c)
	}
	switch c := store.CostBasis(basis); c {
	case "", store.CostBilled:
		f.Cost = store.CostBilled
	case store.CostAmortized:
		f.Cost = c
	default:
		return sq, unprocessable("basis: %q is not billed or amortized", c)
	}
	return sq, nil
}

// values is the view as URL parameters, custom ranges with their days.
func (sq spendQuery) values() url.Values {
	v := url.Values{}
	v.Set("range", sq.Range)
	if sq.Range == rangeCustom {
		v.Set("from", sq.Filter.From.Format(time.DateOnly))
		v.Set("to", sq.Filter.To.Format(time.DateOnly))
	}
	v.Set("group", string(sq.Group))
	if sq.Chart != "daily" {
		v.Set("chart", sq.Chart)
	}
	if sq.Filter.Cost == store.CostAmortized {
		v.Set("basis", string(sq.Filter.Cost))
	}
	for d, val := range sq.Filter.Values() {
		if val != "" {
			v.Set(string(d), val)
		}
	}
	return v
}
