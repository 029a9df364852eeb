package web

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/burnrate/burnrate/advisor"
)

// The advisor and break-even API: POST /api/v1/advise and
// /api/v1/breakeven, built by package advisor like the pages and the CLI.

// handleAPIAdvise is POST /api/v1/advise: the `burnrate advise --json`
// result for a JSON body of the CLI's flags.
func (s *Server) handleAPIAdvise(c echo.Context) error {
	var b advisor.AdviseBody
	if err := decodeJSON(c, &b); err != nil {
		return err
	}
	adv, _, err := advisor.Advise(c.Request().Context(), s.db(c), currentOrg(c).ID, b, time.Now())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, adv)
}

// handleAPIBreakEven is POST /api/v1/breakeven: the `burnrate breakeven
// --json` result for a JSON body of the CLI's flags.
func (s *Server) handleAPIBreakEven(c echo.Context) error {
	var b advisor.BreakEvenBody
	if err := decodeJSON(c, &b); err != nil {
		return err
	}
	res, _, err := advisor.BreakEven(c.Request().Context(), s.db(c), currentOrg(c).ID, b, time.Now())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, res)
}
