package web

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// handleAPIOrg tells a script which org its token acts for.
func (s *Server) handleAPIOrg(c echo.Context) error {
	o := currentOrg(c)
	return c.JSON(http.StatusOK, map[string]any{
		"id": o.ID, "slug": o.Slug, "name": o.Name, "time_zone": o.TimeZone, "currency": o.Currency,
	})
}
