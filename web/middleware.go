package web

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/klauspost/compress/gzhttp"
	"github.com/labstack/echo/v4"

	"github.com/burnrate/burnrate/access"
	"github.com/burnrate/burnrate/static"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/web/views"
)

const sessionCookie = "burnrate_session"

// csrfField is the form field that carries the CSRF token.
const csrfField = "_csrf"

const (
	roleAdmin = access.Admin
)

func isAPI(c echo.Context) bool { return strings.HasPrefix(c.Request().URL.Path, "/api/") }

// isHTMX reports whether the request wants a fragment rather than a page
// (boosted requests want whole pages).
func isHTMX(c echo.Context) bool {
	h := c.Request().Header
	return h.Get("HX-Request") == "true" && h.Get("HX-Boosted") != "true"
}

func (s *Server) secureCookies() bool { return strings.HasPrefix(s.baseURL, "https://") }

func bodyLimit(n int64) string { return strconv.FormatInt(n, 10) + "B" }

// requestLog logs each request once, after it is served, and records its
// latency for /metrics.
func (s *Server) requestLog(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			// Let the error handler write the response now, so the status
			// logged is the one sent.
			c.Error(err)
		}
		req, res := c.Request(), c.Response()
		route := c.Path()
		if route == "" {
			route = "unmatched"
		}
		s.metrics.requests.WithLabelValues(req.Method, route, strconv.Itoa(res.Status)).Observe(time.Since(start).Seconds())
		level := slog.LevelInfo
		if res.Status >= 500 {
			level = slog.LevelError
		}
		s.log.LogAttrs(req.Context(), level, "request",
			slog.String("request_id", res.Header().Get(echo.HeaderXRequestID)),
			slog.String("method", req.Method),
			slog.String("path", req.URL.Path),
			slog.Int("status", res.Status),
			slog.Duration("duration", time.Since(start)),
		)
		return nil
	}
}

// hstsHeader is sent when BASE_URL is https: a year, for this host only
// (includeSubDomains could break plain-http sites under a self-hosted
// install's domain, which are not Burnrate's to decide).
const hstsHeader = "max-age=31536000"

// strictTransport tells browsers to reach Burnrate only over https, when
// BASE_URL says that is how it is reached. echo's SecureConfig.HSTSMaxAge
// sends the header only on requests it sees arrive over https, and
// Burnrate terminates no TLS itself: behind a proxy that sends no
// X-Forwarded-Proto, or one not in TRUSTED_PROXIES, it would never be sent.
// Browsers ignore the header on plain-http responses, so always is safe.
func (s *Server) strictTransport(next echo.HandlerFunc) echo.HandlerFunc {
	if !s.secureCookies() {
		return next
	}
	return func(c echo.Context) error {
		c.Response().Header().Set(echo.HeaderStrictTransportSecurity, hstsHeader)
		return next(c)
	}
}

// refuseCSRFInQuery refuses a state-changing request whose URL carries a
// CSRF token. The token belongs in the form body or the X-CSRF-Token header:
// in a URL it ends up in logs, history and Referer headers. echo's form
// lookup reads the body and the query string alike, so without this a
// leaked token would work in a link-shaped request.
func refuseCSRFInQuery(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		switch c.Request().Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
			return next(c)
		}
		if c.Request().URL.Query().Has(csrfField) {
			return echo.NewHTTPError(http.StatusForbidden, "The form's security token must not be in the URL. Reload the page and try again.")
		}
		return next(c)
	}
}

// loadSession finds the browser's session, if it has a live one, and with
// it the user and the org they are looking at.
func (s *Server) loadSession(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if isAPI(c) || strings.HasPrefix(c.Request().URL.Path, "/static/") {
			return next(c)
		}
		ck, err := c.Cookie(sessionCookie)
		if err != nil || ck.Value == "" {
			return next(c)
		}
		v, err := s.store.VisitByCookie(c.Request().Context(), ck.Value)
		if errors.Is(err, store.ErrNotFound) {
			s.clearSessionCookie(c)
			return next(c)
		}
		if err != nil {
			return err
		}
		c.Set(keySession, &v.Session)
		c.Set(keyUser, &v.User)
		if v.Org != nil {
			c.Set(keyOrg, v.Org)
			c.Set(keyRole, v.Role)
		}
		return next(c)
	}
}

// noStore keeps every response to a logged-in user or an API token (pages,
// CSV and JSON downloads, errors) out of browser and proxy caches, where the
// next person at a shared computer, or behind the same proxy, could read
// it. It runs after loadSession, which leaves static files alone.
func noStore(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if currentUser(c) != nil || isAPI(c) {
			c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
		}
		return next(c)
	}
}

// gzipMinLength is the smallest response body compressed: below about a
// kilobyte (one packet) gzip saves no round trip and its header and
// checksum are a larger share of what is sent.
const gzipMinLength = 1024

// gzipLevel is the compression of responses: the fastest. Pages are built
// for each request (a year's dashboard is about 300 KB of HTML), and the
// default level spends several milliseconds of CPU on each for a few percent
// fewer bytes on the wire.
const gzipLevel = gzip.BestSpeed

// compress gzips responses (pages, htmx fragments, JSON, CSV) of gzipMinLength
// bytes or more to clients that accept it, and says Vary: Accept-Encoding on
// every response it could have compressed. Assets (compressed once, with
// their own Vary, in static.Handler), /metrics (Prometheus's handler
// negotiates its own) and the upload endpoints (a short answer after a long
// body; their progress is polled apart) are left alone. Nothing here holds
// a response back: a Flush (CSV downloads) sends what is compressed so far.
//
// The compressor is klauspost/compress's (through its gzhttp): at the same
// level it takes a third less CPU than compress/gzip on a dashboard page, and
// writes fewer bytes (docs/operations.md). A handler's error is rendered
// inside, so that the error page goes through the same writer before it is
// closed.
func compress() echo.MiddlewareFunc {
	wrap, err := gzhttp.NewWrapper(gzhttp.MinSize(gzipMinLength), gzhttp.CompressionLevel(gzipLevel), gzhttp.EnableZstd(false))
	if err != nil {
		panic("web: gzip options: " + err.Error()) // constants: a programming error
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			switch {
			case r.Method == http.MethodHead || strings.HasPrefix(r.URL.Path, "/static/") || r.URL.Path == "/metrics" || isUpload(r):
				return next(c)
			case !static.AcceptsGzip(r.Header.Get(echo.HeaderAcceptEncoding)):
				c.Response().Header().Add(echo.HeaderVary, echo.HeaderAcceptEncoding)
				return next(c)
			}
			res := c.Response()
			plain := res.Writer
			defer func() { res.Writer = plain }()
			wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				res.Writer = w
				c.SetRequest(r)
				if err := next(c); err != nil {
					c.Error(err)
				}
			})).ServeHTTP(plain, r)
			return nil
		}
	}
}

// isUpload reports whether r sends a file to import.
func isUpload(r *http.Request) bool {
	return r.Method == http.MethodPost && (r.URL.Path == "/imports" || r.URL.Path == "/api/v1/imports")
}

// requireUser sends logged-out visitors to the log-in page.
func (s *Server) requireUser(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if currentUser(c) == nil {
			if isHTMX(c) {
				// A fragment asked by a page whose session ended (logged
				// out in another tab, expired): the log-in page in its
				// place, not inside it.
				return htmxGoTo(c, "/login?next="+url.QueryEscape(htmxPage(c)))
			}
			if c.Request().Method != http.MethodGet {
				return echo.NewHTTPError(http.StatusUnauthorized, "Log in first.")
			}
			return c.Redirect(http.StatusSeeOther, "/login?next="+url.QueryEscape(c.Request().URL.RequestURI()))
		}
		return next(c)
	}
}

// requireOrg sends a user who is in no org (yet) to create one.
func (s *Server) requireOrg(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if currentOrg(c) != nil {
			return samePageOrg(next)(c)
		}
		orgs, err := s.store.OrgsForUser(c.Request().Context(), currentUser(c).ID)
		if err != nil {
			return err
		}
		if len(orgs) == 0 {
			if isHTMX(c) {
				return htmxGoTo(c, "/orgs/new")
			}
			return c.Redirect(http.StatusSeeOther, "/orgs/new")
		}
		// Looking at no org (or one they left): pick their first.
		o := orgs[0]
		if err := s.store.SetSessionOrg(c.Request().Context(), currentSession(c).ID, o.ID); err != nil {
			return err
		}
		c.Set(keyOrg, &o.Org)
		c.Set(keyRole, o.Role)
		return samePageOrg(next)(c)
	}
}

// samePageOrg reloads the page of an htmx request made for another org
// than the session's now (views.OrgHeader): switched in another tab, or
// removed from it. Its answer would be the other org's, swapped in under
// this one's name; a change would be made in an org the page does not
// show.
func samePageOrg(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if page := c.Request().Header.Get(views.OrgHeader); isHTMX(c) && page != "" && page != strconv.FormatInt(currentOrg(c).ID, 10) {
			c.Response().Header().Set("HX-Refresh", "true")
			return c.NoContent(http.StatusNoContent)
		}
		return next(c)
	}
}

// htmxGoTo answers an htmx request by sending the browser to location,
// a whole page (HX-Redirect), where a redirect would have htmx swap that
// page into the current one.
func htmxGoTo(c echo.Context, location string) error {
	c.Response().Header().Set("HX-Redirect", location)
	return c.NoContent(http.StatusNoContent)
}

// htmxPage is the path and query of the page an htmx request came from
// (HX-Current-URL), or else of the request itself.
func htmxPage(c echo.Context) string {
	if u, err := url.Parse(c.Request().Header.Get("HX-Current-URL")); err == nil && u.Path != "" {
		return u.RequestURI()
	}
	return c.Request().URL.RequestURI()
}

// requireToken authenticates API requests by their bearer token; the token
// decides the org.
func (s *Server) requireToken(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		auth := c.Request().Header.Get(echo.HeaderAuthorization)
		secret, ok := strings.CutPrefix(auth, "Bearer ")
		// The challenge a 401 carries (RFC 6750), so that clients know
		// which scheme to answer with.
		if !ok || secret == "" {
			c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="burnrate"`)
			return echo.NewHTTPError(http.StatusUnauthorized, "missing API token: send Authorization: Bearer <token> (create one under Settings → API tokens)")
		}
		ctx := c.Request().Context()
		tok, org, err := s.store.APITokenBySecret(ctx, strings.TrimSpace(secret))
		if errors.Is(err, store.ErrNotFound) {
			c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="burnrate", error="invalid_token"`)
			return echo.NewHTTPError(http.StatusUnauthorized, "invalid or revoked API token (a token stops working when the member who made it leaves the org)")
		}
		if err != nil {
			return err
		}
		// A token acts with its maker's role as it is now: the routes
		// check it as they check a logged-in member's.
		c.Set(keyOrg, &org)
		c.Set(keyRole, tok.Role)
		return next(c)
	}
}

// requireMetricsToken lets through requests bearing the metrics token.
// Metrics name every route and how busy it is, and the process's memory:
// not for everyone.
func (s *Server) requireMetricsToken(next echo.HandlerFunc) echo.HandlerFunc {
	want := []byte("Bearer " + s.cfg.MetricsToken)
	return func(c echo.Context) error {
		got := []byte(c.Request().Header.Get(echo.HeaderAuthorization))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="metrics"`)
			return echo.NewHTTPError(http.StatusUnauthorized, "metrics need Authorization: Bearer <METRICS_TOKEN>")
		}
		return next(c)
	}
}

// fence runs the rest of the request on a connection that row-level
// security confines to the current org: a second fence behind the org_id
// every query takes.
func (s *Server) fence(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		org := currentOrg(c)
		var userID int64
		if u := currentUser(c); u != nil {
			userID = u.ID
		}
		// Once Fenced returns, the connection is back in the pool: anything
		// that renders later (echo's Recover, should something still panic)
		// must use the plain store, never the released connection.
		defer c.Set(keyStore, nil)
		return s.store.Fenced(c.Request().Context(), org.ID, userID, func(st *store.Store) error {
			c.Set(keyStore, st)
			// Render the error while the fenced connection is still ours:
			// the error page may query (the nav lists orgs).
			if err := recoverPanic(next, c); err != nil {
				c.Error(err)
			}
			return nil
		})
	}
}

// recoverPanic runs next, turning a panic into an error, so that a handler
// bug becomes a 500 page rendered like any other error instead of unwinding
// past the code that holds the request's database connection.
func recoverPanic(next echo.HandlerFunc, c echo.Context) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if r == http.ErrAbortHandler {
				panic(r) // net/http's way to abort a response: not a bug
			}
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	return next(c)
}

// refuseViewerWrites lets viewers look but not touch: any request that is
// not a read is refused.
func (s *Server) refuseViewerWrites(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		switch c.Request().Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			return next(c)
		}
		if !currentRole(c).CanWrite() {
			return echo.NewHTTPError(http.StatusForbidden, "Viewers can look but not change anything. Ask an admin for the member role.")
		}
		return next(c)
	}
}

// requireRole refuses users below min in the current org.
func (s *Server) requireRole(min access.Role) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if !currentRole(c).AtLeast(min) {
				return echo.NewHTTPError(http.StatusForbidden, fmt.Sprintf("Only %ss and owners can do that.", min))
			}
			return next(c)
		}
	}
}

func (s *Server) setSessionCookie(c echo.Context, value string) {
	c.SetCookie(&http.Cookie{
		Name:     sessionCookie,
		Value:    value,
		Path:     "/",
		Expires:  time.Now().Add(store.SessionTTL),
		HttpOnly: true,
		Secure:   s.secureCookies() || c.IsTLS(),
		SameSite: http.SameSiteLaxMode,
	})
}

func (s *Server) clearSessionCookie(c echo.Context) {
	c.SetCookie(&http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode})
}
