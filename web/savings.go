package web

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/burnrate/burnrate/advisor"
	"github.com/burnrate/burnrate/savings"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/web/views"
)

// The Savings page and GET /api/v1/savings: package savings' findings for
// the org, with the what-if inputs in the query string (share, in percent
// of a model's requests moved to its smaller sibling; commit_discount, the
// 1-year commitment discount in percent), so that the page's URL is the
// what-if and htmx asks the same URL for the results.

// savingsOptions reads the what-if inputs of q; errs name each bad field.
// Empty fields keep the defaults (share 40%, no commitment discount).
func savingsOptions(q url.Values) (savings.Options, url.Values, []string) {
	opts := savings.DefaultOptions()
	form := url.Values{"share": {"40"}, "commit_discount": {""}}
	var errs []string
	if s := strings.TrimSpace(q.Get("share")); s != "" {
		form.Set("share", s)
		d, err := savings.ParsePercent("share", s)
		if err != nil {
			errs = append(errs, err.Error())
		} else {
			opts.RoutingShare = d
		}
	}
	if s := strings.TrimSpace(q.Get("commit_discount")); s != "" {
		form.Set("commit_discount", s)
		d, err := savings.ParsePercent("commit_discount", s)
		if err != nil {
			errs = append(errs, err.Error())
		} else {
			opts.CommitDiscount = d // savings.Find refuses 100%
		}
	}
	return opts, form, errs
}

// savingsInputsChange runs write, which changes what the org's stored
// savings report is computed from (an import removed, a price override),
// and enqueues the report's refresh in the same transaction
// (savings.RefreshArgs): a stored report never outlives its inputs.
func (s *Server) savingsInputsChange(c echo.Context, write func(st *store.Store) error) error {
	ctx, st, orgID := c.Request().Context(), s.db(c), currentOrg(c).ID
	return st.InTx(ctx, func(tx *store.Store) error {
		if err := write(tx); err != nil {
			return err
		}
		return savings.EnqueueRefresh(ctx, s.queue, tx, orgID)
	})
}

// handleSavings shows the Savings page, or for htmx its results.
func (s *Server) handleSavings(c echo.Context) error {
	opts, form, errs := savingsOptions(c.QueryParams())
	v := views.SavingsView{Form: form, Errors: errs}
	status := http.StatusOK
	if len(errs) > 0 {
		status = http.StatusUnprocessableEntity
	} else {
		opts.Now = s.now()
		rep, err := savings.Load(c.Request().Context(), s.db(c), *currentOrg(c), opts)
		var ie *advisor.InputError
		switch {
		case errors.As(err, &ie):
			v.Errors, status = []string{ie.Error()}, http.StatusUnprocessableEntity
		case err != nil:
			return err
		default:
			v.Report = &rep
		}
	}
	if isHTMX(c) {
		return render(c, status, views.SavingsResults(v))
	}
	return render(c, status, views.SavingsPage(s.shell(c, "Savings", "savings"), v))
}

// handleAPISavings is GET /api/v1/savings: the same report as the page,
// amounts as exact decimal strings.
func (s *Server) handleAPISavings(c echo.Context) error {
	opts, _, errs := savingsOptions(c.QueryParams())
	if len(errs) > 0 {
		return unprocessable("%s", strings.Join(errs, "; "))
	}
	opts.Now = s.now()
	rep, err := savings.Load(c.Request().Context(), s.db(c), *currentOrg(c), opts)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, rep)
}
