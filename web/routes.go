package web

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/burnrate/burnrate/static"
)

// routes is the one table of every route Burnrate serves.
func (s *Server) routes() {
	e := s.echo
	e.Pre(middleware.RemoveTrailingSlashWithConfig(middleware.TrailingSlashConfig{RedirectCode: http.StatusMovedPermanently}))
	e.Use(
		middleware.Recover(),
		middleware.RequestID(),
		s.requestLog,
		middleware.SecureWithConfig(middleware.SecureConfig{
			XSSProtection:         "0",
			ContentTypeNosniff:    "nosniff",
			XFrameOptions:         "DENY",
			ReferrerPolicy:        "same-origin",
			ContentSecurityPolicy: "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self' 'unsafe-inline'; frame-ancestors 'none'",
		}),
		middleware.BodyLimit(bodyLimit(s.cfg.MaxUploadBytes)),
		s.loadSession,
		middleware.CSRFWithConfig(middleware.CSRFConfig{
			// Scripts authenticate with bearer tokens, not cookies, so
			// cross-site forgery does not apply to them.
			Skipper:        func(c echo.Context) bool { return isAPI(c) },
			TokenLookup:    "header:X-CSRF-Token,form:_csrf",
			CookieName:     "burnrate_csrf",
			CookiePath:     "/",
			CookieSameSite: http.SameSiteLaxMode,
			CookieHTTPOnly: true,
			CookieSecure:   s.secureCookies(),
		}),
	)

	// Public.
	e.GET("/healthz", s.handleHealth)
	e.GET("/metrics", echo.WrapHandler(promhttp.HandlerFor(s.metrics.registry, promhttp.HandlerOpts{})))
	e.StaticFS("/static", static.FS)
	e.GET("/", s.handleHome)
	e.GET("/signup", s.handleSignupShow)
	e.POST("/signup", s.handleSignup)
	e.GET("/login", s.handleLoginShow)
	e.POST("/login", s.handleLogin)
	e.POST("/logout", s.handleLogout)
	e.GET("/join/:token", s.handleInviteShow)

	// Logged in, any org or none.
	user := e.Group("", s.requireUser)
	user.POST("/join/:token", s.handleInviteAccept)
	user.GET("/orgs/new", s.handleOrgNew)
	user.POST("/orgs", s.handleOrgCreate)
	user.POST("/orgs/switch", s.handleOrgSwitch)

	// Logged in, looking at an org: every handler here sees only that org,
	// by org_id in its queries and by row-level security (s.fence).
	app := e.Group("", s.requireUser, s.requireOrg, s.fence, s.refuseViewerWrites)
	app.GET("/dashboard", s.handleDashboard)
	app.GET("/settings", s.handleSettingsShow)
	app.POST("/settings", s.handleSettingsUpdate, s.requireRole(roleAdmin))
	app.GET("/members", s.handleMembers)
	app.POST("/members/:user_id/role", s.handleMemberRole, s.requireRole(roleAdmin))
	app.POST("/members/:user_id/remove", s.handleMemberRemove, s.requireRole(roleAdmin))
	app.POST("/invites", s.handleInviteCreate, s.requireRole(roleAdmin))
	app.POST("/invites/:id/delete", s.handleInviteDelete, s.requireRole(roleAdmin))
	app.GET("/tokens", s.handleTokens)
	app.POST("/tokens", s.handleTokenCreate, s.requireRole(roleAdmin))
	app.POST("/tokens/:id/revoke", s.handleTokenRevoke, s.requireRole(roleAdmin))

	// JSON API for scripts, authenticated by org API tokens.
	api := e.Group("/api/v1", s.requireToken, s.fence)
	api.GET("/org", s.handleAPIOrg)
}
