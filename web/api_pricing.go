package web

import (
	"net/http"

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
	adv, _, err := advisor.Advise(c.Request().Context(), s.db(c), currentOrg(c).ID, b, s.now())
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
	res, _, err := advisor.BreakEven(c.Request().Context(), s.db(c), currentOrg(c).ID, b, s.now())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, res)
}

// tiersJSON is the org's tier table edits in the API: API model → open
// model, or "none".
type tiersJSON struct {
	Substitutes map[string]string `json:"substitutes"`
}

// handleAPITiers returns the org's saved tier table edits (empty: the
// shipped table).
func (s *Server) handleAPITiers(c echo.Context) error {
	subs, err := advisor.OrgSubstitutes(c.Request().Context(), s.db(c), currentOrg(c).ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, tiersJSON{Substitutes: subs})
}

// handleAPITiersSet replaces the org's tier table edits with the body's;
// {"substitutes": {}} resets them.
func (s *Server) handleAPITiersSet(c echo.Context) error {
	var body tiersJSON
	if err := decodeJSON(c, &body); err != nil {
		return err
	}
	saved, err := advisor.SaveSubstitutes(c.Request().Context(), s.db(c), currentOrg(c).ID, apiUserID(c),
		advisor.FormatSubstitutes(body.Substitutes))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, tiersJSON{Substitutes: saved})
}

// handleAPITiersReset drops the org's tier table edits.
func (s *Server) handleAPITiersReset(c echo.Context) error {
	if err := s.db(c).SetModelSubstitutes(c.Request().Context(), currentOrg(c).ID, apiUserID(c), nil); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, tiersJSON{Substitutes: map[string]string{}})
}

func apiUserID(c echo.Context) int64 {
	if u := currentUser(c); u != nil {
		return u.ID
	}
	return 0
}
