package web

import "github.com/labstack/echo/v4"

// AddPanicRoute adds GET /test/panic, a handler that panics behind the same
// middleware as the app's pages (the fence included), so tests can check
// what a panic leaves behind.
func (s *Server) AddPanicRoute() {
	s.echo.GET("/test/panic", func(echo.Context) error { panic("handler bug") },
		s.requireUser, s.requireOrg, s.fence, s.refuseViewerWrites)
}
