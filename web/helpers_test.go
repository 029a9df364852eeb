package web_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

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

func newServerWithLimit(st *store.Store, limit int64) *web.Server {
	return web.NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)), st, web.Config{Now: testClock, BaseURL: "http://burnrate.test", MaxUploadBytes: limit})
}
