package web_test

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/access"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

const focusSample = "../ingest/testdata/exports/focus/focus_sample_1.0.csv"

// multipartUpload builds a multipart body with files under "file".
func multipartUpload(t *testing.T, fields map[string]string, files map[string][]byte) (*bytes.Buffer, string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		w.WriteField(k, v)
	}
	for name, body := range files {
		fw, err := w.CreateFormFile("file", name)
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(body)
	}
	w.Close()
	return &buf, w.FormDataContentType()
}

func TestUploadShowsResultAndHistory(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	c := b.client(t)
	c.login(owner.Email)
	rec := c.get("/imports")
	wantStatus(t, rec, http.StatusOK)
	if doc(t, rec).Find(`[data-testid=upload-form]`).Length() != 1 {
		t.Fatal("no upload form")
	}
	sample, err := os.ReadFile(focusSample)
	if err != nil {
		t.Fatal(err)
	}
	body, ctype := multipartUpload(t, map[string]string{"_csrf": c.csrf}, map[string][]byte{
		"focus.csv": sample,
		"bad.csv":   []byte("BilledCost,ChargePeriodStart,ChargePeriodEnd,BillingCurrency\nabc,2024-01-01,2024-01-02,USD\n"),
	})
	req := httptest.NewRequest(http.MethodPost, "/imports", body)
	req.Header.Set("Content-Type", ctype)
	rec = c.do(req)
	wantStatus(t, rec, http.StatusOK)
	d := doc(t, rec)
	if got := strings.TrimSpace(d.Find(`[data-testid=import-source]`).Text()); got != "focus" {
		t.Fatalf("detected source = %q, want focus", got)
	}
	if got := strings.TrimSpace(d.Find(`[data-testid=import-rows]`).Text()); got != "1000" {
		t.Fatalf("rows = %q, want 1000", got)
	}
	errText := d.Find(`[data-testid=import-error]`).Text()
	if !strings.Contains(errText, "bad.csv") || !strings.Contains(errText, "line 2") {
		t.Fatalf("bad file's error = %q, want file and line", errText)
	}
	if n := d.Find(`[data-testid=import-row]`).Length(); n != 2 {
		t.Fatalf("history rows = %d, want 2 (one failed)", n)
	}

	// htmx gets a fragment, with the history swapped out of band.
	body, ctype = multipartUpload(t, nil, map[string][]byte{"focus.csv": sample})
	req = httptest.NewRequest(http.MethodPost, "/imports", body)
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("HX-Request", "true")
	req.Header.Set("X-CSRF-Token", c.csrf)
	rec = c.do(req)
	wantStatus(t, rec, http.StatusOK)
	if strings.Contains(rec.Body.String(), "<html") {
		t.Fatal("htmx upload got a whole page")
	}
	if doc(t, rec).Find(`[data-testid=import-duplicate]`).Length() != 1 {
		t.Fatalf("re-upload not reported as duplicate: %s", rec.Body)
	}
}

func TestViewerCannotUpload(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, _ := storetest.Org(t, b.st, storetest.OrgOpts{})
	viewer := storetest.Member(t, b.st, org, access.Viewer)
	c := b.client(t)
	c.login(viewer.Email)
	rec := c.get("/imports")
	if doc(t, rec).Find(`[data-testid=upload-form]`).Length() != 0 {
		t.Fatal("viewer sees the upload form")
	}
	body, ctype := multipartUpload(t, map[string]string{"_csrf": c.csrf}, map[string][]byte{"x.csv": []byte("a\n1\n")})
	req := httptest.NewRequest(http.MethodPost, "/imports", body)
	req.Header.Set("Content-Type", ctype)
	wantStatus(t, c.do(req), http.StatusForbidden)
}

func TestAPIImport(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	_, token, _ := b.st.CreateAPIToken(ctx(), org.ID, "ci", owner.ID)
	sample, _ := os.ReadFile(focusSample)

	post := func(body []byte, query string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/imports"+query, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "text/csv")
		rec := httptest.NewRecorder()
		b.srv.ServeHTTP(rec, req)
		return rec
	}
	rec := post(sample, "?filename=focus.csv")
	wantStatus(t, rec, http.StatusCreated)
	var res struct {
		ID          int64             `json:"id"`
		Source      string            `json:"source"`
		Rows        int64             `json:"rows"`
		PeriodStart string            `json:"period_start"`
		PeriodEnd   string            `json:"period_end"`
		Duplicate   bool              `json:"duplicate"`
		Totals      map[string]string `json:"totals"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if res.Source != "focus" || res.Rows != 1000 || res.Duplicate || res.Totals["USD"] == "" || res.PeriodStart == "" {
		t.Fatalf("import = %s", rec.Body)
	}
	rec = post(sample, "")
	wantStatus(t, rec, http.StatusOK)
	if !strings.Contains(rec.Body.String(), `"duplicate":true`) {
		t.Fatalf("second upload = %s, want duplicate", rec.Body)
	}

	// A bad value: 422 with line and column, and nothing written.
	rec = post([]byte("BilledCost,ChargePeriodStart,ChargePeriodEnd,BillingCurrency\n1,2024-01-01,2024-01-02,USD\n12;5,2024-01-01,2024-01-02,USD\n"), "?filename=bad.csv")
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	var apiErr struct {
		Error  string `json:"error"`
		Line   int    `json:"line"`
		Column string `json:"column"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &apiErr); err != nil || apiErr.Line != 3 || apiErr.Column != "BilledCost" || !strings.Contains(apiErr.Error, "bad.csv") {
		t.Fatalf("error = %s", rec.Body)
	}
	rec = post(nil, "?filename=empty.csv")
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	if !strings.Contains(rec.Body.String(), "0 bytes") {
		t.Fatalf("empty upload error = %s", rec.Body)
	}
	rec = post(sample, "?source=nonsense")
	wantStatus(t, rec, http.StatusUnprocessableEntity)

	// Multipart works too; the import is listed with its status.
	body, ctype := multipartUpload(t, nil, map[string][]byte{"gcp.csv": mustRead(t, "../ingest/testdata/exports/gcp/202011_30c31bca571d9b7f3b2c8459dd8bc34a_2020-11-08_2020-11-11.csv")})
	req := httptest.NewRequest(http.MethodPost, "/api/v1/imports", body)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", ctype)
	rec = httptest.NewRecorder()
	b.srv.ServeHTTP(rec, req)
	wantStatus(t, rec, http.StatusCreated)
	if !strings.Contains(rec.Body.String(), `"source":"gcp-billing"`) {
		t.Fatalf("multipart import = %s", rec.Body)
	}
	// Parquet as the raw body (spooled to disk past 64 KB) and as
	// multipart: read in place, the same rows and totals as its CSV twin.
	pq := mustRead(t, "../ingest/testdata/parquet/cur2_data_export.parquet")
	rec = post(pq, "?filename=cur2.parquet")
	wantStatus(t, rec, http.StatusCreated)
	if !strings.Contains(rec.Body.String(), `"source":"aws-cur2"`) || !strings.Contains(rec.Body.String(), `"rows":200`) {
		t.Fatalf("Parquet import = %s", rec.Body)
	}
	body, ctype = multipartUpload(t, nil, map[string][]byte{"cur2.csv": mustRead(t, "../ingest/testdata/parquet/cur2_data_export.csv")})
	req = httptest.NewRequest(http.MethodPost, "/api/v1/imports", body)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", ctype)
	csvRec := httptest.NewRecorder()
	b.srv.ServeHTTP(csvRec, req)
	wantStatus(t, csvRec, http.StatusCreated)
	totals := func(body []byte) string {
		var r struct {
			Totals map[string]string `json:"totals"`
		}
		_ = json.Unmarshal(body, &r)
		return r.Totals["USD"]
	}
	if totals(rec.Body.Bytes()) == "" || totals(rec.Body.Bytes()) != totals(csvRec.Body.Bytes()) {
		t.Fatalf("Parquet totals %s, CSV %s", rec.Body, csvRec.Body)
	}
	rec = post(pq[:len(pq)-100], "?filename=cut.parquet")
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	if !strings.Contains(rec.Body.String(), "cut.parquet: corrupt Parquet data") {
		t.Fatalf("cut Parquet = %s", rec.Body)
	}
	rec = httptest.NewRecorder()
	b.srv.ServeHTTP(rec, apiRequest(http.MethodGet, "/api/v1/imports", token, ""))
	wantStatus(t, rec, http.StatusOK)
	if strings.Count(rec.Body.String(), `"status":"failed"`) != 3 || strings.Count(rec.Body.String(), `"status":"succeeded"`) != 4 {
		t.Fatalf("import list = %s", rec.Body)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestUploadTooLarge(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	org, owner := storetest.Org(t, st, storetest.OrgOpts{})
	_, token, _ := st.CreateAPIToken(ctx(), org.ID, "ci", owner.ID)
	srv := newServerWithLimit(st, 1<<20)
	req := httptest.NewRequest(http.MethodPost, "/api/v1/imports", bytes.NewReader(make([]byte, 2<<20)))
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	wantStatus(t, rec, http.StatusRequestEntityTooLarge)
	if !strings.Contains(rec.Body.String(), "MAX_UPLOAD_MB") {
		t.Fatalf("too large = %s", rec.Body)
	}
}

// TestImportPricesUsageAtNegotiatedRates uploads an OpenAI usage export (no
// costs in it) for an org with a negotiated gpt-4.1-mini price: the rows are
// priced at that rate, not the list price.
func TestImportPricesUsageAtNegotiatedRates(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	_, token, _ := b.st.CreateAPIToken(ctx(), org.ID, "ci", owner.ID)
	usage := "start_time,end_time,start_time_iso,end_time_iso,project_id,num_model_requests,api_key_id,model,input_tokens,output_tokens,input_cached_tokens\n" +
		"1761523200,1761609600,2025-10-27T00:00:00+00:00,2025-10-28T00:00:00+00:00,proj_a,10.0,key_a,gpt-4.1-mini,1000000,1000000,0\n"
	post := func(name string) string {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/imports?filename="+name, strings.NewReader(usage))
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		b.srv.ServeHTTP(rec, req)
		wantStatus(t, rec, http.StatusCreated)
		var res struct{ Totals map[string]string }
		json.Unmarshal(rec.Body.Bytes(), &res)
		return res.Totals["USD"]
	}
	// List price: $0.40 in + $1.60 out per 1M tokens.
	if got := post("list.csv"); got != "2" {
		t.Fatalf("at list prices total = %s, want 2", got)
	}
	if _, err := b.st.UpsertLLMPriceOverride(ctx(), org.ID, owner.ID, store.LLMPriceOverrideInput{
		Model: "gpt-4.1-mini", Input: decimal.RequireFromString("0.1"), Output: decimal.RequireFromString("0.4"),
	}); err != nil {
		t.Fatal(err)
	}
	usage += "\n" // another file: the bucket is restated at the new price
	if got := post("negotiated.csv"); got != "0.5" {
		t.Fatalf("at negotiated prices total = %s, want 0.5", got)
	}
}

// TestUnknownFormatOffersMapping: a file in no known format fails saying,
// in plain words, which formats it is not, and offers to map its columns;
// the mapping page shows its header and first rows as choices, dates are
// chosen by example, and the file then imports as generic, amounts written
// as currency included.
func TestUnknownFormatOffersMapping(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	c := b.client(t)
	c.login(owner.Email)
	c.get("/imports")
	sheet := []byte("Datum;Betrag;Währung;Dienst;Team\n" +
		"31.01.2026;\"1.234,56 €\";EUR;GPU-Miete;ml\n" +
		"01.02.2026;\"(12,50) €\";EUR;Gutschrift;ml\n")
	sheet = bytes.ReplaceAll(sheet, []byte(";"), []byte(","))
	upload := func(fields map[string]string) *httptest.ResponseRecorder {
		fields["_csrf"] = c.csrf
		body, ctype := multipartUpload(t, fields, map[string][]byte{"kosten.csv": sheet})
		req := httptest.NewRequest(http.MethodPost, "/imports", body)
		req.Header.Set("Content-Type", ctype)
		return c.do(req)
	}
	rec := upload(map[string]string{})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	d := doc(t, rec)
	msg := d.Find(`[data-testid=import-error]`).Text()
	for _, w := range []string{"kosten.csv: unrecognised header", "It is not an AWS CUR (no lineItem/UnblendedCost column)",
		"not a Google Cloud billing export", "not an Azure cost export", "map its columns"} {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q lacks %q", msg, w)
		}
	}
	if strings.Contains(msg, "--source") {
		t.Errorf("the browser's error names a CLI flag: %q", msg)
	}
	link, ok := d.Find(`[data-testid=map-columns]`).Attr("href")
	if !ok || !strings.HasPrefix(link, "/imports/mapping?import=") {
		t.Fatalf("no mapping link: %q", link)
	}

	rec = c.get(link)
	wantStatus(t, rec, http.StatusOK)
	d = doc(t, rec)
	if got := d.Find(`[data-testid=mapping-preview] th`).Length(); got != 5 {
		t.Fatalf("preview header cells = %d", got)
	}
	if !strings.Contains(d.Find(`[data-testid=mapping-preview] tbody`).Text(), "1.234,56 €") {
		t.Fatal("preview lacks the first rows")
	}
	var opts []string
	d.Find(`[data-testid=mapping-cost] option`).Each(func(_ int, s *goquery.Selection) { opts = append(opts, s.AttrOr("value", "")) })
	if strings.Join(opts, "|") != "|Datum|Betrag|Währung|Dienst|Team" {
		t.Fatalf("cost column choices = %q", opts)
	}
	if !strings.Contains(d.Find(`[data-testid=date-format]`).Text(), "31.01.2026") ||
		!strings.Contains(d.Find(`[data-testid=date-format]`).Text(), "01/31/2026") {
		t.Fatalf("date formats = %q", d.Find(`[data-testid=date-format]`).Text())
	}
	importID := strings.TrimPrefix(link, "/imports/mapping?import=")

	// A column the file does not have is refused.
	form := url.Values{"import": {importID}, "date": {"Datum"}, "cost": {"Preis"}, "currency": {"Währung"}}
	wantStatus(t, c.post("/imports/mapping", form), http.StatusUnprocessableEntity)
	form = url.Values{"import": {importID}, "date": {"Datum"}, "date_format": {"02.01.2006"}, "cost": {"Betrag"},
		"decimal_separator": {","}, "currency": {"Währung"}, "service": {"Dienst"}, "tag": {"Team"}, "provider_name": {"Hetzner"}}
	wantStatus(t, c.post("/imports/mapping", form), http.StatusOK)
	m, err := b.st.ColumnMapping(ctx(), org.ID)
	if err != nil || m.DecimalSeparator != "," || m.DateFormat != "02.01.2006" || m.Provider != "Hetzner" || len(m.Tags) != 1 {
		t.Fatalf("saved mapping %+v, %v", m, err)
	}

	rec = upload(map[string]string{"source": "generic"})
	wantStatus(t, rec, http.StatusOK)
	d = doc(t, rec)
	if got := d.Find(`[data-testid=import-total]`).Text(); got != "1,222.06 EUR" {
		t.Fatalf("total = %q, want 1,222.06 EUR (1.234,56 less 12,50): %s", got, d.Find(`[data-testid=import-error]`).Text())
	}

	// Another org's import is no preview of this org's.
	other, otherOwner := storetest.Org(t, b.st, storetest.OrgOpts{})
	_ = other
	oc := b.client(t)
	oc.login(otherOwner.Email)
	wantStatus(t, oc.get(link), http.StatusNotFound)
	wantStatus(t, c.get("/imports/mapping?import=abc"), http.StatusNotFound)
}

// TestImportShowsShortRows: rows missing only optional trailing columns are
// counted, on the upload's result, the import's page and in the API's JSON.
func TestImportShowsShortRows(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	c := b.client(t)
	c.login(owner.Email)
	file := []byte("BilledCost,ChargePeriodStart,ServiceName,BillingCurrency\n1,2024-01-01,Compute,USD\n2,2024-01-02,Storage\n3,2024-01-03\n")
	body, ctype := multipartUpload(t, map[string]string{"_csrf": c.csrf}, map[string][]byte{"resaved.csv": file})
	req := httptest.NewRequest(http.MethodPost, "/imports", body)
	req.Header.Set("Content-Type", ctype)
	rec := c.do(req)
	wantStatus(t, rec, http.StatusOK)
	if got := doc(t, rec).Find(`[data-testid=import-short]`).Text(); !strings.Contains(got, "Read 2 rows") {
		t.Fatalf("short rows on the result = %q", got)
	}
	imps, err := b.st.Imports(ctx(), org.ID, 10)
	if err != nil || len(imps) != 1 {
		t.Fatalf("imports %v, %v", imps, err)
	}
	page := c.get("/imports/" + itoa(imps[0].ID))
	wantStatus(t, page, http.StatusOK)
	if got := doc(t, page).Find(`[data-testid=import-short]`).Text(); !strings.Contains(got, "2 stopped before") {
		t.Fatalf("short rows on the import's page = %q", got)
	}
	_, token, _ := b.st.CreateAPIToken(ctx(), org.ID, "ci", owner.ID)
	api := httptest.NewRequest(http.MethodPost, "/api/v1/imports?filename=other.csv", bytes.NewReader(append(file, "4,2024-01-04,Network\n"...)))
	api.Header.Set("Authorization", "Bearer "+token)
	api.Header.Set("Content-Type", "text/csv")
	rec = httptest.NewRecorder()
	b.srv.ServeHTTP(rec, api)
	wantStatus(t, rec, http.StatusCreated)
	var res struct {
		ShortRows *int64 `json:"short_rows"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil || res.ShortRows == nil || *res.ShortRows != 3 {
		t.Fatalf("API answer %s", rec.Body)
	}
}
