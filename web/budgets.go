package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/mail"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/burnrate/burnrate/budget"
	"github.com/burnrate/burnrate/freshness"
	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/label"
	"github.com/burnrate/burnrate/quantity"
	"github.com/burnrate/burnrate/spend"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/web/views"
)

// Budget history lengths on the budget's own page.
const (
	historyMonths = 6
	historyDays   = 14
)

// requireBudgetAdmin lets admins and owners change budgets. API tokens may
// too: only admins can mint them (POST /tokens), and the budgets API is
// useless without writes.
func (s *Server) requireBudgetAdmin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !currentRole(c).CanAdmin() {
			return echo.NewHTTPError(http.StatusForbidden, "Only admins and owners can change budgets.")
		}
		return next(c)
	}
}

// budgetStatusView is a budget's status as the pages show it.
func budgetStatusView(bs budget.Status) views.BudgetStatus {
	v := views.BudgetStatus{
		Budget: bs.Budget, Today: bs.Today, First: bs.First, Last: bs.Last, Spent: bs.Spent, Remaining: bs.Remaining,
		Forecast: bs.Forecast, Method: bs.Method, Percent: bs.Percent, Status: string(bs.Standing), DaysLeft: bs.DaysLeft,
		RunsOut: bs.RunsOut, RunsOutOK: bs.RunsOutOK, Crossed: bs.Crossed, FromCharges: bs.FromCharges,
		ForecastOK: bs.ForecastOK, DataNote: bs.Withheld + bs.Late,
	}
	for _, h := range bs.History {
		v.History = append(v.History, views.PeriodSpend{First: h.First, Last: h.Last, Spent: h.Spent, Percent: h.Percent,
			Status: string(h.Standing)})
	}
	return v
}

func (s *Server) handleBudgets(c echo.Context) error {
	ctx := c.Request().Context()
	org := currentOrg(c)
	st := s.db(c)
	bs, err := st.Budgets(ctx, org.ID)
	if err != nil {
		return err
	}
	// Showing a crossing records nothing: the alert job alone claims
	// crossed thresholds (schedule.BudgetAlerts), so that each is alerted
	// once.
	rep, err := freshness.Load(ctx, st, *org, s.now())
	if err != nil {
		return err
	}
	all, err := spend.BudgetStatuses(ctx, st, *org, bs, spend.Current(rep))
	if err != nil {
		return err
	}
	var statuses []views.BudgetStatus
	for _, st := range all {
		statuses = append(statuses, budgetStatusView(st))
	}
	return render(c, http.StatusOK, views.BudgetsPage(s.shell(c, "Budgets", "budgets"), statuses))
}

func (s *Server) handleBudgetShow(c echo.Context) error {
	b, err := s.pathBudget(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	org := currentOrg(c)
	history := historyMonths
	if b.Period == string(budget.Daily) {
		history = historyDays
	}
	rep, err := freshness.Load(ctx, s.db(c), *org, s.now())
	if err != nil {
		return err
	}
	bs, err := spend.BudgetStatus(ctx, s.db(c), *org, b, rep.Current(freshness.ScopeOf(b.Scope)), history)
	if err != nil {
		return err
	}
	status := budgetStatusView(bs)
	// Past periods from the first with any spend: earlier ones are before
	// the org's data, not periods that spent nothing.
	first, _, ok, err := s.db(c).SpendSpan(ctx, org.ID)
	if err != nil {
		return err
	}
	status.History = slices.DeleteFunc(status.History, func(p views.PeriodSpend) bool { return !ok || p.Last.Before(first) })
	if budget.Period(b.Period) == budget.Monthly {
		status.Burn = burnDown(bs)
	}
	alerts, err := s.db(c).BudgetAlerts(ctx, org.ID, b.ID)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.BudgetPage(s.shell(c, b.Name, "budgets"), status, alerts))
}

// pathBudget is the budget named by the :id parameter, in the current org.
func (s *Server) pathBudget(c echo.Context) (store.Budget, error) {
	id, err := pathID(c, "id")
	if err != nil {
		return store.Budget{}, err
	}
	return s.db(c).Budget(c.Request().Context(), currentOrg(c).ID, id)
}

// budgetChoices are the values seen in the last 90 days, offered as
// suggestions in the scope fields.
func (s *Server) budgetChoices(c echo.Context) map[string][]string {
	org := currentOrg(c)
	today := s.today(org)
	b, err := s.db(c).SpendBreakdown(c.Request().Context(), org.ID, store.SpendFilter{From: budget.AddDays(today, -90), To: today})
	out := map[string][]string{}
	if err != nil {
		return out // suggestions only: the form works without them
	}
	for d, vs := range b.Facets {
		out[string(d)] = vs
	}
	return out
}

func (s *Server) budgetFormPage(c echo.Context, status int, f views.BudgetForm) error {
	title := "New budget"
	if f.ID != 0 {
		title = "Edit budget"
	}
	f.Choices = s.budgetChoices(c)
	if err := s.budgetChannelForm(c.Request().Context(), s.db(c), currentOrg(c).ID, &f); err != nil {
		return err
	}
	return render(c, status, views.BudgetFormPage(s.shell(c, title, "budgets"), f))
}

func (s *Server) handleBudgetNew(c echo.Context) error {
	return s.budgetFormPage(c, http.StatusOK, views.BudgetForm{
		Currency: currentOrg(c).Currency, Period: string(budget.Monthly), Thresholds: "50, 80, 100",
	})
}

func (s *Server) handleBudgetEdit(c echo.Context) error {
	b, err := s.pathBudget(c)
	if err != nil {
		return err
	}
	return s.budgetFormPage(c, http.StatusOK, budgetFormOf(b))
}

func budgetFormOf(b store.Budget) views.BudgetForm {
	f := views.BudgetForm{ID: b.ID, Name: b.Name, Amount: b.Amount.String(), Currency: b.Currency, Period: b.Period,
		Provider: b.Scope.Provider, Service: b.Scope.Service, Account: b.Scope.Account, Team: b.Scope.Team,
		Model: b.Scope.Model, Source: b.Scope.Source, Recipients: strings.Join(b.Recipients, ", ")}
	var th []string
	for _, t := range b.Thresholds {
		th = append(th, strconv.Itoa(t))
	}
	f.Thresholds = strings.Join(th, ", ")
	var tags []string
	for _, k := range slices.Sorted(maps.Keys(b.Scope.Tags)) {
		tags = append(tags, k+"="+b.Scope.Tags[k])
	}
	f.Tags = strings.Join(tags, ", ")
	return f
}

// readBudgetForm reads the form's fields, and parses what it can.
func readBudgetForm(c echo.Context) (views.BudgetForm, store.BudgetInput) {
	v := func(k string) string { return strings.TrimSpace(c.FormValue(k)) }
	f := views.BudgetForm{Name: v("name"), Amount: v("amount"), Currency: v("currency"), Period: v("period"),
		Provider: v("provider"), Service: v("service"), Account: v("account"), Team: v("team"), Model: v("model"),
		Source: v("source"), Tags: v("tags"), Thresholds: v("thresholds"), Recipients: v("recipients"),
		Errors: map[string]string{}}
	in := store.BudgetInput{Name: f.Name, Currency: f.Currency, Period: f.Period, Scope: store.BudgetScope{
		Provider: f.Provider, Service: f.Service, Account: f.Account, Team: f.Team, Model: f.Model, Source: f.Source}}
	if f.Amount != "" {
		amount, err := quantity.Money.ParseHuman("amount", f.Amount)
		var qe *quantity.Error
		switch {
		case errors.As(err, &qe) && errors.Is(err, quantity.ErrOutOfRange):
			f.Errors["amount"] = fmt.Sprintf("%q is out of range: %s.", qe.Value, qe.Detail)
		case errors.As(err, &qe) && qe.Detail != "":
			f.Errors["amount"] = fmt.Sprintf("%q is not an amount: %s.", qe.Value, qe.Detail)
		case err != nil:
			f.Errors["amount"] = "Give the amount as a number, such as 5000 or 1250.50."
		}
		in.Amount = amount
	}
	for _, part := range splitList(f.Tags) {
		k, val, ok := strings.Cut(part, "=")
		k, val = strings.TrimSpace(k), strings.TrimSpace(val)
		if !ok || k == "" {
			f.Errors["tags"] = fmt.Sprintf("Write tags as key=value pairs separated by commas (%q has no =).", part)
			break
		}
		if in.Scope.Tags == nil {
			in.Scope.Tags = map[string]string{}
		}
		in.Scope.Tags[k] = val
	}
	for _, part := range splitList(f.Thresholds) {
		n, err := quantity.Count.ParseHuman("thresholds", strings.TrimSuffix(part, "%"))
		if err != nil {
			f.Errors["thresholds"] = fmt.Sprintf("Thresholds are whole percentages such as 50, 80, 100 (%q is not).", part)
			break
		}
		in.Thresholds = append(in.Thresholds, int(n.IntPart()))
	}
	in.Recipients = splitList(f.Recipients)
	return f, in
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' || r == ';' }) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// checkBudget applies defaults to in (the org's currency, monthly, 50/80/100)
// and returns what is wrong with it, by field; nil when nothing is.
func checkBudget(in *store.BudgetInput, org *store.Org) map[string]string {
	errs := map[string]string{}
	in.Name = label.Clean(in.Name)
	if in.Name == "" || len(in.Name) > 100 {
		errs["name"] = "Name the budget (at most 100 characters)."
	}
	if !in.Amount.IsPositive() {
		errs["amount"] = "The amount must be more than zero."
	}
	in.Currency = strings.ToUpper(strings.TrimSpace(in.Currency))
	if in.Currency == "" {
		in.Currency = org.Currency
	}
	if len(in.Currency) != 3 || strings.Trim(in.Currency, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
		errs["currency"] = "Use a three-letter currency code such as USD or EUR."
	}
	if in.Period == "" {
		in.Period = string(budget.Monthly)
	}
	if !budget.Period(in.Period).Valid() {
		errs["period"] = "The period is daily or monthly."
	}
	if len(in.Thresholds) == 0 {
		in.Thresholds = slices.Clone(budget.DefaultThresholds)
	}
	slices.Sort(in.Thresholds)
	in.Thresholds = slices.Compact(in.Thresholds)
	if in.Thresholds[0] < 1 || in.Thresholds[len(in.Thresholds)-1] > 1000 || len(in.Thresholds) > 10 {
		errs["thresholds"] = "Thresholds are between 1 and 1000 percent, at most 10 of them."
	}
	for i, r := range in.Recipients {
		a, err := mail.ParseAddress(r)
		if err != nil {
			errs["recipients"] = fmt.Sprintf("%q is not an email address.", r)
			break
		}
		if label.MixedScriptDomain(a.Address) {
			errs["recipients"] = fmt.Sprintf("%q: %s", a.Address, lookalikeDomain)
			break
		}
		in.Recipients[i] = a.Address
	}
	// Spend rows carry canonical provider names; a scope typed "openai"
	// must match them.
	if in.Scope.Provider != "" {
		in.Scope.Provider = ingest.CanonicalProvider(in.Scope.Provider)
	}
	for k := range in.Scope.Tags {
		if len(k) > 200 || len(in.Scope.Tags[k]) > 500 {
			errs["tags"] = "Tag keys and values are too long."
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}

// saveBudgetForm validates and saves the form for budget id (0: new).
func (s *Server) saveBudgetForm(c echo.Context, id int64) error {
	f, in := readBudgetForm(c)
	f.ID = id
	for k, v := range checkBudget(&in, currentOrg(c)) {
		if f.Errors[k] == "" {
			f.Errors[k] = v
		}
	}
	if err := s.readBudgetChannels(c, &f); err != nil {
		return err
	}
	if len(f.Errors) > 0 {
		return s.budgetFormPage(c, http.StatusUnprocessableEntity, f)
	}
	ctx := c.Request().Context()
	org, user := currentOrg(c).ID, currentUser(c).ID
	var b store.Budget
	err := s.db(c).InTx(ctx, func(tx *store.Store) error {
		var err error
		if id == 0 {
			b, err = tx.CreateBudget(ctx, org, user, in)
		} else {
			b, err = tx.UpdateBudget(ctx, org, id, in)
		}
		if err != nil {
			return err
		}
		return s.saveBudgetChannels(ctx, tx, org, b.ID, user, f)
	})
	if err != nil {
		return err
	}
	s.flash(c, "Budget “"+b.Name+"” saved.")
	return c.Redirect(http.StatusSeeOther, "/budgets/"+strconv.FormatInt(b.ID, 10))
}

func (s *Server) handleBudgetCreate(c echo.Context) error { return s.saveBudgetForm(c, 0) }

func (s *Server) handleBudgetUpdate(c echo.Context) error {
	b, err := s.pathBudget(c)
	if err != nil {
		return err
	}
	return s.saveBudgetForm(c, b.ID)
}

func (s *Server) handleBudgetDelete(c echo.Context) error {
	b, err := s.pathBudget(c)
	if err != nil {
		return err
	}
	if err := s.db(c).DeleteBudget(c.Request().Context(), currentOrg(c).ID, b.ID); err != nil {
		return err
	}
	s.flash(c, "Budget “"+b.Name+"” deleted.")
	return c.Redirect(http.StatusSeeOther, "/budgets")
}

// burnDown is the ECharts option of a monthly budget's burn-down chart
// (budget.Status.BurnDown): the period's spend added up day by day (then
// its forecast, dashed, unless withheld) against the budget's even pace,
// to the cent; app.js formats its tooltips with the chart's data-currency.
func burnDown(bs budget.Status) map[string]any {
	days := bs.BurnDown()
	var labels []string
	var spent, forecast, pace []any
	for i, d := range days {
		labels = append(labels, d.Day.Format("2 Jan"))
		pace = append(pace, json.Number(d.Pace.StringFixed(2)))
		c := json.Number(d.Cumulative.StringFixed(2))
		if d.Actual {
			spent, forecast = append(spent, c), append(forecast, nil)
			if i+1 < len(days) && !days[i+1].Actual {
				forecast[i] = c // the forecast starts where the spend ends
			}
		} else {
			spent, forecast = append(spent, nil), append(forecast, c)
		}
	}
	// A withheld forecast leaves the days after the spend without a line,
	// but the pace runs to the month's end.
	for d := len(days); d < len(bs.Cumulative); d++ {
		day := budget.AddDays(bs.First, d)
		labels = append(labels, day.Format("2 Jan"))
		pace = append(pace, json.Number(budget.Pace(budget.Period(bs.Budget.Period), bs.Budget.Amount, day).StringFixed(2)))
	}
	line := func(name string, data []any, extra map[string]any) map[string]any {
		m := map[string]any{"name": name, "type": "line", "data": data, "symbol": "none"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	return map[string]any{
		"animation": false,
		"tooltip":   map[string]any{"trigger": "axis"},
		"legend":    map[string]any{"top": 0},
		"grid":      map[string]any{"left": 8, "right": 16, "top": 40, "bottom": 8, "containLabel": true},
		"xAxis":     map[string]any{"type": "category", "data": labels},
		"yAxis":     map[string]any{"type": "value", "name": bs.Budget.Currency},
		"series": []any{
			line("Budget, spread over the month", pace, map[string]any{"lineStyle": map[string]any{"type": "dotted", "width": 2}, "color": "#888888"}),
			line("Spent", spent, map[string]any{"areaStyle": map[string]any{"opacity": 0.15}, "color": "#4e79a7"}),
			line("Forecast", forecast, map[string]any{"lineStyle": map[string]any{"type": "dashed"}, "color": "#f28e2b"}),
		},
	}
}
