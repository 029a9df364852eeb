package web

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/burnrate/burnrate/access"
	"github.com/burnrate/burnrate/static"
)

// routes is the one table of every route Burnrate serves.
func (s *Server) routes() {
	e := s.echo
	e.Pre(middleware.RemoveTrailingSlashWithConfig(middleware.TrailingSlashConfig{RedirectCode: http.StatusMovedPermanently}))
	e.Use(
		middleware.Recover(),
		middleware.RequestID(),
		// Outside requestLog, so that error pages are compressed too.
		compress(),
		s.requestLog,
		middleware.SecureWithConfig(middleware.SecureConfig{
			XSSProtection:         "0",
			ContentTypeNosniff:    "nosniff",
			XFrameOptions:         "DENY",
			ReferrerPolicy:        "same-origin",
			ContentSecurityPolicy: "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'",
		}),
		s.strictTransport,
		middleware.BodyLimit(bodyLimit(s.cfg.MaxUploadBytes)),
		s.guardBody,
		s.loadSession,
		noStore,
		// Before CSRF, whose form lookup would also read the query string.
		refuseCSRFInQuery,
		middleware.CSRFWithConfig(middleware.CSRFConfig{
			// Scripts authenticate with bearer tokens, not cookies, so
			// cross-site forgery does not apply to them.
			// The digest's one-click unsubscribe is POSTed by mail
			// clients, with the signed token in its URL as the authority.
			// Stripe's webhook carries its own proof, the signature.
			Skipper: func(c echo.Context) bool {
				return isAPI(c) || c.Request().URL.Path == "/digest/unsubscribe" || isStripeWebhook(c)
			},
			TokenLookup:    "header:X-CSRF-Token,form:_csrf",
			CookieName:     "burnrate_csrf",
			CookiePath:     "/",
			CookieSameSite: http.SameSiteLaxMode,
			CookieHTTPOnly: true,
			CookieSecure:   s.secureCookies(),
			// The token may be in a form, so this check may be what reads
			// the body; a body cut off for arriving too slowly says so.
			ErrorHandler: func(err error, c echo.Context) error {
				if bodyWasTooSlow(c) {
					return s.errBodyTooSlow()
				}
				return err
			},
		}),
		s.checkText,
	)

	// Public.
	e.GET("/healthz", s.handleHealth)
	if s.cfg.MetricsToken != "" {
		e.GET("/metrics", echo.WrapHandler(s.metrics.handler()), s.requireMetricsToken)
	}
	// Assets: gzipped, with ETags, cached for a year under a URL that
	// names their content (static.URL).
	assets := echo.WrapHandler(static.Handler())
	e.GET("/static/*", assets)
	e.HEAD("/static/*", assets)
	e.GET("/", s.handleHome)
	e.GET("/signup", s.handleSignupShow)
	e.POST("/signup", s.handleSignup)
	e.GET("/signup/sent", s.handleSignupSent)
	e.GET("/signup/confirm/:token", s.handleSignupConfirmShow)
	e.POST("/signup/confirm/:token", s.handleSignupConfirm)
	e.GET("/login", s.handleLoginShow)
	e.POST("/login", s.handleLogin)
	e.POST("/logout", s.handleLogout)
	e.GET("/join/:token", s.handleInviteShow)
	e.GET("/digest/unsubscribe", s.handleUnsubscribeShow)
	e.POST("/digest/unsubscribe", s.handleUnsubscribe)
	e.GET("/password/forgot", s.handleForgotShow)
	e.POST("/password/forgot", s.handleForgot)
	e.GET("/password/reset/:token", s.handleResetShow)
	e.POST("/password/reset/:token", s.handleReset)
	e.POST("/billing/webhook", s.handleStripeWebhook)

	// Logged in, any org or none. (Middleware is given per route, not per
	// group: an echo group with middleware also catches unknown paths, which
	// must stay plain 404s.)
	user := []echo.MiddlewareFunc{s.requireUser}
	e.POST("/join/:token", s.handleInviteAccept, user...)
	e.GET("/orgs/new", s.handleOrgNew, user...)
	e.POST("/orgs", s.handleOrgCreate, user...)
	e.POST("/orgs/switch", s.handleOrgSwitch, user...)
	e.GET("/account", s.handleAccountShow, user...)
	e.POST("/account/password", s.handleAccountPassword, user...)
	e.POST("/account/logout-everywhere", s.handleAccountLogoutEverywhere, user...)

	// Logged in, looking at an org: every handler here sees only that org,
	// by org_id in its queries and by row-level security (s.fence). The
	// request is refused or its body read (up to bodyCap bytes) before
	// fence takes the request's database connection, so that a client
	// sending slowly, or sending what will be refused, holds none.
	chain := func(auth []echo.MiddlewareFunc, bodyCap int64, extra []echo.MiddlewareFunc) []echo.MiddlewareFunc {
		mw := append(append([]echo.MiddlewareFunc{}, auth...), extra...)
		return append(mw, s.readBody(bodyCap), s.fence)
	}
	browser := []echo.MiddlewareFunc{s.requireUser, s.requireOrg, s.refuseViewerWrites}
	app := func(extra ...echo.MiddlewareFunc) []echo.MiddlewareFunc { return chain(browser, formBodyBytes, extra) }
	upload := func(bodyCap int64, extra ...echo.MiddlewareFunc) []echo.MiddlewareFunc {
		return chain(browser, bodyCap, extra)
	}
	admin := app(s.requireRole(roleAdmin))
	e.GET("/settings", s.handleSettingsShow, app()...)
	e.POST("/settings", s.handleSettingsUpdate, admin...)
	e.GET("/settings/mail", s.handleMailShow, admin...)
	e.GET("/members", s.handleMembers, app()...)
	e.POST("/members/:user_id/role", s.handleMemberRole, admin...)
	e.POST("/members/:user_id/remove", s.handleMemberRemove, admin...)
	e.POST("/invites", s.handleInviteCreate, admin...)
	e.POST("/invites/:id/delete", s.handleInviteDelete, admin...)
	e.GET("/tokens", s.handleTokens, app()...)
	e.POST("/tokens", s.handleTokenCreate, admin...)
	e.POST("/tokens/:id/revoke", s.handleTokenRevoke, admin...)

	// Billing: the org's plan, Stripe Checkout and the Billing Portal, for
	// owners (docs/billing.md).
	owner := app(s.requireRole(access.Owner))
	e.GET("/settings/billing", s.handleBillingShow, owner...)
	e.POST("/settings/billing/checkout", s.handleBillingCheckout, owner...)
	e.POST("/settings/billing/portal", s.handleBillingPortal, owner...)
	e.GET("/settings/billing/success", s.handleBillingSuccess, owner...)
	e.GET("/settings/billing/cancel", s.handleBillingCancel, owner...)
	e.GET("/settings/billing/invoices", s.handleBillingInvoices, owner...)

	// Where alerts and digests go: everyone sees the channels (masked) and
	// the deliveries; admins change them and send tests.
	e.GET("/settings/notifications", s.handleNotifications, app()...)
	e.POST("/settings/notifications/slack", s.handleSlackSave, admin...)
	e.POST("/settings/notifications/webhook", s.handleWebhookSave, admin...)
	e.POST("/settings/notifications/secret/rotate", s.handleSecretRotate, admin...)
	e.POST("/settings/notifications/email/test", s.handleEmailTest, admin...)
	e.POST("/settings/notifications/channels/:id/test", s.handleChannelTest, admin...)
	e.POST("/settings/notifications/channels/:id/delete", s.handleChannelDelete, admin...)
	e.POST("/settings/notifications/deliveries/:id/retry", s.handleDeliveryRetry, admin...)

	// The daily digest: everyone previews it and (un)subscribes themselves;
	// admins change when and to whom it goes.
	e.GET("/settings/digest", s.handleDigestSettings, app()...)
	e.POST("/settings/digest", s.handleDigestSave, admin...)
	e.POST("/settings/digest/subscription", s.handleDigestSubscription, app()...)
	e.GET("/settings/digest/preview", s.handleDigestPreview, app()...)

	// Imports: uploads, their history, and the generic column mapping.
	e.GET("/imports", s.handleImports, app()...)
	e.POST("/imports", s.handleImportUpload, upload(s.cfg.MaxUploadBytes, s.limitImports)...)
	e.GET("/imports/progress", s.handleImportProgress, app()...)
	e.GET("/imports/mapping", s.handleMappingShow, app()...)
	e.POST("/imports/mapping", s.handleMappingSave, app()...)
	e.GET("/imports/:id", s.handleImportShow, app()...)
	e.POST("/imports/:id/delete", s.handleImportDelete, admin...)

	// Connections: everyone sees them and their last run; admins add,
	// test, pause, sync and delete them.
	e.GET("/connections", s.handleConnections, app()...)
	e.POST("/connections", s.handleConnectionCreate, admin...)
	e.POST("/connections/:id/test", s.handleConnectionTest, admin...)
	e.POST("/connections/:id/sync", s.handleConnectionSync, admin...)
	e.POST("/connections/:id/key", s.handleConnectionKey, admin...)
	e.POST("/connections/:id/pause", s.handleConnectionPause, admin...)
	e.POST("/connections/:id/resume", s.handleConnectionResume, admin...)
	e.POST("/connections/:id/delete", s.handleConnectionDelete, admin...)

	// Dashboard and budgets. The dashboard reads rollups only;
	// ?format=json|csv on /dashboard serve its chart data and tables,
	// /dashboard/daily a currency's daily table when there are several.
	// Budgets are read by every member and changed by admins and owners.
	budgetAdmin := app(s.requireBudgetAdmin)
	e.GET("/dashboard", s.handleDashboard, app()...)
	e.GET("/dashboard/daily", s.handleDailyTable, app()...)
	e.GET("/dashboard/anomalies", s.handleAnomalies, app()...)
	e.GET("/budgets", s.handleBudgets, app()...)
	e.GET("/budgets/new", s.handleBudgetNew, budgetAdmin...)
	e.POST("/budgets", s.handleBudgetCreate, budgetAdmin...)
	e.GET("/budgets/:id", s.handleBudgetShow, app()...)
	e.GET("/budgets/:id/edit", s.handleBudgetEdit, budgetAdmin...)
	e.POST("/budgets/:id", s.handleBudgetUpdate, budgetAdmin...)
	e.POST("/budgets/:id/delete", s.handleBudgetDelete, budgetAdmin...)
	// A token acts with its maker's current role (requireToken): reads
	// are every member's, changes need the role the page's would.
	token := []echo.MiddlewareFunc{s.requireToken}
	apiDash := chain(token, formBodyBytes, nil)
	apiBudgetAdmin := chain(token, formBodyBytes, []echo.MiddlewareFunc{s.requireBudgetAdmin})
	apiAdmin := chain(token, formBodyBytes, []echo.MiddlewareFunc{s.requireRole(roleAdmin)})
	e.GET("/api/v1/spend", s.handleAPISpend, apiDash...)
	e.GET("/api/v1/budgets", s.handleAPIBudgetList, apiDash...)
	e.POST("/api/v1/budgets", s.handleAPIBudgetCreate, apiBudgetAdmin...)
	e.GET("/api/v1/budgets/:id", s.handleAPIBudgetShow, apiDash...)
	e.PUT("/api/v1/budgets/:id", s.handleAPIBudgetUpdate, apiBudgetAdmin...)
	e.DELETE("/api/v1/budgets/:id", s.handleAPIBudgetDelete, apiBudgetAdmin...)

	// JSON API for scripts, authenticated by org API tokens.
	api := chain(token, formBodyBytes, nil)
	e.GET("/api/v1/org", s.handleAPIOrg, api...)
	e.POST("/api/v1/imports", s.handleAPIImportCreate, chain(token, s.cfg.MaxUploadBytes, []echo.MiddlewareFunc{s.refuseViewerWrites, s.limitImports})...)
	e.GET("/api/v1/imports", s.handleAPIImportList, api...)
	e.GET("/api/v1/imports/:id", s.handleAPIImportShow, api...)
	e.DELETE("/api/v1/imports/:id", s.handleAPIImportDelete, apiAdmin...)
	// Connections: as on their page, every member sees them and admins
	// change them.
	e.GET("/api/v1/connections", s.handleAPIConnectionList, api...)
	e.POST("/api/v1/connections", s.handleAPIConnectionCreate, apiAdmin...)
	e.DELETE("/api/v1/connections/:id", s.handleAPIConnectionDelete, apiAdmin...)
	e.POST("/api/v1/connections/:id/sync", s.handleAPIConnectionSync, apiAdmin...)
	e.PUT("/api/v1/connections/:id/key", s.handleAPIConnectionKey, apiAdmin...)

	// --- GPU advisor, break-even and prices ---
	// The advisor and break-even pages are GETs of pure computations: their
	// URLs are shareable and htmx asks the same URLs for result fragments.
	// Everyone in the org looks; members save scenarios; admins set prices.
	e.GET("/advisor", s.handleAdvisor, app()...)
	e.GET("/breakeven", s.handleBreakEven, app()...)
	e.POST("/breakeven/scenarios", s.handleScenarioCreate, app()...)
	e.GET("/breakeven/scenarios/:id", s.handleScenarioShow, app()...)
	e.POST("/breakeven/scenarios/:id/delete", s.handleScenarioDelete, app()...)
	// The org's tier table edits change every break-even of the org and
	// the digest's hint: admins set them, as they set prices.
	e.POST("/breakeven/tiers", s.handleTiersSave, admin...)
	e.POST("/breakeven/tiers/reset", s.handleTiersReset, admin...)
	e.GET("/prices", s.handlePrices, app()...)
	e.POST("/prices/gpu", s.handleGPUOverrideCreate, admin...)
	// The file's own cap is checked by the handler, with a clearer message;
	// this one leaves room for the form around it.
	e.POST("/prices/gpu/upload", s.handleGPUOverrideUpload, upload(2*maxPriceListBytes, s.requireRole(roleAdmin))...)
	e.POST("/prices/gpu/:id", s.handleGPUOverrideUpdate, admin...)
	e.POST("/prices/gpu/:id/delete", s.handleGPUOverrideDelete, admin...)
	e.POST("/prices/llm", s.handleLLMOverrideCreate, admin...)
	e.POST("/prices/llm/:id", s.handleLLMOverrideUpdate, admin...)
	e.POST("/prices/llm/:id/delete", s.handleLLMOverrideDelete, admin...)
	e.POST("/api/v1/advise", s.handleAPIAdvise, api...)
	e.POST("/api/v1/breakeven", s.handleAPIBreakEven, api...)
	e.GET("/api/v1/tiers", s.handleAPITiers, api...)
	e.PUT("/api/v1/tiers", s.handleAPITiersSet, apiAdmin...)
	e.DELETE("/api/v1/tiers", s.handleAPITiersReset, apiAdmin...)
	// --- end GPU advisor, break-even and prices ---

	// Savings found in the org's bills: the what-if is the query string.
	e.GET("/savings", s.handleSavings, app()...)
	e.GET("/api/v1/savings", s.handleAPISavings, api...)
}
