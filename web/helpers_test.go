package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/burnrate/burnrate/app"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/web"
)

func itoa(id int64) string { return strconv.FormatInt(id, 10) }

func newFormRequest(path string, form url.Values) *http.Request {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return req
}

func mustOrgOf(t *testing.T, b *bundle, userID int64) int64 {
	t.Helper()
	orgs, err := b.st.OrgsForUser(ctx(), userID)
	if err != nil || len(orgs) == 0 {
		t.Fatalf("orgs of user %d: %v", userID, err)
	}
	return orgs[0].ID
}

// testBaseURL is where the tests' servers say users reach them.
const testBaseURL = "http://burnrate.test"

// testApp is the App a test's server runs on, built by package app as
// serve builds it, on st; links go to cfg.BaseURL (testBaseURL when empty).
// Nothing works its jobs unless the test runs a.Jobs: what is queued stays
// queued for the test to look at.
func testApp(st *store.Store, cfg app.Config) *app.App {
	if cfg.BaseURL == "" {
		cfg.BaseURL = testBaseURL
	}
	a, err := app.New(st, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		panic(err) // only a malformed SMTP URL fails, and tests give none
	}
	return a
}

// runJobs works a's jobs until t ends.
func runJobs(t *testing.T, a *app.App) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Jobs.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("jobs: %v", err)
		}
	})
}

func newServerWithLimit(st *store.Store, limit int64) *web.Server {
	return web.NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)), testApp(st, app.Config{}), web.Config{Now: testClock, MaxUploadBytes: limit})
}
