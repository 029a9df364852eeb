package web_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/pricing"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestUploadOutcomeLinksToItsPeriod checks the summary after an upload:
// the total rounded for reading (the exact one in its title), and "See it
// on the dashboard" opening the imported days.
func TestUploadOutcomeLinksToItsPeriod(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	c := b.client(t)
	c.login(owner.Email)
	csv := "BilledCost,ChargePeriodStart,BillingCurrency,ProviderName\n1234.52022672899,2024-03-05 01:00:00,USD,AWS\n1,2024-03-09 01:00:00,USD,AWS\n"
	rec := c.postFile("/imports", "file", "focus.csv", []byte(csv), nil)
	wantStatus(t, rec, http.StatusOK)
	d := doc(t, rec)
	total := d.Find(`[data-testid=import-total]`)
	if title, _ := total.Attr("title"); total.Text() != "1,235.52 USD" || title != "1235.52022672899 USD" {
		t.Errorf("total = %q (title %q)", total.Text(), title)
	}
	if href, _ := d.Find(`[data-testid=see-on-dashboard]`).Attr("href"); href != "/dashboard?range=custom&from=2024-03-05&to=2024-03-09" {
		t.Errorf("see it on the dashboard → %q", href)
	}
}

// TestTokensEmptyStateSaysWhatTheyAreFor checks the tokens page of an org
// without any, and the copy button of a new one.
func TestTokensEmptyStateSaysWhatTheyAreFor(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	c := b.client(t)
	c.login(owner.Email)
	d := doc(t, c.get("/tokens"))
	if e := d.Find(`[data-testid=tokens-empty]`); e.Length() != 1 || !strings.Contains(e.Text(), "without a password") {
		t.Fatalf("empty state = %q", e.Text())
	}
	rec := c.post("/tokens", map[string][]string{"name": {"nightly"}})
	if rec.Code == http.StatusSeeOther {
		rec = c.get(rec.Header().Get("Location"))
	}
	d = doc(t, rec)
	if target, _ := d.Find(`[data-testid=copy-token]`).Attr("data-copy"); target == "" || d.Find("#"+target).Text() == "" {
		t.Fatalf("copy button targets %q", target)
	}
	if d.Find(`[data-testid=tokens-empty]`).Length() != 0 {
		t.Error("empty state shown beside a token")
	}
}

// TestStaticAssetsCompressedAndCached checks that pages link assets by a
// content hash, served gzipped with a year's Cache-Control under that
// hash, revalidated (ETag, 304) without it.
func TestStaticAssetsCompressedAndCached(t *testing.T) {
	t.Parallel()
	b := setup(t)
	page := b.client(t).get("/login").Body.String()
	m := regexp.MustCompile(`/static/vendor/htmx\.min\.js\?v=([0-9a-f]{12})`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("the page does not link htmx by its hash")
	}
	get := func(path string, h map[string]string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		b.srv.ServeHTTP(rec, req)
		return rec
	}
	rec := get(m[0], map[string]string{"Accept-Encoding": "br, gzip"})
	wantStatus(t, rec, http.StatusOK)
	if rec.Header().Get("Content-Encoding") != "gzip" || !strings.Contains(rec.Header().Get("Cache-Control"), "max-age=31536000") {
		t.Fatalf("headers = %v", rec.Header())
	}
	zr, err := gzip.NewReader(bytes.NewReader(rec.Body.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(zr)
	raw := get("/static/vendor/htmx.min.js", nil)
	if !bytes.Equal(plain, raw.Body.Bytes()) || raw.Header().Get("Content-Encoding") != "" || raw.Header().Get("Cache-Control") != "no-cache" {
		t.Fatalf("plain: %d bytes vs %d, headers %v", len(plain), raw.Body.Len(), raw.Header())
	}
	wantStatus(t, get("/static/vendor/htmx.min.js", map[string]string{"If-None-Match": raw.Header().Get("ETag")}), http.StatusNotModified)
	wantStatus(t, get("/static/vendor/htmx.min.js", map[string]string{"Accept-Encoding": "gzip;q=0"}), http.StatusOK)
	if rec := get("/static/vendor/htmx.min.js", map[string]string{"Accept-Encoding": "gzip;q=0"}); rec.Header().Get("Content-Encoding") != "" {
		t.Error("gzip sent to a client that refused it")
	}
	for _, p := range []string{"/static/../static.go", "/static/nope.js", "/static/css", "/static/assets.go"} {
		if rec := get(p, nil); rec.Code != http.StatusNotFound && rec.Code != http.StatusMovedPermanently {
			t.Errorf("%s: %d", p, rec.Code)
		}
	}
}

// TestAdvisorLivePreviewKeepsQuiet checks that the advisor's live requests
// (sent while typing) get no errors for a half-filled form, and a submit
// does.
func TestAdvisorLivePreviewKeepsQuiet(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	c := b.client(t)
	c.login(owner.Email)
	for live, want := range map[string]int{"1": http.StatusNoContent, "": http.StatusUnprocessableEntity} {
		req := httptest.NewRequest(http.MethodGet, "/advisor?job=batch-inference&params=13&tokens=", nil)
		req.Header.Set("HX-Request", "true")
		if live != "" {
			req.Header.Set("X-Live-Preview", live)
		}
		rec := c.do(req)
		if rec.Code != want {
			t.Errorf("live %q: %d, want %d (%.200s)", live, rec.Code, want, rec.Body)
		}
	}
}

// TestResponsesGzipped checks that pages, htmx fragments and API JSON are
// gzipped for clients that take it, decode to what an uncompressed fetch
// gets, and say Vary: Accept-Encoding; small bodies, refusals (q=0) and
// uploads go plain.
func TestResponsesGzipped(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	_, token, err := b.st.CreateAPIToken(ctx(), org.ID, "test", owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	// 60 days of two providers: JSON and CSV of some size.
	csv := "BilledCost,ChargePeriodStart,BillingCurrency,ProviderName\n"
	for i := range 60 {
		d := time.Date(2026, 10, 1+i, 1, 0, 0, 0, time.UTC).Format(time.DateTime)
		csv += fmt.Sprintf("%d.25,%s,USD,AWS\n%d.5,%s,USD,OpenAI\n", 100+i, d, 20+i, d)
	}
	im := ingest.NewImporter(b.st, ingest.PriceTable(pricing.DefaultLLMPrices()), pricing.DefaultCatalog())
	if _, err := im.Import(ctx(), ingest.ImportRequest{Org: org, FileName: "bill.csv", Via: "test"}, strings.NewReader(csv)); err != nil {
		t.Fatal(err)
	}
	c := b.client(t)
	c.login(owner.Email)
	fetch := func(method, path, encoding string, h map[string]string) *httptest.ResponseRecorder {
		t.Helper()
		req := httptest.NewRequest(method, path, nil)
		if encoding != "" {
			req.Header.Set("Accept-Encoding", encoding)
		}
		for k, v := range h {
			req.Header.Set(k, v)
		}
		return c.do(req)
	}
	gunzip := func(rec *httptest.ResponseRecorder) string {
		t.Helper()
		zr, err := gzip.NewReader(bytes.NewReader(rec.Body.Bytes()))
		if err != nil {
			t.Fatalf("not gzip: %v (%d bytes, headers %v)", err, rec.Body.Len(), rec.Header())
		}
		plain, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		return string(plain)
	}
	varies := func(rec *httptest.ResponseRecorder) bool {
		return slices.Contains(rec.Header().Values("Vary"), "Accept-Encoding")
	}
	bearer := map[string]string{"Authorization": "Bearer " + token}
	for _, tc := range []struct {
		name, path string
		h          map[string]string
		mime       string
	}{
		{"page", "/budgets/new", nil, "text/html"},
		{"htmx fragment", "/dashboard", map[string]string{"HX-Request": "true"}, "text/html"},
		{"API JSON", "/api/v1/spend?from=2026-10-01&to=2026-11-29&group=provider", bearer, "application/json"},
		{"chart JSON", "/dashboard?range=custom&from=2026-10-01&to=2026-11-29&format=json", nil, "application/json"},
		{"CSV", "/dashboard?range=custom&from=2026-10-01&to=2026-11-29&format=csv&table=daily", nil, "text/csv"},
		{"error page", "/budgets/999999", nil, "text/html"},
	} {
		plain := fetch(http.MethodGet, tc.path, "", tc.h)
		zipped := fetch(http.MethodGet, tc.path, "gzip, deflate, br", tc.h)
		if zipped.Code != plain.Code || zipped.Header().Get("Content-Encoding") != "gzip" || !varies(zipped) ||
			!strings.HasPrefix(zipped.Header().Get("Content-Type"), tc.mime) {
			t.Errorf("%s: %d %v, want %d gzipped %s with Vary", tc.name, zipped.Code, zipped.Header(), plain.Code, tc.mime)
			continue
		}
		if plain.Header().Get("Content-Encoding") != "" || !varies(plain) {
			t.Errorf("%s without Accept-Encoding: %v", tc.name, plain.Header())
		}
		t.Logf("%s: %d bytes, %d gzipped", tc.name, plain.Body.Len(), zipped.Body.Len())
		if got := gunzip(zipped); got != plain.Body.String() || zipped.Body.Len() >= plain.Body.Len() {
			t.Errorf("%s: gzipped %d bytes decode to %d, plain is %d", tc.name, zipped.Body.Len(), len(got), plain.Body.Len())
		}
	}
	// A client that refuses gzip gets plain text, still marked as varying.
	if rec := fetch(http.MethodGet, "/budgets/new", "gzip;q=0, identity", nil); rec.Header().Get("Content-Encoding") != "" || !varies(rec) {
		t.Errorf("gzip;q=0: %v", rec.Header())
	}
	// A short answer is not worth compressing.
	if rec := fetch(http.MethodGet, "/healthz", "gzip", nil); rec.Header().Get("Content-Encoding") != "" || rec.Body.Len() >= 1024 {
		t.Errorf("healthz: %d bytes, %v", rec.Body.Len(), rec.Header())
	}
	// An upload's answer goes plain.
	req := httptest.NewRequest(http.MethodPost, "/api/v1/imports", strings.NewReader("not,a,bill\n1,2,3\n"))
	req.Header.Set("Accept-Encoding", "gzip")
	req.Header.Set("Authorization", "Bearer "+token)
	if rec := c.do(req); rec.Header().Get("Content-Encoding") != "" {
		t.Errorf("upload answered gzipped: %d %v", rec.Code, rec.Header())
	}
}

// TestSpendAPIDropsFloatNoise imports a bill whose cells were written from
// floating point and checks that GET /api/v1/spend, the chart JSON and the
// CSV write the sums to 10 decimal places, without the noise, while digits
// a bill means (0.0000004) stay.
func TestSpendAPIDropsFloatNoise(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	_, token, err := b.st.CreateAPIToken(ctx(), org.ID, "test", owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	csv := "BilledCost,ChargePeriodStart,BillingCurrency,ProviderName\n" +
		"6.170000000000001,2026-10-05 01:00:00,USD,AWS\n" + // two float-printed halves of 12.34
		"6.1699999999999999,2026-10-05 02:00:00,USD,AWS\n" +
		"0.0000004,2026-10-05 03:00:00,USD,OpenAI\n" +
		"0.1,2026-10-06 01:00:00,USD,AWS\n0.2,2026-10-06 02:00:00,USD,AWS\n"
	im := ingest.NewImporter(b.st, ingest.PriceTable(pricing.DefaultLLMPrices()), pricing.DefaultCatalog())
	if _, err := im.Import(ctx(), ingest.ImportRequest{Org: org, FileName: "bill.csv", Via: "test"}, strings.NewReader(csv)); err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "/api/v1/spend?from=2026-10-05&to=2026-10-06&group_by=provider", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	b.srv.ServeHTTP(rec, req)
	wantStatus(t, rec, http.StatusOK)
	var got struct {
		Days []struct {
			Date   string            `json:"date"`
			Groups map[string]string `json:"groups"`
		} `json:"days"`
		Totals map[string]string `json:"totals"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Days) != 2 || got.Days[0].Groups["AWS"] != "12.34" || got.Days[0].Groups["OpenAI"] != "0.0000004" ||
		got.Days[1].Groups["AWS"] != "0.3" || got.Totals["USD"] != "12.6400004" {
		t.Fatalf("spend = %s", rec.Body)
	}

	c := b.client(t)
	c.login(owner.Email)
	view := "/dashboard?range=custom&from=2026-10-05&to=2026-10-06&group=provider"
	if body := c.get(view + "&format=json").Body.String(); !strings.Contains(body, `"12.34"`) || strings.Contains(body, "12.3400000") {
		t.Errorf("chart JSON: %s", body)
	}
	if body := c.get(view + "&format=csv&table=daily").Body.String(); !strings.Contains(body, "2026-10-05,USD,AWS,12.34\n") {
		t.Errorf("daily CSV: %s", body)
	}
}
