package web

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/burnrate/burnrate/web/views"
)

func (s *Server) handleDashboard(c echo.Context) error {
	return render(c, http.StatusOK, views.DashboardEmpty(s.shell(c, "Dashboard", "dashboard")))
}
