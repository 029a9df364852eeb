package web

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// handleHealth answers 200 when the database does, 503 otherwise.
func (s *Server) handleHealth(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
	defer cancel()
	if err := s.store.Ping(ctx); err != nil {
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "database": "unreachable"})
	}
	return c.JSON(http.StatusOK, map[string]string{"status": "ok", "database": "ok", "version": s.cfg.Version})
}
