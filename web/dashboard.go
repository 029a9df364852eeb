package web

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/budget"
	"github.com/burnrate/burnrate/spend"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/web/views"
)

// Dashboard table sizes.
const (
	topDrivers     = 20
	maxTableGroups = 8 // columns of the no-JavaScript daily table; the rest is "other"
)

// dashTables are the tables the dashboard downloads as CSV (?format=csv&table=…).
var dashTables = []string{"daily", "drivers", "dod", "wow", "gpus", "models", "anomalies"}

// dashboardData is everything the dashboard shows, computed once and then
// rendered as a page, a fragment, JSON or CSV.
type dashboardData struct {
	view   views.Dashboard
	series []spend.Series // the range, per currency
	chart  chartData
}

// handleDashboard is the page a team lead opens every morning. It reads
// rollups only (daily_spend), apart from nothing: budgets scoped by tags
// are left to the budgets page, which reads charges for them.
//
// ?format=json answers the chart data, ?format=csv&table=NAME a table;
// htmx requests (the filter form) get the dashboard without the layout.
func (s *Server) handleDashboard(c echo.Context) error {
	ctx := c.Request().Context()
	org := currentOrg(c)
	st := s.db(c)
	format := c.QueryParam("format")
	has, err := st.HasSpend(ctx, org.ID)
	if err != nil {
		return err
	}
	if !has && format == "" {
		return render(c, http.StatusOK, views.DashboardEmpty(s.shell(c, "Dashboard", "dashboard")))
	}
	today := budget.Day(time.Now(), org.Location())
	sq, err := parseSpendQuery(c.QueryParams(), today)
	if err != nil {
		return err
	}
	if err := s.billing.Cfg().CheckHistory(*org, sq.Filter.From, today); err != nil {
		return err
	}
	version, err := st.SpendVersion(ctx, org.ID)
	if err != nil {
		return err
	}
	key := strconv.FormatInt(org.ID, 10) + "|" + org.TimeZone + "|" + today.Format(time.DateOnly) + "|" + version + "|" + sq.values().Encode()
	d, ok := s.dashes.get(key)
	if !ok {
		if d, err = s.dashboard(ctx, st, org, sq, today); err != nil {
			return err
		}
		s.dashes.put(key, d)
	}
	switch format {
	case "json":
		return c.JSON(http.StatusOK, d.chart)
	case "csv":
		return dashboardCSV(c, d)
	case "", "html":
	default:
		return unprocessable("format: %q is not html, json or csv", format)
	}
	if isHTMX(c) {
		return render(c, http.StatusOK, views.DashboardContent(d.view))
	}
	return render(c, http.StatusOK, views.DashboardPage(s.shell(c, "Dashboard", "dashboard"), d.view))
}

func (s *Server) dashboard(ctx context.Context, st *store.Store, org *store.Org, sq spendQuery, today time.Time) (dashboardData, error) {
	f := sq.Filter
	var d dashboardData
	v := &d.view
	v.Filter = views.DashFilter{
		Range: sq.Range, From: f.From.Format(time.DateOnly), To: f.To.Format(time.DateOnly), Group: string(sq.Group),
		Chart: sq.Chart, Cost: string(f.Cost), Values: map[string]string{},
	}
	for dim, val := range f.Values() {
		v.Filter.Values[string(dim)] = val
	}
	v.Query = sq.values().Encode()
	v.Today = today

	o, err := spend.Dashboard(ctx, st, org.ID, f, sq.Group, today)
	if err != nil {
		return d, err
	}
	for _, c := range o.Cards {
		v.Cards = append(v.Cards, views.MoneyCard{Currency: c.Currency, MonthToDate: c.MonthToDate, Forecast: c.Forecast,
			ForecastMethod: c.Method, LastMonth: c.LastMonth, LastMonthDay: c.LastMonthDay})
	}
	v.Filter.Facets = map[string][]string{}
	for dim, vals := range o.Facets {
		v.Filter.Facets[string(dim)] = vals
	}

	// Budget cards: every budget not scoped by tags, in one pass; those
	// scoped by tags need charges and are left to the budgets page.
	budgets, err := st.Budgets(ctx, org.ID)
	if err != nil {
		return d, err
	}
	statuses, err := budget.Statuses(ctx, st, org.ID, budgets, today)
	if err != nil {
		return d, err
	}
	for _, b := range budgets {
		if len(b.Scope.Tags) > 0 {
			v.TagBudgets = append(v.TagBudgets, b)
		}
	}
	for _, bs := range statuses {
		v.Budgets = append(v.Budgets, budgetStatusView(bs))
	}

	for _, co := range o.Currencies {
		rs := co.Series
		d.series = append(d.series, rs)
		for _, a := range co.Anomalies {
			v.Anomalies = append(v.Anomalies, views.Anomaly{Day: a.Day, Currency: a.Currency, Amount: a.Amount,
				Baseline: a.Baseline, Drivers: moverViews(a.Drivers)})
		}
		v.Daily = append(v.Daily, dailyTable(rs, co.Anomalies))
		if !co.MoversDay.IsZero() {
			v.DoD = append(v.DoD, moverViews(co.DoD)...)
			v.WoW = append(v.WoW, moverViews(co.WoW)...)
			if v.MoversDay.IsZero() || co.MoversDay.After(v.MoversDay) {
				v.MoversDay = co.MoversDay
			}
		}
		d.chart.Charts = append(d.chart.Charts, chartFor(rs, co.Anomalies, budgets, sq))
	}
	d.chart.Group = string(sq.Group)
	d.chart.View = sq.Chart

	for _, dr := range o.Drivers {
		if len(v.Drivers) == topDrivers {
			break
		}
		v.Drivers = append(v.Drivers, views.DriverRow{Driver: dr, Share: spend.Share(dr.Amount, o.DriverTotals[dr.Currency])})
	}
	v.AllDrivers = spend.FoldDrivers(o.Drivers, exportDrivers)
	v.GPUs, v.Models = o.GPUs, o.Models
	v.Chart = d.chart
	return d, nil
}

// exportDrivers is how many drivers of each currency the drivers CSV lists
// (the page shows topDrivers); the rest are summed in one last row.
const exportDrivers = 200

func moverViews(ms []spend.Mover) []views.Mover {
	out := make([]views.Mover, 0, len(ms))
	for _, m := range ms {
		out = append(out, views.Mover{Group: m.Group, Currency: m.Currency, Before: m.Before, After: m.After,
			Change: m.Change(), Percent: m.Percent()})
	}
	return out
}

// dailyTable is a series as the table shown without JavaScript: the
// largest groups as columns, the rest (spend.OtherGroup included) summed as
// "other".
func dailyTable(s spend.Series, anomalies []spend.Anomaly) views.DailyTable {
	t := views.DailyTable{Currency: s.Currency, Total: s.Total()}
	groups := s.Groups
	if n := len(groups); n > maxTableGroups || (n > 0 && groups[n-1] == spend.OtherGroup) {
		groups = groups[:min(n-1, maxTableGroups-1)]
		t.Other = true
	}
	t.Groups = groups
	marked := map[time.Time]spend.Anomaly{}
	for _, a := range anomalies {
		marked[a.Day] = a
	}
	for i, day := range s.Days {
		row := views.DailyRow{Day: day, Total: s.Totals[i]}
		rest := s.Totals[i]
		for _, g := range groups {
			row.Values = append(row.Values, s.ByGroup[g][i])
			rest = rest.Sub(s.ByGroup[g][i])
		}
		if t.Other {
			row.Values = append(row.Values, rest)
		}
		if a, ok := marked[day]; ok {
			row.Anomaly = true
			row.AnomalyNote = a.Note()
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// chartData is the dashboard's chart as JSON: one chart per currency.
// Amounts are exact decimal strings; the browser plots them as numbers but
// shows the strings in tooltips.
type chartData struct {
	Group  string         `json:"group"`
	View   string         `json:"view"` // daily or cumulative
	Charts []currencyPlot `json:"charts"`
}

type currencyPlot struct {
	Currency   string       `json:"currency"`
	Days       []string     `json:"days"`
	Series     []plotSeries `json:"series"`
	Totals     []string     `json:"totals"`
	Cumulative []string     `json:"cumulative"` // month to date at each day (resets on the 1st)
	Budgets    []plotBudget `json:"budgets"`
	Anomalies  []plotMarker `json:"anomalies"`
}

type plotSeries struct {
	Name string   `json:"name"`
	Data []string `json:"data"`
	// OtherGroups is set on the series that sums the groups beyond the
	// view's top ones: how many it sums (its name says so too).
	OtherGroups int `json:"other_groups,omitempty"`
}

type plotBudget struct {
	Name  string   `json:"name"`
	Daily []string `json:"daily"` // the budget per day (monthly pro-rated)
	Pace  []string `json:"pace"`  // the cumulative budget since the 1st
}

type plotMarker struct {
	Day    string `json:"day"`
	Amount string `json:"amount"`
	Note   string `json:"note"`
}

// chartFor lays out one currency's chart: bars per group, the budgets in
// that currency as lines, the anomalies as markers.
func chartFor(s spend.Series, anomalies []spend.Anomaly, budgets []store.Budget, sq spendQuery) currencyPlot {
	p := currencyPlot{Currency: s.Currency, Series: []plotSeries{}, Budgets: []plotBudget{}, Anomalies: []plotMarker{}}
	cum := decimal.Zero
	for i, day := range s.Days {
		p.Days = append(p.Days, day.Format(time.DateOnly))
		p.Totals = append(p.Totals, s.Totals[i].String())
		if day.Day() == 1 {
			cum = decimal.Zero
		}
		cum = cum.Add(s.Totals[i])
		p.Cumulative = append(p.Cumulative, cum.String())
	}
	for _, g := range s.Groups {
		ps := plotSeries{Name: spend.GroupName(s.Name(g))}
		if g == spend.OtherGroup {
			ps.OtherGroups = s.Other
		}
		for _, v := range s.ByGroup[g] {
			ps.Data = append(ps.Data, v.String())
		}
		p.Series = append(p.Series, ps)
	}
	for _, b := range budgets {
		if b.Currency != s.Currency {
			continue
		}
		pb := plotBudget{Name: "Budget: " + b.Name}
		pace := decimal.Zero
		for _, day := range s.Days {
			daily := budget.DailyAmount(budget.Period(b.Period), b.Amount, day)
			if day.Day() == 1 {
				pace = decimal.Zero
			}
			pace = pace.Add(daily)
			pb.Daily = append(pb.Daily, daily.StringFixed(2))
			pb.Pace = append(pb.Pace, pace.StringFixed(2))
		}
		p.Budgets = append(p.Budgets, pb)
	}
	for _, a := range anomalies {
		if a.Day.Before(s.Days[0]) {
			continue
		}
		p.Anomalies = append(p.Anomalies, plotMarker{Day: a.Day.Format(time.DateOnly), Amount: a.Amount.String(), Note: a.Note()})
	}
	return p
}

// dashboardCSV writes one of the dashboard's tables as CSV, amounts exact.
// Names in it come from bills, so it goes through csvTable, which keeps
// them from running as spreadsheet formulas.
func dashboardCSV(c echo.Context, d dashboardData) error {
	table := c.QueryParam("table")
	var t *csvTable
	v := d.view
	money := func(x decimal.Decimal) string { return x.String() }
	switch table {
	case "daily":
		t = newCSVTable(textCol("date"), textCol("currency"), textCol(v.Filter.Group), numberCol("amount"))
		for _, s := range d.series {
			for _, g := range s.Groups {
				for i, day := range s.Days {
					if x := s.ByGroup[g][i]; !x.IsZero() {
						t.add(day.Format(time.DateOnly), s.Currency, s.Name(g), money(x))
					}
				}
			}
		}
	case "drivers":
		t = newCSVTable(textCol("provider"), textCol("service"), textCol("account"), textCol("model"), textCol("currency"), numberCol("amount"))
		for _, dr := range v.AllDrivers {
			t.add(dr.Provider, dr.Service, dr.Account, dr.Model, dr.Currency, money(dr.Amount))
		}
	case "dod", "wow":
		ms := v.DoD
		if table == "wow" {
			ms = v.WoW
		}
		t = newCSVTable(textCol(v.Filter.Group), textCol("currency"), numberCol("before"), numberCol("after"), numberCol("change"),
			numberCol("change_percent"))
		for _, m := range ms {
			t.add(m.Group, m.Currency, money(m.Before), money(m.After), money(m.Change), m.Percent)
		}
	case "gpus":
		t = newCSVTable(textCol("gpu_type"), textCol("currency"), numberCol("gpu_hours"), numberCol("amount"), numberCol("per_gpu_hour"))
		for _, g := range v.GPUs {
			t.add(g.GPUType, g.Currency, g.GPUHours.String(), money(g.Amount), g.PerGPUHour().StringFixed(4))
		}
	case "models":
		t = newCSVTable(textCol("model"), textCol("currency"), numberCol("input_tokens"), numberCol("output_tokens"),
			numberCol("cached_tokens"), numberCol("requests"), numberCol("amount"), numberCol("per_million_tokens"))
		for _, m := range v.Models {
			t.add(m.Model, m.Currency, strconv.FormatInt(m.InputTokens, 10), strconv.FormatInt(m.OutputTokens, 10),
				strconv.FormatInt(m.CachedTokens, 10), strconv.FormatInt(m.Requests, 10), money(m.Amount), m.PerMillionTokens().StringFixed(4))
		}
	case "anomalies":
		t = newCSVTable(textCol("date"), textCol("currency"), numberCol("amount"), numberCol("baseline_median"), textCol("drivers"))
		for _, a := range v.Anomalies {
			drivers := ""
			for i, m := range a.Drivers {
				if i > 0 {
					drivers += "; "
				}
				drivers += spend.GroupName(m.Group) + " +" + money(m.Change)
			}
			t.add(a.Day.Format(time.DateOnly), a.Currency, money(a.Amount), money(a.Baseline), drivers)
		}
	default:
		return unprocessable("table: %q is not one of %v", table, dashTables)
	}
	var buf bytes.Buffer
	if err := t.writeCSV(&buf); err != nil {
		return err
	}
	name := "burnrate-" + table + "-" + v.Filter.From + "-" + v.Filter.To + ".csv"
	c.Response().Header().Set(echo.HeaderContentDisposition, `attachment; filename="`+name+`"`)
	return c.Blob(http.StatusOK, "text/csv; charset=utf-8", buf.Bytes())
}
