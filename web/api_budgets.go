package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/budget"
	"github.com/burnrate/burnrate/freshness"
	"github.com/burnrate/burnrate/quantity"
	"github.com/burnrate/burnrate/spend"
	"github.com/burnrate/burnrate/store"
)

// The budgets API: /api/v1/budgets, for scripts with an org API token. It
// validates with the same checkBudget as the budget form.

// apiBudget is a budget as /api/v1/budgets reads and writes it.
type apiBudget struct {
	ID         int64             `json:"id"`
	Name       string            `json:"name"`
	Amount     decimal.Decimal   `json:"amount"`
	Currency   string            `json:"currency"`
	Period     string            `json:"period"`
	Scope      store.BudgetScope `json:"scope"`
	Thresholds []int             `json:"thresholds"`
	// Recipients get the budget's alerts (not the daily digest).
	Recipients []string `json:"recipients"`
	// Status is where the budget stands today, as the budgets page shows
	// it (GET only).
	Status *apiBudgetStatus `json:"status,omitempty"`
}

// apiBudgetStatus is a budget's current period: the same numbers as the
// dashboard, the budgets page, the alerts and the digest (budget.Status).
type apiBudgetStatus struct {
	PeriodStart string          `json:"period_start"`
	PeriodEnd   string          `json:"period_end"`
	Spent       decimal.Decimal `json:"spent"`
	Percent     int             `json:"percent"`
	Remaining   decimal.Decimal `json:"remaining"`
	// Forecast and RunsOutOn are null when the data is too old to
	// forecast from (DataNote says so).
	Forecast  *decimal.Decimal `json:"forecast"`
	RunsOutOn *string          `json:"runs_out_on"`
	// Standing is ok, warn (forecast over), over, or stale (not over, but
	// on data too old or late to say it is on track).
	Standing string `json:"standing"`
	DataNote string `json:"data_note,omitempty"`
}

func apiStatusOf(bs budget.Status) *apiBudgetStatus {
	st := &apiBudgetStatus{PeriodStart: bs.First.Format(time.DateOnly), PeriodEnd: bs.Last.Format(time.DateOnly),
		Spent: bs.Spent, Percent: bs.Percent, Remaining: bs.Remaining, Standing: string(bs.Standing), DataNote: bs.Withheld + bs.Late}
	if bs.ForecastOK {
		f := bs.Forecast
		st.Forecast = &f
	}
	if bs.RunsOutOK {
		d := bs.RunsOut.Format(time.DateOnly)
		st.RunsOutOn = &d
	}
	return st
}

// apiBudgetsWithStatus are bs with where each stands today.
func (s *Server) apiBudgetsWithStatus(c echo.Context, bs []store.Budget) ([]apiBudget, error) {
	ctx, org, st := c.Request().Context(), currentOrg(c), s.db(c)
	rep, err := freshness.Load(ctx, st, *org, s.now())
	if err != nil {
		return nil, err
	}
	statuses, err := spend.BudgetStatuses(ctx, st, *org, bs, spend.Current(rep))
	if err != nil {
		return nil, err
	}
	out := make([]apiBudget, 0, len(bs))
	for i, b := range bs {
		a := apiBudgetOf(b)
		a.Status = apiStatusOf(statuses[i])
		out = append(out, a)
	}
	return out, nil
}

func apiBudgetOf(b store.Budget) apiBudget {
	a := apiBudget{ID: b.ID, Name: b.Name, Amount: b.Amount, Currency: b.Currency, Period: b.Period, Scope: b.Scope,
		Thresholds: b.Thresholds, Recipients: b.Recipients}
	if a.Recipients == nil {
		a.Recipients = []string{}
	}
	return a
}

// readAPIBudget decodes and checks a budget sent as JSON.
func readAPIBudget(c echo.Context) (store.BudgetInput, error) {
	var body struct {
		Name       string            `json:"name"`
		Amount     quantity.Text     `json:"amount"`
		Currency   string            `json:"currency"`
		Period     string            `json:"period"`
		Scope      store.BudgetScope `json:"scope"`
		Thresholds []int             `json:"thresholds"`
		Recipients []string          `json:"recipients"`
	}
	raw, err := readJSON(c)
	if err != nil {
		var he *echo.HTTPError
		if errors.As(err, &he) {
			return store.BudgetInput{}, err
		}
		return store.BudgetInput{}, unprocessable("the body could not be read: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		return store.BudgetInput{}, unprocessable("the body is not a budget as JSON: %v", err)
	}
	if body.Amount == "" {
		return store.BudgetInput{}, unprocessable("amount is required")
	}
	amount, err := quantity.Money.Parse("amount", string(body.Amount))
	if err != nil {
		return store.BudgetInput{}, err // 422 naming the field
	}
	in := store.BudgetInput{Name: body.Name, Amount: amount, Currency: body.Currency, Period: body.Period,
		Scope: body.Scope, Thresholds: body.Thresholds, Recipients: body.Recipients}
	if errs := checkBudget(&in, currentOrg(c)); errs != nil {
		var msgs []string
		for _, k := range slices.Sorted(maps.Keys(errs)) {
			msgs = append(msgs, k+": "+errs[k])
		}
		return in, unprocessable("%s", strings.Join(msgs, " "))
	}
	return in, nil
}

func (s *Server) handleAPIBudgetList(c echo.Context) error {
	bs, err := s.db(c).Budgets(c.Request().Context(), currentOrg(c).ID)
	if err != nil {
		return err
	}
	out, err := s.apiBudgetsWithStatus(c, bs)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"budgets": out})
}

func (s *Server) handleAPIBudgetShow(c echo.Context) error {
	b, err := s.pathBudget(c)
	if err != nil {
		return err
	}
	out, err := s.apiBudgetsWithStatus(c, []store.Budget{b})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out[0])
}

func (s *Server) handleAPIBudgetCreate(c echo.Context) error {
	in, err := readAPIBudget(c)
	if err != nil {
		return err
	}
	var by int64
	if u := currentUser(c); u != nil {
		by = u.ID
	}
	b, err := s.db(c).CreateBudget(c.Request().Context(), currentOrg(c).ID, by, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, apiBudgetOf(b))
}

func (s *Server) handleAPIBudgetUpdate(c echo.Context) error {
	b, err := s.pathBudget(c)
	if err != nil {
		return err
	}
	in, err := readAPIBudget(c)
	if err != nil {
		return err
	}
	b, err = s.db(c).UpdateBudget(c.Request().Context(), currentOrg(c).ID, b.ID, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, apiBudgetOf(b))
}

func (s *Server) handleAPIBudgetDelete(c echo.Context) error {
	b, err := s.pathBudget(c)
	if err != nil {
		return err
	}
	if err := s.db(c).DeleteBudget(c.Request().Context(), currentOrg(c).ID, b.ID); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
