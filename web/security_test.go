package web_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/burnrate/burnrate/app"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
	"github.com/burnrate/burnrate/web"
)

const testMetricsToken = "metrics-token-for-tests-0123456789"

// TestCSRFTokenInQueryRefused: the token is accepted from the form body or
// the header, never from the URL.
func TestCSRFTokenInQueryRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	c := b.client(t)
	c.login(owner.Email)
	c.get("/tokens")
	req := newFormRequest("/tokens?_csrf="+url.QueryEscape(c.csrf), url.Values{"name": {"from a link"}})
	wantStatus(t, c.do(req), http.StatusForbidden)
	// Not even alongside a good token in the body.
	req = newFormRequest("/tokens?_csrf="+url.QueryEscape(c.csrf), url.Values{"name": {"from a link"}, "_csrf": {c.csrf}})
	wantStatus(t, c.do(req), http.StatusForbidden)
	if toks, _ := b.st.APITokens(ctx(), org.ID); len(toks) != 0 {
		t.Fatalf("a token in the URL created %d API tokens", len(toks))
	}
	// The body still works.
	if rec := c.post("/tokens", url.Values{"name": {"from the form"}}); rec.Code >= 400 {
		t.Fatalf("token in the body: status %d", rec.Code)
	}
}

// TestMetricsNeedTheToken: /metrics on the app's listener is off without
// METRICS_TOKEN, and with it answers only requests that bear it.
func TestMetricsNeedTheToken(t *testing.T) {
	t.Parallel()
	get := func(b *bundle, auth string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		b.srv.ServeHTTP(rec, req)
		return rec
	}
	off := setup(t)
	wantStatus(t, get(off, ""), http.StatusNotFound)
	wantStatus(t, get(off, "Bearer "), http.StatusNotFound)

	on := setupConfig(t, web.Config{Now: testClock, MetricsToken: testMetricsToken})
	for _, auth := range []string{"", "Bearer ", "Bearer wrong", testMetricsToken, "Bearer " + testMetricsToken + "x", "Basic " + testMetricsToken} {
		rec := get(on, auth)
		wantStatus(t, rec, http.StatusUnauthorized)
		if strings.Contains(rec.Body.String(), "go_goroutines") {
			t.Fatalf("Authorization %q: metrics shown", auth)
		}
	}
	rec := get(on, "Bearer "+testMetricsToken)
	wantStatus(t, rec, http.StatusOK)
	if !strings.Contains(rec.Body.String(), "go_goroutines") {
		t.Fatalf("metrics with the token:\n%.500s", rec.Body)
	}
}

// TestMetricsListener: METRICS_ADDR serves /metrics, and nothing else,
// without a token.
func TestMetricsListener(t *testing.T) {
	t.Parallel()
	b := setup(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- b.srv.ListenAndServeMetrics(ctx, addr) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("metrics listener: %v", err)
		}
	}()
	get := func(path string) (int, string) {
		for range 50 {
			res, err := http.Get("http://" + addr + path)
			if err != nil {
				time.Sleep(20 * time.Millisecond)
				continue
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			return res.StatusCode, string(body)
		}
		t.Fatalf("metrics listener on %s did not answer", addr)
		return 0, ""
	}
	if code, body := get("/metrics"); code != http.StatusOK || !strings.Contains(body, "go_goroutines") {
		t.Fatalf("GET /metrics on the metrics listener: %d\n%.500s", code, body)
	}
	for _, path := range []string{"/", "/dashboard", "/healthz", "/login"} {
		if code, _ := get(path); code != http.StatusNotFound {
			t.Errorf("GET %s on the metrics listener: %d, want 404", path, code)
		}
	}
}

// TestHSTSWithHTTPSBaseURL: an https BASE_URL means browsers must not fall
// back to plain http, whether or not the proxy in front says https.
func TestHSTSWithHTTPSBaseURL(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	for _, tc := range []struct{ base, want string }{
		{"https://burnrate.example.com", "max-age=31536000"},
		{"http://burnrate.test", ""},
	} {
		srv := newServerWithBaseURL(st, tc.base)
		for _, path := range []string{"/login", "/healthz", "/no/such/page", "/static/css/app.css"} {
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
			if got := rec.Header().Get("Strict-Transport-Security"); got != tc.want {
				t.Errorf("BASE_URL %s, GET %s: Strict-Transport-Security %q, want %q", tc.base, path, got, tc.want)
			}
		}
		// Refused requests carry it too.
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, newFormRequest("/tokens", url.Values{"name": {"x"}}))
		if got := rec.Header().Get("Strict-Transport-Security"); got != tc.want {
			t.Errorf("BASE_URL %s, refused POST: Strict-Transport-Security %q, want %q", tc.base, got, tc.want)
		}
	}
}

func newServerWithBaseURL(st *store.Store, base string) *web.Server {
	return web.NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)), testApp(st, app.Config{BaseURL: base}), web.Config{Now: testClock})
}

// TestNoStoreForLoggedInResponses: what a logged-in user or an API token
// is shown is not kept by browsers or proxies; static files still are.
func TestNoStoreForLoggedInResponses(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	_, token, err := b.st.CreateAPIToken(ctx(), org.ID, "script", owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	c := b.client(t)
	c.login(owner.Email)
	for _, path := range []string{
		"/dashboard",
		"/dashboard?format=csv&table=daily",
		"/dashboard?format=json",
		"/settings",
		"/tokens",
		"/account",
		"/budgets/999999",
		"/no/such/page",
	} {
		rec := c.get(path)
		if got := rec.Header().Get("Cache-Control"); got != "no-store" {
			t.Errorf("logged in, GET %s (%d): Cache-Control %q, want no-store", path, rec.Code, got)
		}
	}
	for _, path := range []string{"/api/v1/org", "/api/v1/imports", "/api/v1/spend?from=2026-01-01&to=2026-01-31"} {
		rec := httptest.NewRecorder()
		b.srv.ServeHTTP(rec, apiRequest(http.MethodGet, path, token, ""))
		if got := rec.Header().Get("Cache-Control"); rec.Code != http.StatusOK || got != "no-store" {
			t.Errorf("API GET %s: %d, Cache-Control %q, want 200 and no-store", path, rec.Code, got)
		}
	}
	if got := c.get("/static/css/app.css").Header().Get("Cache-Control"); got == "no-store" {
		t.Errorf("static file: Cache-Control %q", got)
	}
}
