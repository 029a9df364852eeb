// Package web is Burnrate's HTTP face: the server-rendered app (templ +
// htmx) and the JSON API, on one echo router. Handlers are methods on
// Server; routes are listed in routes.go; errors become responses in
// errors.go.
package web

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/burnrate/burnrate/account"
	"github.com/burnrate/burnrate/app"
	"github.com/burnrate/burnrate/billing"
	"github.com/burnrate/burnrate/budget"
	"github.com/burnrate/burnrate/connect"
	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/jobs"
	"github.com/burnrate/burnrate/mail"
	"github.com/burnrate/burnrate/notify"
	"github.com/burnrate/burnrate/store"
)

// Config is what the web layer needs from the environment.
type Config struct {
	// TrustedProxies are the addresses of the reverse proxies in front of
	// Burnrate. Only a request arriving from one of them may name its client
	// (X-Forwarded-For) and scheme (X-Forwarded-Proto); with none, every
	// request is taken to come from the address that connected.
	TrustedProxies []netip.Prefix
	// MetricsToken, when set, lets GET /metrics on the app's own listener
	// answer requests that send it as a bearer token. Without it /metrics is
	// not served there (see ListenAndServeMetrics for a private listener).
	MetricsToken string
	// MaxUploadBytes caps an upload's size (a compressed file counts as sent).
	MaxUploadBytes int64
	// Version is shown in /healthz.
	Version string
	// DashboardCacheBytes bounds the memory computed dashboards are kept
	// in, by their estimated size (DefaultDashboardCacheBytes when 0,
	// nothing kept when negative).
	DashboardCacheBytes int64

	// BodyReadGrace and BodyMinRate pace request bodies: a body must
	// arrive within BodyReadGrace plus one second per BodyMinRate bytes
	// received so far, so a large upload may take as long as it keeps
	// moving, and a client trickling bytes is answered 408 and
	// disconnected. Zero means DefaultBodyReadGrace, DefaultBodyMinRate.
	BodyReadGrace time.Duration
	BodyMinRate   int64 // bytes per second
	// MaxImportsPerOrg caps the imports one org runs at once in this
	// process; more are refused with 429. Zero means
	// DefaultMaxImportsPerOrg.
	MaxImportsPerOrg int
	// TempDir is where request bodies too large for memory are spooled;
	// empty means os.TempDir() ($TMPDIR).
	TempDir string
	// Now is the clock every page and API answer asks for "today" (in
	// the org's time zone, through Server.today), so that a test can
	// pin the day. Nil means time.Now.
	Now func() time.Time
}

// Server is the web app. Create it with NewServer; it is an http.Handler.
type Server struct {
	log     *slog.Logger
	store   *store.Store
	cfg     Config
	baseURL string // where users reach Burnrate (app.App.BaseURL)
	// The parts of the App the handlers use, as the App built them.
	importer    *ingest.Importer
	notifier    *notify.Notifier
	mailer      *account.Mailer
	outbox      *mail.Outbox
	queue       *jobs.Queue
	connections *connect.Service
	billing     *billing.Service

	echo    *echo.Echo
	metrics *metrics
	dashes  *dashboardCache // computed dashboards (dashboard.go)
	heads   *headlineCache  // their headlines, shared by an org's views
	breaks  *breakdownCache // their breakdowns, shared by views of one range
	imports *importSlots    // imports running per org (body.go)
}

// NewServer wires the routes and middleware over a's parts (package app
// builds them, once); it builds none of its own. cfg's zero values are the
// defaults named on its fields.
func NewServer(log *slog.Logger, a *app.App, cfg Config) *Server {
	if cfg.MaxUploadBytes == 0 {
		cfg.MaxUploadBytes = 512 << 20
	}
	if cfg.DashboardCacheBytes == 0 {
		cfg.DashboardCacheBytes = DefaultDashboardCacheBytes
	}
	if cfg.BodyReadGrace <= 0 {
		cfg.BodyReadGrace = DefaultBodyReadGrace
	}
	if cfg.BodyMinRate <= 0 {
		cfg.BodyMinRate = DefaultBodyMinRate
	}
	if cfg.MaxImportsPerOrg <= 0 {
		cfg.MaxImportsPerOrg = DefaultMaxImportsPerOrg
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Server{log: log, store: a.Store, cfg: cfg, baseURL: a.BaseURL,
		importer: a.Importer, notifier: a.Notifier, mailer: a.Mailer, outbox: a.Outbox, queue: a.Queue,
		connections: a.Connections, billing: a.Billing,
		echo: echo.New(), dashes: newDashboardCache(cfg.DashboardCacheBytes),
		heads: newHeadlineCache(), breaks: newBreakdownCache()}
	s.echo.HideBanner = true
	s.echo.HidePort = true
	s.echo.HTTPErrorHandler = s.handleError
	s.echo.IPExtractor, s.echo.SchemeExtractor = forwardedTrust(cfg.TrustedProxies)
	s.metrics = newMetrics()
	s.imports = newImportSlots(cfg.MaxImportsPerOrg)
	s.routes()
	return s
}

// forwardedTrust decides whose forwarding headers are believed. A client
// can send any X-Forwarded-For it likes, so the header is read only from the
// configured proxies, walking it from the right to the first address that is
// not one of them. echo would otherwise also believe every loopback,
// link-local and private address; those are trusted here only when listed,
// since a private network is often shared with machines that are not proxies.
func forwardedTrust(proxies []netip.Prefix) (echo.IPExtractor, echo.SchemeExtractor) {
	if len(proxies) == 0 {
		return echo.ExtractIPDirect(), echo.ExtractSchemeDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, p := range proxies {
		p = p.Masked()
		opts = append(opts, echo.TrustIPRange(&net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}))
	}
	return echo.ExtractIPFromXFFHeader(opts...), echo.ExtractSchemeFromHeaders(opts...)
}

// now is the server's clock (Config.Now).
func (s *Server) now() time.Time { return s.cfg.Now() }

// today is the current day in org's time zone, the day every view of
// spend, budget and forecast is computed for.
func (s *Server) today(org *store.Org) time.Time { return budget.Day(s.cfg.Now(), org.Location()) }

// mailConfigured reports whether the mail pages queue is delivered (rather
// than kept in the outbox, or not made at all).
func (s *Server) mailConfigured() bool { return s.outbox.Configured() }

// ServeHTTP serves a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.echo.ServeHTTP(w, r) }

// ListenAndServe serves on addr until ctx is cancelled; see Serve.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.Serve(ctx, ln)
}

// Serve serves on ln until ctx is cancelled, then shuts down gracefully,
// giving in-flight requests (an upload, say) up to 30 seconds.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	addr := ln.Addr().String()
	srv := &http.Server{
		Handler: s,
		// Headers must arrive promptly. Bodies are paced per request
		// instead (guardBody): ReadTimeout would cap the whole request, so
		// a large upload on a slow but steady link would be cut off.
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    64 << 10,
		// No WriteTimeout: it runs from the request's headers to the end of
		// the response, so it would cut off imports that take minutes and
		// large CSV downloads.
		IdleTimeout: 2 * time.Minute,
	}
	return serveUntil(ctx, srv, func() error { return srv.Serve(ln) }, 30*time.Second, func() {
		s.log.Info("shutting down", slog.String("addr", addr))
	})
}

// ListenAndServeMetrics serves the Prometheus metrics at /metrics on addr,
// without a token, until ctx is cancelled: for a listener that only the
// monitoring network can reach.
func (s *Server) ListenAndServeMetrics(ctx context.Context, addr string) error {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.metrics.handler())
	srv := &http.Server{
		Addr:              addr,
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	return serveUntil(ctx, srv, srv.ListenAndServe, 5*time.Second, func() {})
}

// serveUntil runs serve until it fails or ctx is cancelled, then shuts srv
// down, giving in-flight requests up to grace to finish; stopping is called
// once shutdown begins (to log it).
func serveUntil(ctx context.Context, srv *http.Server, serve func() error, grace time.Duration, stopping func()) error {
	errc := make(chan error, 1)
	go func() { errc <- serve() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	stopping()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return err
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// metrics are the Prometheus collectors, on a registry of the server's own
// (not the global one) so that servers in tests do not collide.
type metrics struct {
	registry *prometheus.Registry
	requests *prometheus.HistogramVec
}

func newMetrics() *metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	requests := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "burnrate_http_request_duration_seconds",
		Help:    "HTTP request latency by route and status code.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10, 60},
	}, []string{"method", "route", "code"})
	reg.MustRegister(requests)
	return &metrics{registry: reg, requests: requests}
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// Route is one entry of the route table.
type Route struct{ Method, Path string }

// Routes lists every route the server serves, for tests that must visit
// them all.
func (s *Server) Routes() []Route {
	var rs []Route
	for _, r := range s.echo.Routes() {
		rs = append(rs, Route{Method: r.Method, Path: r.Path})
	}
	return rs
}
