package web_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"sync"
	"testing"

	"github.com/burnrate/burnrate/app"
	"github.com/burnrate/burnrate/store/storetest"
	"github.com/burnrate/burnrate/web"
)

// setupConfig is setup with a server configured by cfg.
func setupConfig(t *testing.T, cfg web.Config) *bundle {
	t.Helper()
	st := storetest.New(t)
	return &bundle{st: st, srv: web.NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)), testApp(st, app.Config{}), cfg)}
}

// loginFrom tries a log-in with a wrong password, as a request that arrived
// from remoteAddr carrying the X-Forwarded-For header xff (none when empty).
func (c *client) loginFrom(email, remoteAddr, xff string) *httptest.ResponseRecorder {
	c.t.Helper()
	req := newFormRequest("/login", url.Values{"email": {email}, "password": {"wrong password"}, "_csrf": {c.csrf}})
	if remoteAddr != "" {
		req.RemoteAddr = remoteAddr
	}
	if xff != "" {
		req.Header.Set("X-Forwarded-For", xff)
	}
	return c.do(req)
}

// The per-address limit allows this many failures (web/auth.go).
const maxFailuresPerIP = 50

// TestLoginLimitIgnoresForwardedForWithoutProxies: with no trusted proxies,
// a client that sends a new X-Forwarded-For (and a new email) with every
// guess is still one address, and is stopped at the limit.
func TestLoginLimitIgnoresForwardedForWithoutProxies(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.client(t)
	c.get("/login")
	for i := range maxFailuresPerIP {
		rec := c.loginFrom(fmt.Sprintf("guess%d@example.com", i), "", fmt.Sprintf("198.51.100.%d", i))
		if rec.Code != http.StatusUnauthorized {
			t.Fatalf("guess %d: status %d, want 401", i, rec.Code)
		}
	}
	rec := c.loginFrom("one-more@example.com", "", "203.0.113.99")
	wantStatus(t, rec, http.StatusTooManyRequests)

	// Nor can anyone lock a victim's address out by naming it.
	victim := b.client(t)
	victim.get("/login")
	rec = victim.loginFrom("victim@example.com", "203.0.113.50:4000", "")
	wantStatus(t, rec, http.StatusUnauthorized)
}

// TestLoginLimitHonoursTrustedProxies: behind a configured proxy the client
// is the address the proxy appended, whatever the client put before it.
func TestLoginLimitHonoursTrustedProxies(t *testing.T) {
	t.Parallel()
	// httptest requests come from 192.0.2.1: the proxy.
	b := setupConfig(t, web.Config{Now: testClock, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}})
	c := b.client(t)
	c.get("/login")
	for i := range maxFailuresPerIP {
		// The client forges a new first entry each time; the proxy appends
		// the address it really came from.
		rec := c.loginFrom(fmt.Sprintf("guess%d@example.com", i), "", fmt.Sprintf("198.51.100.%d, 203.0.113.7", i))
		if rec.Code != http.StatusUnauthorized {
			t.Fatalf("guess %d: status %d, want 401", i, rec.Code)
		}
	}
	wantStatus(t, c.loginFrom("one-more@example.com", "", "203.0.113.7"), http.StatusTooManyRequests)
	// Another client behind the same proxy is not held back.
	wantStatus(t, c.loginFrom("someone@example.com", "", "203.0.113.8"), http.StatusUnauthorized)
	// A request that does not come from the proxy cannot name a client.
	wantStatus(t, c.loginFrom("someone@example.com", "198.51.100.1:5000", "203.0.113.7"), http.StatusUnauthorized)
}

// TestLoginLimitCountsIPv6ByPrefix: an IPv6 client holds a whole /64, so
// a new address in it for every guess is still the same client.
func TestLoginLimitCountsIPv6ByPrefix(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.client(t)
	c.get("/login")
	for i := range maxFailuresPerIP {
		rec := c.loginFrom(fmt.Sprintf("guess%d@example.com", i), fmt.Sprintf("[2001:db8:1:2::%x]:443", i+1), "")
		if rec.Code != http.StatusUnauthorized {
			t.Fatalf("guess %d: status %d, want 401", i, rec.Code)
		}
	}
	wantStatus(t, c.loginFrom("one-more@example.com", "[2001:db8:1:2:ffff::1]:443", ""), http.StatusTooManyRequests)
	wantStatus(t, c.loginFrom("one-more@example.com", "[2001:db8:1:3::1]:443", ""), http.StatusUnauthorized)
}

// The per-email limit allows this many failures (web/auth.go).
const maxFailuresPerEmail = 10

// TestLoginLimitHoldsUnderConcurrency: guesses sent all at once are counted
// like guesses sent one by one: exactly the limit get to try.
func TestLoginLimitHoldsUnderConcurrency(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	c := b.client(t)
	c.get("/login")
	cookies := c.jar.Cookies(base)
	const n = 60
	codes := make(chan int, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := newFormRequest("/login", url.Values{"email": {owner.Email}, "password": {"wrong password"}, "_csrf": {c.csrf}})
			for _, ck := range cookies {
				req.AddCookie(ck)
			}
			<-start
			rec := httptest.NewRecorder()
			b.srv.ServeHTTP(rec, req)
			codes <- rec.Code
		}()
	}
	close(start)
	wg.Wait()
	close(codes)
	got := map[int]int{}
	for code := range codes {
		got[code]++
	}
	want := map[int]int{http.StatusUnauthorized: maxFailuresPerEmail, http.StatusTooManyRequests: n - maxFailuresPerEmail}
	if len(got) != len(want) || got[401] != want[401] || got[429] != want[429] {
		t.Fatalf("%d concurrent wrong passwords: statuses %v, want %v", n, got, want)
	}
	// The right password is refused too until the window passes.
	wantStatus(t, c.post("/login", url.Values{"email": {owner.Email}, "password": {storetest.Password}}), http.StatusTooManyRequests)

	// Right passwords take their attempt back: a busy office behind one
	// address is not locked out by its own log-ins.
	other := storetest.User(t, b.st, storetest.UserOpts{})
	for range maxFailuresPerIP {
		b.client(t).login(other.Email)
	}
}

// TestLoginRedirectStaysOnSite: the page a log-in returns to is a path on
// this site, whatever ?next= says.
func TestLoginRedirectStaysOnSite(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	for _, tc := range []struct{ query, want string }{
		{"%2F%09%2Fevil.example", "/"},
		{"%2F%5Cevil.example", "/"},
		{"%2F%2Fevil.example", "/"},
		{"https%3A%2F%2Fevil.example", "/"},
		{"javascript%3Aalert(1)", "/"},
		{"%2Fbudgets%3Ftab%3Dalerts", "/budgets?tab=alerts"},
	} {
		c := b.client(t)
		rec := c.get("/login?next=" + tc.query)
		wantStatus(t, rec, http.StatusOK)
		next, _ := doc(t, rec).Find(`[data-testid=login-form] input[name=next]`).Attr("value")
		if next != tc.want {
			t.Errorf("next=%s: the form carries next %q, want %q", tc.query, next, tc.want)
		}
		// Posting the raw value back (not the form's) is refused the same.
		raw, _ := url.QueryUnescape(tc.query)
		rec = c.post("/login?next="+tc.query, url.Values{"email": {owner.Email}, "password": {storetest.Password}, "next": {raw}})
		wantStatus(t, rec, http.StatusSeeOther)
		if loc := rec.Header().Get("Location"); loc != tc.want {
			t.Errorf("next=%s: redirected to %q, want %q", tc.query, loc, tc.want)
		}
	}
}
