package web

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/burnrate/burnrate/label"
	"github.com/burnrate/burnrate/web/views"
)

func (s *Server) tokensPage(c echo.Context, status int, newSecret, formError string) error {
	tokens, err := s.db(c).APITokens(c.Request().Context(), currentOrg(c).ID)
	if err != nil {
		return err
	}
	return render(c, status, views.TokensPage(s.shell(c, "API tokens", "settings"), tokens, newSecret, formError))
}

func (s *Server) handleTokens(c echo.Context) error { return s.tokensPage(c, http.StatusOK, "", "") }

// handleTokenCreate makes a token and shows its secret this once.
func (s *Server) handleTokenCreate(c echo.Context) error {
	name := label.Clean(c.FormValue("name"))
	if name == "" || len(name) > 100 {
		return s.tokensPage(c, http.StatusUnprocessableEntity, "", "Name the token (at most 100 characters) so you know later what uses it.")
	}
	_, secret, err := s.db(c).CreateAPIToken(c.Request().Context(), currentOrg(c).ID, name, currentUser(c).ID)
	if err != nil {
		return err
	}
	return s.tokensPage(c, http.StatusCreated, secret, "")
}

func (s *Server) handleTokenRevoke(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	if err := s.db(c).RevokeAPIToken(c.Request().Context(), currentOrg(c).ID, id); err != nil {
		return err
	}
	s.flash(c, "Token revoked.")
	return c.Redirect(http.StatusSeeOther, "/tokens")
}
