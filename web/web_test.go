package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/burnrate/burnrate/app"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
	"github.com/burnrate/burnrate/web"
)

// testNow is the clock of every test's server (web.Config.Now) and the
// instant the demo org is seeded at: the tests pin the day, so that none of
// them depends on the calendar. BURNRATE_TEST_NOW (RFC 3339) moves it, to
// run the suite on an awkward day (the 1st, the 31st, 1 January); the
// default is an ordinary weekday in the middle of a month.
var testNow = func() time.Time {
	if v := os.Getenv("BURNRATE_TEST_NOW"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			panic("BURNRATE_TEST_NOW: " + err.Error())
		}
		return t
	}
	return time.Date(2026, time.December, 16, 14, 30, 0, 0, time.UTC)
}()

// testClock is testNow as a clock.
func testClock() time.Time { return testNow }

// bundle is what most web tests need: a server on a fresh database.
type bundle struct {
	st  *store.Store
	srv *web.Server
}

func setup(t *testing.T) *bundle {
	t.Helper()
	st := storetest.New(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	return &bundle{st: st, srv: web.NewServer(log, testApp(st, app.Config{}), web.Config{Now: testClock})}
}

// client is a browser: it keeps cookies and submits forms with their CSRF
// token, calling the server through ServeHTTP.
type client struct {
	t    *testing.T
	srv  http.Handler
	jar  *cookiejar.Jar
	csrf string
}

func (b *bundle) client(t *testing.T) *client {
	jar, _ := cookiejar.New(nil)
	return &client{t: t, srv: b.srv, jar: jar}
}

var base, _ = url.Parse("http://burnrate.test/")

func (c *client) do(req *http.Request) *httptest.ResponseRecorder {
	c.t.Helper()
	for _, ck := range c.jar.Cookies(base) {
		req.AddCookie(ck)
	}
	rec := httptest.NewRecorder()
	c.srv.ServeHTTP(rec, req)
	c.jar.SetCookies(base, rec.Result().Cookies())
	if doc, err := goquery.NewDocumentFromReader(strings.NewReader(rec.Body.String())); err == nil {
		if tok, ok := doc.Find(`meta[name="csrf-token"]`).Attr("content"); ok && tok != "" {
			c.csrf = tok
		}
	}
	return rec
}

func (c *client) get(path string) *httptest.ResponseRecorder {
	c.t.Helper()
	return c.do(httptest.NewRequest(http.MethodGet, path, nil))
}

// post submits a form with the CSRF token of the last page seen.
func (c *client) post(path string, form url.Values) *httptest.ResponseRecorder {
	c.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if form.Get("_csrf") == "" {
		form.Set("_csrf", c.csrf)
	}
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return c.do(req)
}

func (c *client) cookie(name string) string {
	for _, ck := range c.jar.Cookies(base) {
		if ck.Name == name {
			return ck.Value
		}
	}
	return ""
}

// login logs in as an existing user (password storetest.Password).
func (c *client) login(email string) {
	c.t.Helper()
	c.get("/login")
	rec := c.post("/login", url.Values{"email": {email}, "password": {storetest.Password}})
	if rec.Code != http.StatusSeeOther {
		c.t.Fatalf("login %s: status %d: %s", email, rec.Code, rec.Body)
	}
}

func doc(t *testing.T, rec *httptest.ResponseRecorder) *goquery.Document {
	t.Helper()
	d, err := goquery.NewDocumentFromReader(strings.NewReader(rec.Body.String()))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func wantStatus(t *testing.T, rec *httptest.ResponseRecorder, want int) {
	t.Helper()
	if rec.Code != want {
		t.Fatalf("status = %d, want %d; body:\n%s", rec.Code, want, rec.Body)
	}
}

func ctx() context.Context { return context.Background() }
