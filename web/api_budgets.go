package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/quantity"
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
	Recipients []string          `json:"recipients"`
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
	out := make([]apiBudget, 0, len(bs))
	for _, b := range bs {
		out = append(out, apiBudgetOf(b))
	}
	return c.JSON(http.StatusOK, map[string]any{"budgets": out})
}

func (s *Server) handleAPIBudgetShow(c echo.Context) error {
	b, err := s.pathBudget(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, apiBudgetOf(b))
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
