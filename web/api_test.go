package web_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/burnrate/burnrate/store/storetest"
	"github.com/burnrate/burnrate/web"
)

func apiRequest(method, path, token, body string) *http.Request {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	return req
}

func TestAPITokenAuth(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{Name: "Scripted"})
	tok, secret, err := b.st.CreateAPIToken(ctx(), org.ID, "ci", owner.ID)
	if err != nil {
		t.Fatal(err)
	}

	rec := httptest.NewRecorder()
	b.srv.ServeHTTP(rec, apiRequest(http.MethodGet, "/api/v1/org", secret, ""))
	wantStatus(t, rec, http.StatusOK)
	var got struct{ Slug string }
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got.Slug != org.Slug {
		t.Fatalf("GET /api/v1/org = %s (%v), want slug %s", rec.Body, err, org.Slug)
	}

	for name, token := range map[string]string{"Missing": "", "Wrong": "brt_nope"} {
		rec := httptest.NewRecorder()
		b.srv.ServeHTTP(rec, apiRequest(http.MethodGet, "/api/v1/org", token, ""))
		if rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), `"error"`) {
			t.Errorf("%s token: %d %s, want 401 with a JSON error", name, rec.Code, rec.Body)
		}
		want := map[string]string{"Missing": `Bearer realm="burnrate"`, "Wrong": `Bearer realm="burnrate", error="invalid_token"`}[name]
		if got := rec.Header().Get("WWW-Authenticate"); got != want {
			t.Errorf("%s token: WWW-Authenticate %q, want %q", name, got, want)
		}
	}

	if err := b.st.RevokeAPIToken(ctx(), org.ID, tok.ID); err != nil {
		t.Fatal(err)
	}
	rec = httptest.NewRecorder()
	b.srv.ServeHTTP(rec, apiRequest(http.MethodGet, "/api/v1/org", secret, ""))
	wantStatus(t, rec, http.StatusUnauthorized)
	if got := rec.Header().Get("WWW-Authenticate"); !strings.Contains(got, `error="invalid_token"`) {
		t.Errorf("revoked token: WWW-Authenticate %q, want an invalid_token challenge", got)
	}
}

func TestHealthAndMetrics(t *testing.T) {
	t.Parallel()
	b := setupConfig(t, web.Config{Now: testClock, MetricsToken: testMetricsToken})
	rec := httptest.NewRecorder()
	b.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	wantStatus(t, rec, http.StatusOK)
	if !strings.Contains(rec.Body.String(), `"database":"ok"`) {
		t.Fatalf("healthz = %s", rec.Body)
	}
	rec = httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+testMetricsToken)
	b.srv.ServeHTTP(rec, req)
	wantStatus(t, rec, http.StatusOK)
	if !strings.Contains(rec.Body.String(), `burnrate_http_request_duration_seconds_count{code="200",method="GET",route="/healthz"} 1`) {
		t.Fatalf("metrics lack the healthz request:\n%.2000s", rec.Body)
	}
}

func TestErrorPages(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rec := httptest.NewRecorder()
	b.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/no/such/page", nil))
	wantStatus(t, rec, http.StatusNotFound)
	if doc(t, rec).Find(`[data-testid=error]`).Length() != 1 {
		t.Fatal("404 is not the error page")
	}
	rec = httptest.NewRecorder()
	b.srv.ServeHTTP(rec, apiRequest(http.MethodGet, "/api/v1/nothing", "x", ""))
	if rec.Code != http.StatusNotFound && rec.Code != http.StatusUnauthorized {
		t.Fatalf("API 404: %d", rec.Code)
	}
	if !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		t.Fatalf("API error content type = %q", rec.Header().Get("Content-Type"))
	}
	// Logged out, the app sends you to log in and back.
	rec = httptest.NewRecorder()
	b.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/settings", nil))
	wantStatus(t, rec, http.StatusSeeOther)
	if loc := rec.Header().Get("Location"); loc != "/login?next=%2Fsettings" {
		t.Fatalf("Location = %q", loc)
	}
}

func TestSettingsAndTokens(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	c := b.client(t)
	c.login(owner.Email)
	c.get("/settings")
	rec := c.post("/settings", map[string][]string{"name": {"Renamed"}, "time_zone": {"Mars/Olympus"}, "currency": {"usd"}, "team_tag_key": {"team"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	if !strings.Contains(rec.Body.String(), "IANA time zone") {
		t.Fatal("bad time zone not explained")
	}
	rec = c.post("/settings", map[string][]string{"name": {"Renamed"}, "time_zone": {"Europe/Berlin"}, "currency": {"eur"}, "team_tag_key": {"cost-center"}})
	wantStatus(t, rec, http.StatusOK)
	got, _ := b.st.Org(ctx(), org.ID)
	if got.Name != "Renamed" || got.TimeZone != "Europe/Berlin" || got.Currency != "EUR" || got.TeamTagKey != "cost-center" {
		t.Fatalf("org after settings = %+v", got)
	}

	c.get("/tokens")
	rec = c.post("/tokens", map[string][]string{"name": {"nightly upload"}})
	wantStatus(t, rec, http.StatusCreated)
	secret := strings.TrimSpace(doc(t, rec).Find(`[data-testid=token-secret]`).Text())
	if !strings.HasPrefix(secret, "brt_") {
		t.Fatalf("token secret = %q", secret)
	}
	// Shown once: the list shows only the prefix.
	rec = c.get("/tokens")
	if strings.Contains(rec.Body.String(), secret) {
		t.Fatal("token secret shown again")
	}
	api := httptest.NewRecorder()
	b.srv.ServeHTTP(api, apiRequest(http.MethodGet, "/api/v1/org", secret, ""))
	wantStatus(t, api, http.StatusOK)
}
