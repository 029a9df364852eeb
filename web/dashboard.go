package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/budget"
	"github.com/burnrate/burnrate/freshness"
	"github.com/burnrate/burnrate/quantity"
	"github.com/burnrate/burnrate/spend"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/web/views"
)

// Dashboard table sizes.
const (
	topDrivers = 20
	// maxTableGroups is how many group columns a daily table has: the
	// chart's top groups and its Other, so both name the same rest.
	maxTableGroups = spend.TopGroups + 1
)

// dashTables are the tables the dashboard downloads as CSV (?format=csv&table=…).
var dashTables = []string{"daily", "drivers", "dod", "wow", "gpus", "models", "anomalies"}

// dashboardData is everything the dashboard shows, computed once and then
// rendered as a page, a fragment, JSON or CSV.
type dashboardData struct {
	view      views.Dashboard
	series    []spend.Series    // the range, per currency
	anomalies [][]spend.Anomaly // the range's, aligned with series
	chart     chartData
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
	user := currentUser(c)
	st := s.db(c)
	format := c.QueryParam("format")
	var userID int64
	if user != nil {
		userID = user.ID
	}
	state, err := st.DashboardState(ctx, org.ID, userID)
	if err != nil {
		return err
	}
	if !state.HasSpend && format == "" {
		return render(c, http.StatusOK, views.DashboardEmpty(s.shell(c, "Dashboard", "dashboard")))
	}
	today := s.today(org)
	q := c.QueryParams()
	if len(q) == 0 && user != nil {
		// /dashboard with no view in the URL: the view this person last
		// looked at here, if it still reads (a saved view is only ever one
		// parseSpendQuery accepted, but a range can have grown too long).
		saved := state.Saved
		if sv, err := url.ParseQuery(saved); err == nil && saved != "" {
			// Nor one the plan's history window no longer reaches.
			if _, err := s.viewQuery(org, sv, today); err == nil {
				q = sv
			}
		}
	}
	sq, err := s.viewQuery(org, q, today)
	if err != nil {
		return err
	}
	if (format == "" || format == "html") && user != nil {
		if err := st.SaveDashboardView(ctx, org.ID, user.ID, sq.values().Encode()); err != nil {
			return err
		}
	}
	rep, err := freshness.Load(ctx, st, *org, s.now())
	if err != nil {
		return err
	}
	d, err := s.dashboardView(ctx, st, org, sq, rep, state.Version)
	if err != nil {
		return err
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
		// The address bar gets the view as it is, not the form's fields
		// as sent: a preset chosen after a custom range leaves no stale
		// from and to behind.
		c.Response().Header().Set("HX-Push-Url", "/dashboard?"+d.view.Query)
		return render(c, http.StatusOK, views.DashboardContent(d.view))
	}
	return render(c, http.StatusOK, views.DashboardPage(s.shell(c, "Dashboard", "dashboard"), d.view))
}

// viewQuery parses the dashboard view q asks of org, on the org's day
// today, within the history its plan keeps.
func (s *Server) viewQuery(org *store.Org, q url.Values, today time.Time) (spendQuery, error) {
	sq, err := parseSpendQuery(q, today, range30d)
	if err != nil {
		return sq, err
	}
	return sq, s.billing.Cfg().CheckHistory(*org, sq.Filter.From, today)
}

// dashboardView is view sq of org's spend at version (store.SpendVersion),
// as fresh as rep says its sources are: from the cache, or computed and
// kept there.
func (s *Server) dashboardView(ctx context.Context, st *store.Store, org *store.Org, sq spendQuery, rep freshness.Report, version string) (dashboardData, error) {
	today := rep.Today
	// A source turning late, or a connection failing, changes what the
	// page says without an import: the stamp says how fresh it all is.
	fresh := sha256.Sum256([]byte(rep.Fingerprint()))
	stamp := org.TimeZone + "|" + org.Currency + "|" + today.Format(time.DateOnly) + "|" + version + "|" + hex.EncodeToString(fresh[:8])
	key := strconv.FormatInt(org.ID, 10) + "|" + stamp + "|" + sq.values().Encode()
	if d, ok := s.dashes.get(key); ok {
		return d, nil
	}
	d, err := s.dashboard(ctx, st, org, sq, rep, stamp)
	if err != nil {
		return d, err
	}
	s.dashes.put(key, d)
	return d, nil
}

// handleAnomalies is every unusual day of a dashboard view (its query), on
// a page of its own: the dashboard lists the few that cost most.
func (s *Server) handleAnomalies(c echo.Context) error {
	d, sq, err := s.subView(c, c.QueryParams())
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.AnomaliesPage(s.shell(c, "Unusual days", "dashboard"), d.view,
		templ.SafeURL("/dashboard?"+sq.values().Encode())))
}

// subView is the dashboard view q names, computed or cached as the
// dashboard has it, for a page that shows part of it.
func (s *Server) subView(c echo.Context, q url.Values) (dashboardData, spendQuery, error) {
	ctx := c.Request().Context()
	org := currentOrg(c)
	sq, err := s.viewQuery(org, q, s.today(org))
	if err != nil {
		return dashboardData{}, sq, err
	}
	version, err := s.db(c).SpendVersion(ctx, org.ID)
	if err != nil {
		return dashboardData{}, sq, err
	}
	rep, err := freshness.Load(ctx, s.db(c), *org, s.now())
	if err != nil {
		return dashboardData{}, sq, err
	}
	d, err := s.dashboardView(ctx, s.db(c), org, sq, rep, version)
	return d, sq, err
}

// handleDailyTable is one currency's daily table of a dashboard view (the
// view's query and currency=): what the view's closed table fetches when
// opened, or, without htmx, a page of its own.
func (s *Server) handleDailyTable(c echo.Context) error {
	q := c.QueryParams()
	cur := strings.ToUpper(q.Get("currency"))
	if cur == "" {
		return unprocessable("currency: say which currency's table, as in currency=USD")
	}
	q.Del("currency")
	d, sq, err := s.subView(c, q)
	if err != nil {
		return err
	}
	for i, rs := range d.series {
		if rs.Currency != cur {
			continue
		}
		t := dailyTable(rs, d.anomalies[i])
		if isHTMX(c) {
			return render(c, http.StatusOK, views.DailyTableBody(t))
		}
		return render(c, http.StatusOK, views.DailyTablePage(s.shell(c, "Daily spend", "dashboard"), t, d.view.Filter,
			templ.SafeURL("/dashboard?"+sq.values().Encode())))
	}
	return echo.NewHTTPError(http.StatusNotFound, "This view has no spend in that currency.")
}

// dashboard computes a view; stamp says which data, day and freshness it
// is computed on (see headlineCache).
func (s *Server) dashboard(ctx context.Context, st *store.Store, org *store.Org, sq spendQuery, rep freshness.Report, stamp string) (dashboardData, error) {
	f := sq.Filter
	today := rep.Today
	head, ok := s.heads.get(org.ID, stamp)
	if !ok {
		h, err := spend.BuildHeadline(ctx, st, *org, rep)
		if err != nil {
			return dashboardData{}, err
		}
		head.view, head.budgets = headlineView(h, today), h.All
		s.heads.put(org.ID, stamp, head)
	}

	// The breakdown is the range's and filters', whatever the group and
	// chart.
	bk := url.Values{"from": {f.From.Format(time.DateOnly)}, "to": {f.To.Format(time.DateOnly)}, "basis": {string(f.Cost)}}
	for dim, val := range f.Values() {
		if val != "" {
			bk.Set(string(dim), val)
		}
	}
	bkey := strconv.FormatInt(org.ID, 10) + "|" + stamp + "|" + bk.Encode()
	var known *store.Breakdown
	if b, ok := s.breaks.get(bkey); ok {
		known = &b
	}
	o, breakdown, err := spend.DashboardWith(ctx, st, org.ID, f, sq.Group, today, known)
	if err != nil {
		return dashboardData{}, err
	}
	if known == nil {
		s.breaks.put(bkey, breakdown)
	}
	d := layoutDashboard(org.Currency, sq, head, o)
	// The chart's JSON says how far each source in the view reaches.
	d.chart.DataThrough = rep.Views(freshness.ScopeOfFilter(f))
	if d.view.Empty != nil {
		// Nothing in the range: say which days the data covers, and offer them.
		first, last, ok, err := st.SpendSpan(ctx, org.ID)
		if err != nil {
			return d, err
		}
		if ok {
			d.view.Empty.First, d.view.Empty.Last = first, last
			if budget.DaysBetween(first, last) >= maxRangeDays {
				first = budget.AddDays(last, 1-maxRangeDays)
			}
			cover := sq
			cover.Range, cover.Filter.From, cover.Filter.To = rangeCustom, first, last
			d.view.Empty.URL, d.view.Empty.ShowFrom = "/dashboard?"+cover.values().Encode(), first
		}
	}
	return d, nil
}

// layoutDashboard lays a view's numbers out as the page and its chart: the
// org's own currency first, the others after (alphabetically). It reads
// nothing; a range without spend gets an Empty without the data's days.
func layoutDashboard(orgCurrency string, sq spendQuery, head headlinePart, o spend.Overview) dashboardData {
	f := sq.Filter
	var d dashboardData
	v := &d.view
	v.Filter = views.DashFilter{
		Range: sq.Range, From: f.From.Format(time.DateOnly), To: f.To.Format(time.DateOnly), Group: string(sq.Group),
		Chart: sq.Chart, Cost: string(f.Cost), Values: map[string]string{},
	}
	for dim, val := range f.Values() {
		v.Filter.Values[string(dim)] = val
		if val == "" {
			continue
		}
		without := sq.values()
		without.Del(string(dim))
		v.Filter.Chips = append(v.Filter.Chips, views.FilterChip{Dimension: string(dim), Value: val,
			RemoveURL: "/dashboard?" + without.Encode()})
	}
	slices.SortFunc(v.Filter.Chips, func(a, b views.FilterChip) int { return strings.Compare(a.Dimension, b.Dimension) })
	v.Query = sq.values().Encode()
	v.Today = o.Today
	v.Headline = head.view

	slices.SortStableFunc(o.Currencies, func(a, b spend.CurrencyOverview) int {
		return spend.CompareCurrencies(orgCurrency, a.Series.Currency, b.Series.Currency)
	})
	v.Filter.Facets = map[string][]string{}
	for dim, vals := range o.Facets {
		v.Filter.Facets[string(dim)] = vals
	}

	spent := false
	var anomalies []spend.Anomaly
	for _, co := range o.Currencies {
		rs := co.Series
		if !rs.Total().IsZero() {
			spent = true
		}
		d.series = append(d.series, rs)
		anomalies = append(anomalies, co.Anomalies...)
		d.anomalies = append(d.anomalies, co.Anomalies)
		if len(o.Currencies) == 1 {
			v.Daily = append(v.Daily, dailyTable(rs, co.Anomalies))
		} else {
			// Closed in the page: laid out when opened (handleDailyTable).
			v.Daily = append(v.Daily, views.DailyTable{Currency: rs.Currency, Total: rs.Total()})
		}
		if !co.MoversDay.IsZero() {
			v.DoD = append(v.DoD, moverViews(co.DoD, sq.Group)...)
			v.WoW = append(v.WoW, moverViews(co.WoW, sq.Group)...)
			if v.MoversDay.IsZero() || co.MoversDay.After(v.MoversDay) {
				v.MoversDay = co.MoversDay
			}
		}
		d.chart.Charts = append(d.chart.Charts, chartFor(rs, co.Anomalies, head.budgets, sq))
	}
	// The few that matter: ranked by what they cost beyond the usual; the
	// page lists TopAnomalies, and links to the rest.
	spend.RankAnomalies(anomalies, orgCurrency)
	for _, a := range anomalies {
		v.Anomalies = append(v.Anomalies, views.Anomaly{Day: a.Day, Currency: a.Currency, Amount: a.Amount,
			Baseline: a.Baseline, Impact: a.Impact(), Drivers: moverViews(a.Drivers, sq.Group)})
	}
	v.TopAnomalies = spend.TopAnomalies
	d.chart.Group = string(sq.Group)
	d.chart.View = sq.Chart
	budgetLines := slices.ContainsFunc(d.chart.Charts, func(p currencyPlot) bool { return len(p.Budgets) > 0 })
	v.ChartTitle = chartTitle(sq, o.Today, budgetLines)
	if !spent {
		v.Empty = &views.EmptyRange{Filtered: len(v.Filter.Chips) > 0}
	}

	for _, dr := range o.Drivers {
		if len(v.Drivers) == topDrivers {
			break
		}
		v.Drivers = append(v.Drivers, views.DriverRow{Driver: dr, Share: spend.ShareText(dr.Amount, o.DriverTotals[dr.Currency])})
	}
	v.AllDrivers = spend.FoldDrivers(o.Drivers, exportDrivers)
	v.GPUs, v.Models = o.GPUs, o.Models
	v.Chart = d.chart
	return d
}

// chartTitle says what the chart shows: the bars by group over the range,
// or the spend of each month added up day by day, against the budgets'
// lines or pace when it draws any.
func chartTitle(sq spendQuery, today time.Time, budgets bool) string {
	f := sq.Filter
	span := f.From.Format("2 Jan") + " – " + f.To.Format("2 Jan 2006")
	if f.From.Year() != f.To.Year() {
		span = f.From.Format("2 Jan 2006") + " – " + f.To.Format("2 Jan 2006")
	}
	against := ""
	if sq.Chart == "cumulative" {
		if budgets {
			against = " against the budgets' pace"
		}
		switch {
		case f.From.Year() != f.To.Year() || f.From.Month() != f.To.Month():
			return "Cumulative spend by month" + against + ", " + span
		case f.To.Year() == today.Year() && f.To.Month() == today.Month():
			return "Cumulative spend this month" + against + ", " + span
		}
		return "Cumulative spend in " + f.From.Format("January 2006") + against
	}
	if budgets {
		against = " against budgets"
	}
	return "Daily spend by " + dimensionName(sq.Group) + against + ", " + span
}

// dimensionName is a dimension in words, for titles.
func dimensionName(d store.Dimension) string {
	switch d {
	case store.DimAccount:
		return "account / project"
	case store.DimCategory:
		return "charge category"
	}
	return string(d)
}

// headlineView lays out the headline for the page.
func headlineView(h spend.Headline, today time.Time) views.Headline {
	v := views.Headline{Yesterday: h.Yesterday, Today: today}
	loc := h.Fresh.Loc
	through := func(ss []freshness.Source, n int) string {
		var parts []string
		for i, s := range ss {
			if i == n {
				parts = append(parts, strconv.Itoa(len(ss)-n)+" more")
				break
			}
			parts = append(parts, s.Name()+" through "+s.LastDay(loc).Format("Mon 2 Jan"))
		}
		return strings.Join(parts, ", ")
	}
	if note := h.YesterdayNote; note.NoData {
		v.NoYesterday = "No data for yesterday yet — newest: " + through(note.Missing, 3)
	} else if len(note.Missing) > 0 {
		v.Partial = "Not all in yet: " + through(note.Missing, 3)
	}
	for _, s := range h.Fresh.Sources {
		v.Sources = append(v.Sources, views.SourceFresh{Name: s.Name(), Source: s.Source, Kind: s.Kind.Name,
			Through: s.Through, LastDay: s.LastDay(loc), Late: s.Late(h.Fresh.At), Lag: s.Lag})
	}
	for _, c := range h.Fresh.Problems() {
		v.Problems = append(v.Problems, views.ConnectionProblem{Name: c.Name, Kind: c.Kind, Health: string(c.Health),
			Error: c.Error, Fix: c.Fix, Since: c.Since, Through: c.Through})
	}
	for _, c := range h.Currencies {
		v.Currencies = append(v.Currencies, views.HeadlineCurrency{
			Currency: c.Currency, Yesterday: c.Day.Spent, DayBefore: c.Day.DayBefore, Change: c.Day.Change(),
			Percent: c.Day.Percent(), DailyBudget: c.DailyBudget, MonthlyBudget: c.MonthlyBudget,
			DailyOver: c.DailyOver, DailyStale: c.DailyStale, DailyCount: c.DailyCount, MonthlyOver: c.MonthlyOver,
			MonthlyWarn: c.MonthlyForecastOver, MonthlyStale: c.MonthlyStale,
			MonthlyCount: c.MonthlyCount, MonthToDate: c.Month.MonthToDate, Forecast: c.Month.Forecast,
			ForecastOK: c.Month.ForecastOK, ForecastLate: c.Month.Late,
			ForecastMethod: c.Month.Method, LastMonth: c.Month.LastMonth, LastMonthDay: c.Month.LastMonthDay,
		})
	}
	for _, b := range h.Budgets {
		v.Budgets = append(v.Budgets, budgetStatusView(b))
	}
	return v
}

// exportDrivers is how many drivers of each currency the drivers CSV lists
// (the page shows topDrivers); the rest are summed in one last row.
const exportDrivers = 200

func moverViews(ms []spend.Mover, dim store.Dimension) []views.Mover {
	out := make([]views.Mover, 0, len(ms))
	for _, m := range ms {
		out = append(out, views.Mover{Group: spend.GroupLabel(dim, m.Group), Currency: m.Currency, Before: m.Before, After: m.After,
			Change: m.Change(), Percent: m.Percent()})
	}
	return out
}

// dailyTable is a series as the table shown without JavaScript: the
// largest groups as columns, the rest (spend.OtherGroup included) summed as
// one "Other (N more …)".
func dailyTable(s spend.Series, anomalies []spend.Anomaly) views.DailyTable {
	t := views.DailyTable{Currency: s.Currency, Total: s.Total()}
	groups := s.Groups
	if n := len(groups); n > maxTableGroups || (n > 0 && groups[n-1] == spend.OtherGroup) {
		groups = groups[:min(n-1, maxTableGroups-1)]
		t.Other = true
		// Named as the chart names its rest: how many groups it sums,
		// the series' own folded rest included.
		folded := 0
		for _, g := range s.Groups[len(groups):] {
			if g == spend.OtherGroup {
				folded += s.Other
			} else {
				folded++
			}
		}
		t.OtherName = spend.OtherName(folded, string(s.Dim))
	}
	for _, g := range groups {
		t.Groups = append(t.Groups, spend.GroupLabel(s.Dim, s.Name(g)))
	}
	marked := map[time.Time]spend.Anomaly{}
	for _, a := range anomalies {
		marked[a.Day] = a
	}
	for i, day := range s.Days {
		row := views.DailyRow{Day: day, Total: s.Totals[i], Values: make([]decimal.Decimal, 0, len(groups)+1)}
		for _, g := range groups {
			row.Values = append(row.Values, s.ByGroup[g][i])
		}
		if t.Other {
			rest := s.Totals[i]
			for _, g := range groups {
				rest = rest.Sub(s.ByGroup[g][i])
			}
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
// Amounts are exact decimal strings (quantity.FormatExact); the browser plots them as numbers but
// shows the strings in tooltips.
type chartData struct {
	Group  string         `json:"group"`
	View   string         `json:"view"` // daily or cumulative
	Charts []currencyPlot `json:"charts"`
	// DataThrough is how far each source of the view's spend reaches
	// (docs/data-model.md, "Freshness").
	DataThrough []freshness.View `json:"data_through"`
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
	// DailyName and PaceName are the two lines' legend labels: the budget's
	// name once, with its real period.
	DailyName string `json:"daily_name"`
	PaceName  string `json:"pace_name"`
}

// budgetLineNames labels a budget's lines on the chart: a daily budget is
// its amount each day; a monthly one is drawn pro-rated per day (daily
// view) or as the pace since the 1st (cumulative view).
func budgetLineNames(name string, period budget.Period) (daily, pace string) {
	if period == budget.Daily {
		return "Budget: " + name + " (daily)", "Budget: " + name + " (daily, cumulative)"
	}
	return "Budget: " + name + " (monthly, per day)", "Budget: " + name + " (monthly, pace)"
}

// budgetMonth is a budget's lines through a month, as text: its amount per
// day, and its pace at the end of each day counted from the first
// (pace[0] is one day's amount, pace[1] two days', …).
type budgetMonth struct {
	daily string
	pace  []string
}

// budgetMonths keeps the budgetMonth of each amount, period and month
// length asked, a few per budget: every view that shows a month draws the
// same lines, and rounding a quotient of decimals for each day of a year
// was a twentieth of a year's view. Cleared when full.
var budgetMonths = struct {
	sync.Mutex
	m map[string]budgetMonth
}{m: map[string]budgetMonth{}}

const maxBudgetMonths = 4096

// budgetMonthLines is the budgetMonth of a budget of amount per period, in
// the month of day: its daily amount and its pace (budget.DailyAmount and
// budget.PaceLine, as the budget's burn-down draws it), to the cent.
func budgetMonthLines(period budget.Period, amount decimal.Decimal, day time.Time) budgetMonth {
	days := budget.DaysInMonth(day)
	key := string(period) + "|" + strconv.Itoa(days) + "|" + amount.String()
	budgetMonths.Lock()
	bm, ok := budgetMonths.m[key]
	budgetMonths.Unlock()
	if ok {
		return bm
	}
	bm = budgetMonth{daily: quantity.FormatFixed(budget.DailyAmount(period, amount, day), 2), pace: make([]string, days)}
	for i, p := range budget.PaceLine(period, amount, day) {
		bm.pace[i] = quantity.FormatFixed(p, 2)
	}
	budgetMonths.Lock()
	if len(budgetMonths.m) >= maxBudgetMonths {
		clear(budgetMonths.m)
	}
	budgetMonths.m[key] = bm
	budgetMonths.Unlock()
	return bm
}

type plotMarker struct {
	Day    string `json:"day"`
	Amount string `json:"amount"`
	Note   string `json:"note"`
}

// chartFor lays out one currency's chart: bars per group, the budgets in
// that currency whose scope is the view's as lines (an all-spend budget on
// the whole org's chart, a team's on the view of that team: a line drawn
// against spend it does not measure would say nothing true), the
// anomalies as markers.
func chartFor(s spend.Series, anomalies []spend.Anomaly, budgets []store.Budget, sq spendQuery) currencyPlot {
	n := len(s.Days)
	p := currencyPlot{Currency: s.Currency, Series: make([]plotSeries, 0, len(s.Groups)), Budgets: []plotBudget{}, Anomalies: []plotMarker{},
		Days: make([]string, 0, n), Totals: make([]string, 0, n), Cumulative: make([]string, 0, n)}
	cum := decimal.Zero
	for i, day := range s.Days {
		p.Days = append(p.Days, day.Format(time.DateOnly))
		p.Totals = append(p.Totals, quantity.FormatExact(s.Totals[i]))
		if day.Day() == 1 {
			cum = decimal.Zero
		}
		cum = cum.Add(s.Totals[i])
		p.Cumulative = append(p.Cumulative, quantity.FormatExact(cum))
	}
	for _, g := range s.Groups {
		ps := plotSeries{Name: spend.GroupLabel(s.Dim, s.Name(g)), Data: make([]string, 0, n)}
		if g == spend.OtherGroup {
			ps.OtherGroups = s.Other
		}
		for _, v := range s.ByGroup[g] {
			ps.Data = append(ps.Data, quantity.FormatExact(v))
		}
		p.Series = append(p.Series, ps)
	}
	for _, b := range budgets {
		if b.Currency != s.Currency || !b.Scope.Is(sq.Filter) {
			continue
		}
		pb := plotBudget{Name: "Budget: " + b.Name}
		pb.DailyName, pb.PaceName = budgetLineNames(b.Name, budget.Period(b.Period))
		// The pace adds up from the 1st, or from the range's first day in
		// its first month, as the cumulative spend does.
		var lines budgetMonth
		first := 1
		pb.Daily, pb.Pace = make([]string, 0, len(s.Days)), make([]string, 0, len(s.Days))
		for i, day := range s.Days {
			if i == 0 || day.Day() == 1 {
				lines, first = budgetMonthLines(budget.Period(b.Period), b.Amount, day), day.Day()
			}
			pb.Daily = append(pb.Daily, lines.daily)
			pb.Pace = append(pb.Pace, lines.pace[day.Day()-first])
		}
		p.Budgets = append(p.Budgets, pb)
	}
	for _, a := range anomalies {
		if a.Day.Before(s.Days[0]) {
			continue
		}
		p.Anomalies = append(p.Anomalies, plotMarker{Day: a.Day.Format(time.DateOnly), Amount: quantity.FormatExact(a.Amount), Note: a.Note()})
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
	money := quantity.FormatExact
	switch table {
	case "daily":
		t = newCSVTable(textCol("date"), textCol("currency"), textCol(v.Filter.Group), numberCol("amount"))
		for _, s := range d.series {
			for _, g := range s.Groups {
				for i, day := range s.Days {
					if x := s.ByGroup[g][i]; !x.IsZero() {
						t.add(day.Format(time.DateOnly), s.Currency, spend.GroupLabel(s.Dim, s.Name(g)), money(x))
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
				drivers += m.Group + " +" + money(m.Change)
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
