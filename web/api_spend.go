package web

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/freshness"
	"github.com/burnrate/burnrate/quantity"
	"github.com/burnrate/burnrate/spend"
)

// The spend API: GET /api/v1/spend, the same numbers as the dashboard
// (package spend).

// apiSpend is GET /api/v1/spend's body.
type apiSpend struct {
	Basis  string            `json:"basis"` // billed or amortized (?basis=)
	Days   []apiSpendDay     `json:"days"`
	Totals map[string]string `json:"totals"`
	// DataThrough is how far each source of the spend asked for reaches,
	// and whether it is late (docs/data-model.md, "Freshness"): a day
	// after a source's data_through is missing that source, not zero.
	DataThrough []freshness.View `json:"data_through"`
}

type apiSpendDay struct {
	Date     string            `json:"date"`
	Currency string            `json:"currency"`
	Groups   map[string]string `json:"groups"`
}

// handleAPISpend serves daily spend grouped by one dimension, from
// daily_spend: both dates included, days in the org's time zone.
func (s *Server) handleAPISpend(c echo.Context) error {
	q := c.QueryParams()
	if q.Get("from") == "" || q.Get("to") == "" {
		return unprocessable("from and to are required: ?from=YYYY-MM-DD&to=YYYY-MM-DD (both days included)")
	}
	if q.Get("range") != "" && q.Get("range") != rangeCustom {
		return unprocessable("range is not supported here: give from and to")
	}
	org := currentOrg(c)
	today := s.today(org)
	sq, err := parseSpendQuery(q, today, rangeThisMonth)
	if err != nil {
		return err
	}
	if err := s.billing.Cfg().CheckHistory(*org, sq.Filter.From, today); err != nil {
		return err
	}
	ctx := c.Request().Context()
	days, totals, err := spend.Daily(ctx, s.db(c), org.ID, sq.Filter, sq.Group)
	if err != nil {
		return err
	}
	rep, err := freshness.Load(ctx, s.db(c), *org, s.now())
	if err != nil {
		return err
	}
	out := apiSpend{Basis: string(sq.Filter.Cost), Days: make([]apiSpendDay, 0, len(days)), Totals: map[string]string{},
		DataThrough: rep.Views(freshness.ScopeOfFilter(sq.Filter))}
	for _, d := range days {
		day := apiSpendDay{Date: d.Day.Format(time.DateOnly), Currency: d.Currency, Groups: map[string]string{}}
		// Groups are named as every face names them (spend.GroupLabel):
		// "Cloud (not LLM)", "OpenAI — model not billed", "(none)".
		labelled := map[string]decimal.Decimal{}
		for g, v := range d.Groups {
			l := spend.GroupLabel(sq.Group, g)
			labelled[l] = labelled[l].Add(v)
		}
		for l, v := range labelled {
			day.Groups[l] = quantity.FormatExact(v)
		}
		out.Days = append(out.Days, day)
	}
	for cur, v := range totals {
		out.Totals[cur] = quantity.FormatExact(v)
	}
	return c.JSON(http.StatusOK, out)
}
