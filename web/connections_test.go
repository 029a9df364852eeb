package web_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/burnrate/burnrate/access"
	"github.com/burnrate/burnrate/app"
	"github.com/burnrate/burnrate/connect"
	"github.com/burnrate/burnrate/seal"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
	"github.com/burnrate/burnrate/web"
)

const testAdminKey = "sk-admin-WEBTEST-secret-7q2x"

// setupConnections is a server whose connections are sealed under a key,
// whose OpenAI is a loopback server accepting testAdminKey, and whose job
// queue is real (nothing works it: the tests look at what is queued).
func setupConnections(t *testing.T) *bundle {
	t.Helper()
	st := storetest.New(t)
	raw := make([]byte, 32)
	rand.Read(raw)
	key, err := seal.ParseKey("SECRET_KEY", base64.StdEncoding.EncodeToString(raw))
	if err != nil {
		t.Fatal(err)
	}
	openai := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+testAdminKey {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":{"message":"Incorrect API key provided"}}`)
			return
		}
		io.WriteString(w, `{"object":"page","data":[],"has_more":false,"next_page":null}`)
	}))
	t.Cleanup(openai.Close)
	a := testApp(st, app.Config{SecretKey: key, OpenAIURL: openai.URL})
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	return &bundle{st: st, srv: web.NewServer(log, a, web.Config{Now: testClock})}
}

func queuedSyncs(t *testing.T, st *store.Store) int {
	t.Helper()
	var n int
	if err := st.Pool().QueryRow(ctx(), `SELECT count(*) FROM river_job WHERE kind = 'connection_sync' AND state = 'available'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// An admin adds a connection in the browser: the key is never shown again,
// the first pull is queued, Test calls the provider, and pause, sync and
// delete work; errors name the field.
func TestConnectionsPage(t *testing.T) {
	t.Parallel()
	b := setupConnections(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	c := b.client(t)
	c.login(owner.Email)
	rec := c.get("/connections")
	wantStatus(t, rec, http.StatusOK)
	if doc(t, rec).Find(`[data-testid=connection-form]`).Length() != 1 || doc(t, rec).Find(`[data-testid=key-missing]`).Length() != 0 {
		t.Fatal("the owner has no add form, or is told the key is missing")
	}

	rec = c.post("/connections", url.Values{"name": {"OpenAI prod"}, "kind": {"openai"}, "api_key": {testAdminKey}, "restate_days": {"1e999999"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	if msg := doc(t, rec).Find(`[data-testid=field-error]`).Text(); !strings.Contains(msg, "Restate_days") && !strings.Contains(msg, "counts") {
		t.Errorf("bad restate days: %q", msg)
	}
	if strings.Contains(rec.Body.String(), testAdminKey) {
		t.Fatal("the refused form echoes the key")
	}

	rec = c.post("/connections", url.Values{"name": {"OpenAI prod"}, "kind": {"openai"}, "api_key": {testAdminKey}, "start_date": {"2026-11-01"}})
	wantStatus(t, rec, http.StatusSeeOther)
	if queuedSyncs(t, b.st) != 1 {
		t.Fatal("the first pull was not queued")
	}
	rec = c.get("/connections")
	body := rec.Body.String()
	if strings.Contains(body, testAdminKey) || strings.Contains(body, "WEBTEST") {
		t.Fatal("the page shows the key")
	}
	d := doc(t, rec)
	if d.Find(`[data-testid=connection-row]`).Length() != 1 || !strings.Contains(d.Find(`[data-testid=connection-row]`).Text(), "…7q2x") ||
		!strings.Contains(d.Find(`[data-testid=flash]`).Text(), "will not be shown again") {
		t.Fatalf("page after adding:\n%s", d.Find("main").Text())
	}
	conn, err := b.st.ConnectionByName(ctx(), org.ID, "openai prod")
	if err != nil {
		t.Fatal(err)
	}
	id := itoa(conn.ID)

	wantStatus(t, c.post("/connections/"+id+"/test", nil), http.StatusSeeOther)
	if f := flashOf(t, c); !strings.Contains(f, "the test call succeeded") {
		t.Fatalf("test flash %q", f)
	}
	// A second sync while one is queued is not queued twice.
	wantStatus(t, c.post("/connections/"+id+"/sync", nil), http.StatusSeeOther)
	if queuedSyncs(t, b.st) != 1 {
		t.Fatal("a connection was queued twice")
	}
	wantStatus(t, c.post("/connections/"+id+"/pause", nil), http.StatusSeeOther)
	if got := doc(t, c.get("/connections")).Find(`[data-testid=connection-next]`).Text(); got != "paused" {
		t.Fatalf("next run %q after pausing", got)
	}
	rec = c.post("/connections", url.Values{"name": {"openai PROD"}, "kind": {"openai"}, "api_key": {testAdminKey}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantStatus(t, c.post("/connections/"+id+"/delete", nil), http.StatusSeeOther)
	if doc(t, c.get("/connections")).Find(`[data-testid=connection-row]`).Length() != 0 {
		t.Fatal("not deleted")
	}
}

// Members see connections but change nothing; another org's connection is
// a 404.
func TestConnectionsAdminsOnly(t *testing.T) {
	t.Parallel()
	b := setupConnections(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	owners := b.client(t)
	owners.login(owner.Email)
	owners.get("/connections")
	wantStatus(t, owners.post("/connections", url.Values{"name": {"Claude"}, "kind": {"anthropic"}, "api_key": {"sk-ant-admin-abcdefgh"}}), http.StatusSeeOther)
	conn, err := b.st.ConnectionByName(ctx(), org.ID, "Claude")
	if err != nil {
		t.Fatal(err)
	}
	member := storetest.Member(t, b.st, org, access.Member)
	c := b.client(t)
	c.login(member.Email)
	rec := c.get("/connections")
	wantStatus(t, rec, http.StatusOK)
	if doc(t, rec).Find(`[data-testid=connection-form], [data-testid=connection-delete]`).Length() != 0 {
		t.Fatal("a member sees the admin's controls")
	}
	for _, p := range []string{"/connections", "/connections/" + itoa(conn.ID) + "/delete", "/connections/" + itoa(conn.ID) + "/sync",
		"/connections/" + itoa(conn.ID) + "/test", "/connections/" + itoa(conn.ID) + "/pause"} {
		wantStatus(t, c.post(p, url.Values{"name": {"x"}, "kind": {"openai"}, "api_key": {"k"}}), http.StatusForbidden)
	}
	_, stranger := storetest.Org(t, b.st, storetest.OrgOpts{})
	s := b.client(t)
	s.login(stranger.Email)
	s.get("/connections")
	wantStatus(t, s.post("/connections/"+itoa(conn.ID)+"/delete", nil), http.StatusNotFound)
	if _, err := b.st.Connection(ctx(), org.ID, conn.ID); err != nil {
		t.Fatal("another org deleted the connection")
	}
}

func TestConnectionsWithoutSecretKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	c := b.client(t)
	c.login(owner.Email)
	rec := c.get("/connections")
	if doc(t, rec).Find(`[data-testid=key-missing]`).Length() != 1 {
		t.Fatal("the page does not say SECRET_KEY is missing")
	}
	rec = c.post("/connections", url.Values{"name": {"OpenAI"}, "kind": {"openai"}, "api_key": {testAdminKey}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	if !strings.Contains(rec.Body.String(), "SECRET_KEY is not set") {
		t.Fatal("no clear message without SECRET_KEY")
	}
}

// The API creates, lists, syncs and deletes; the key goes in and never
// comes out.
func TestConnectionsAPI(t *testing.T) {
	t.Parallel()
	b := setupConnections(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	_, token, err := b.st.CreateAPIToken(ctx(), org.ID, "ci", owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	call := func(method, path, body string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		b.srv.ServeHTTP(rec, apiRequest(method, path, token, body))
		return rec
	}
	rec := call(http.MethodPost, "/api/v1/connections", `{"name":"OpenAI","kind":"openai","api_key":"`+testAdminKey+`","start_date":"2026-10-01","restate_days":5}`)
	wantStatus(t, rec, http.StatusCreated)
	if strings.Contains(rec.Body.String(), "WEBTEST") {
		t.Fatal("the answer holds the key")
	}
	var v connect.View
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil || v.Settings.RestateDays != 5 || v.SecretHint != "…7q2x" {
		t.Fatalf("created %s (%v)", rec.Body, err)
	}
	rec = call(http.MethodPost, "/api/v1/connections", `{"name":"x","kind":"gcp","api_key":"k"}`)
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	if !strings.Contains(rec.Body.String(), "kind") {
		t.Fatalf("bad kind: %s", rec.Body)
	}
	rec = call(http.MethodGet, "/api/v1/connections", "")
	wantStatus(t, rec, http.StatusOK)
	if !strings.Contains(rec.Body.String(), `"name":"OpenAI"`) || strings.Contains(rec.Body.String(), "WEBTEST") || strings.Contains(rec.Body.String(), "v1.") {
		t.Fatalf("list %s", rec.Body)
	}
	path := fmt.Sprintf("/api/v1/connections/%d", v.ID)
	rec = call(http.MethodPost, path+"/sync", "")
	wantStatus(t, rec, http.StatusAccepted)
	if !strings.Contains(rec.Body.String(), `"queued":false`) { // the create queued one already
		t.Fatalf("sync %s", rec.Body)
	}
	other, otherOwner := storetest.Org(t, b.st, storetest.OrgOpts{})
	_, otherToken, _ := b.st.CreateAPIToken(ctx(), other.ID, "ci", otherOwner.ID)
	rec = httptest.NewRecorder()
	b.srv.ServeHTTP(rec, apiRequest(http.MethodDelete, path, otherToken, ""))
	wantStatus(t, rec, http.StatusNotFound)
	wantStatus(t, call(http.MethodDelete, path, ""), http.StatusNoContent)
	wantStatus(t, call(http.MethodDelete, path, ""), http.StatusNotFound)
}

// longSyncError is a last error as long as a real one: a provider's
// refusal with its explanation.
const longSyncError = "Azure Storage: could not reach burnrateexportsprodwesteurope.blob.core.windows.net: the name does not resolve " +
	"(check the storage account name); tried four times over a minute, and the next run is in six hours unless Sync now is pressed"

// addFailedConnection adds a connection to org whose last run failed with
// longSyncError, as the sync job records it.
func addFailedConnection(t *testing.T, st *store.Store, orgID int64) {
	t.Helper()
	c, err := st.CreateConnection(ctx(), store.NewConnection{OrgID: orgID, Name: "Azure exports", Kind: "azure-blob",
		Settings: json.RawMessage(`{"account":"burnrateexportsprodwesteurope","container":"exports","prefix":"cost/daily"}`),
		Secret:   "sealed", SecretHint: "…4w=="})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if _, err := st.RecordConnectionRun(ctx(), orgID, c.ID, store.ConnectionRun{At: now, Status: "failed", Error: longSyncError, NextRunAt: now.Add(6 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
}

// TestConnectionsLongError: a long last error is clamped within its cell
// with the whole text as its title, the key hint never wraps, and the nav
// marks Connections, not Imports.
func TestConnectionsLongError(t *testing.T) {
	t.Parallel()
	b := setupConnections(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	addFailedConnection(t, b.st, org.ID)
	c := b.client(t)
	c.login(owner.Email)
	rec := c.get("/connections")
	wantStatus(t, rec, http.StatusOK)
	d := doc(t, rec)
	e := d.Find(`[data-testid=connection-error]`)
	if title, _ := e.Attr("title"); title != longSyncError || !e.HasClass("clamp") || e.Parent().HasClass("nowrap") {
		t.Errorf("last error: title %q, class %q, cell class %q", title, e.AttrOr("class", ""), e.Parent().AttrOr("class", ""))
	}
	if h := d.Find(`[data-testid=connection-row] code`); h.Text() != "…4w==" || !h.HasClass("nowrap") {
		t.Errorf("key hint %q wraps (class %q)", h.Text(), h.AttrOr("class", ""))
	}
	if cur := d.Find(`nav a[aria-current=page]`); cur.Length() != 1 || cur.AttrOr("href", "") != "/connections" {
		t.Errorf("nav marks %q on /connections", cur.AttrOr("href", ""))
	}
}

// TestConnectionsAzureFormAllErrors: a blank Azure form marks every field
// it lacks at once.
func TestConnectionsAzureFormAllErrors(t *testing.T) {
	t.Parallel()
	b := setupConnections(t)
	_, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	c := b.client(t)
	c.login(owner.Email)
	rec := c.post("/connections", url.Values{"name": {"Azure"}, "kind": {"azure-blob"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	d := doc(t, rec)
	for _, name := range []string{"account", "container", "account_key"} {
		if v, _ := d.Find(`[data-testid=azure-fields] [name=` + name + `]`).Attr("aria-invalid"); v != "true" {
			t.Errorf("%s not marked invalid", name)
		}
	}
	if n := d.Find(`[data-testid=field-error]`).Length(); n != 3 {
		t.Errorf("%d field errors, want 3: %q", n, d.Find(`[data-testid=field-error]`).Text())
	}
}

// gcpKeyJSON is a service account key as Google's console downloads it.
func gcpKeyJSON(t *testing.T) string {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": "acme-billing", "private_key_id": "0123456789abcdef",
		"private_key": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), "client_email": "reader@acme-billing.iam.gserviceaccount.com"})
	return string(b)
}

// An admin adds a GCP connection in the browser, with the key's JSON in a
// text area; the table and the key are refused naming their fields; the
// bytes BigQuery billed for the last pull show on the page and in the API.
func TestConnectionsGCP(t *testing.T) {
	t.Parallel()
	b := setupConnections(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	c := b.client(t)
	c.login(owner.Email)
	d := doc(t, c.get("/connections"))
	if d.Find(`[data-testid=gcp-fields] textarea[name=service_account_json]`).Length() != 1 || d.Find(`option[value=gcp-bigquery]`).Length() != 1 {
		t.Fatal("no GCP fields")
	}
	key := gcpKeyJSON(t)
	rec := c.post("/connections", url.Values{"name": {"GCP"}, "kind": {"gcp-bigquery"}, "table": {"billing"}, "service_account_json": {`{"type": "user"}`}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	if n := doc(t, rec).Find(`[data-testid=gcp-fields] [data-testid=field-error]`).Length(); n != 2 {
		t.Fatalf("%d field errors in the GCP fields, want the table's and the key's: %s", n, doc(t, rec).Find("form").Text())
	}
	rec = c.post("/connections", url.Values{"name": {"GCP"}, "kind": {"gcp-bigquery"}, "table": {"acme-billing.billing.gcp_billing_export_v1_01A2B3_C4D5E6_F7A8B9"},
		"service_account_json": {key}, "gcp_start_date": {"2026-10-01"}, "gcp_restate_days": {"5"}})
	wantStatus(t, rec, http.StatusSeeOther)
	conn, err := b.st.ConnectionByName(ctx(), org.ID, "GCP")
	if err != nil {
		t.Fatal(err)
	}
	v := connect.ViewOf(conn)
	if v.Settings.Table != "acme-billing.billing.gcp_billing_export_v1_01A2B3_C4D5E6_F7A8B9" || v.Settings.StartDate != "2026-10-01" ||
		v.Settings.RestateDays != 5 || v.SecretHint != "reader@acme-billing.iam.gserviceaccount.com (key 01234567…)" {
		t.Fatalf("saved %+v", v)
	}
	// A pull that BigQuery billed 10 MB for.
	_, err = b.st.RecordConnectionRun(ctx(), org.ID, conn.ID, store.ConnectionRun{At: time.Now(), Status: "ok", Rows: 140,
		NextRunAt: time.Now().Add(time.Hour), State: json.RawMessage(`{"synced_through":"2026-11-21","bytes_billed":10485760}`)})
	if err != nil {
		t.Fatal(err)
	}
	page := c.get("/connections")
	if strings.Contains(page.Body.String(), "PRIVATE KEY") {
		t.Fatal("the page shows the key")
	}
	if got := strings.TrimSpace(doc(t, page).Find(`[data-testid=connection-bytes-billed]`).Text()); got != "10.5 MB billed" {
		t.Fatalf("bytes billed %q", got)
	}
	_, token, _ := b.st.CreateAPIToken(ctx(), org.ID, "ci", owner.ID)
	api := httptest.NewRecorder()
	b.srv.ServeHTTP(api, apiRequest(http.MethodGet, "/api/v1/connections", token, ""))
	var list struct {
		Connections []struct {
			Kind            string `json:"kind"`
			LastBytesBilled *int64 `json:"last_bytes_billed"`
		} `json:"connections"`
	}
	if err := json.Unmarshal(api.Body.Bytes(), &list); err != nil || len(list.Connections) != 1 || list.Connections[0].Kind != "gcp-bigquery" ||
		list.Connections[0].LastBytesBilled == nil || *list.Connections[0].LastBytesBilled != 10<<20 || strings.Contains(api.Body.String(), "PRIVATE") {
		t.Fatalf("API list %s", api.Body)
	}
}

// TestReplaceKey: a connection whose key was revoked gets a new one pasted
// on the page (the fix its failure mail names): checked as when added,
// never shown back, a pull queued with it; the API does the same, and
// refuses a key that cannot be one naming the field.
func TestReplaceKey(t *testing.T) {
	t.Parallel()
	b := setupConnections(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	c := b.client(t)
	c.login(owner.Email)
	c.get("/connections")
	wantStatus(t, c.post("/connections", url.Values{"name": {"OpenAI prod"}, "kind": {"openai"}, "api_key": {"sk-admin-REVOKED-0000"}}),
		http.StatusSeeOther)
	conn, err := b.st.ConnectionByName(ctx(), org.ID, "OpenAI prod")
	if err != nil {
		t.Fatal(err)
	}
	id := itoa(conn.ID)
	wantStatus(t, c.post("/connections/"+id+"/test", nil), http.StatusSeeOther)
	if f := flashOf(t, c); !strings.Contains(f, "the test failed") {
		t.Fatalf("the revoked key's test: %q", f)
	}
	if d := doc(t, c.get("/connections")); d.Find(`[data-testid=connection-key]`).Length() != 1 {
		t.Fatal("no Replace key form for the admin")
	}
	rec := c.post("/connections/"+id+"/key", url.Values{"api_key": {"has a space"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	if msg := doc(t, rec).Find(`[data-testid=connection-key-error]`).Text(); !strings.Contains(msg, "printable ASCII") {
		t.Errorf("refused key: %q", msg)
	}
	wantStatus(t, c.post("/connections/"+id+"/key", url.Values{"api_key": {testAdminKey}}), http.StatusSeeOther)
	if f := flashOf(t, c); !strings.Contains(f, "a pull with it is queued") {
		t.Errorf("flash %q", f)
	}
	body := c.get("/connections").Body.String()
	if strings.Contains(body, testAdminKey) || !strings.Contains(body, "…7q2x") {
		t.Error("the page shows the new key, or not its hint")
	}
	wantStatus(t, c.post("/connections/"+id+"/test", nil), http.StatusSeeOther)
	if f := flashOf(t, c); !strings.Contains(f, "the test call succeeded") {
		t.Errorf("the new key's test: %q", f)
	}

	_, token, _ := b.st.CreateAPIToken(ctx(), org.ID, "ci", owner.ID)
	rec = httptest.NewRecorder()
	b.srv.ServeHTTP(rec, apiRequest(http.MethodPut, "/api/v1/connections/"+id+"/key", token, `{"api_key": ""}`))
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "api_key") {
		t.Errorf("API, empty key: %d %s", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	b.srv.ServeHTTP(rec, apiRequest(http.MethodPut, "/api/v1/connections/"+id+"/key", token, `{"api_key": "`+testAdminKey+`"}`))
	wantStatus(t, rec, http.StatusOK)
	if strings.Contains(rec.Body.String(), testAdminKey) {
		t.Error("the API answers with the key")
	}
}

// The form offers every kind package connect knows (connect.Kinds, its
// registry), each with fields of its own: a kind added there and not to
// the form fails here.
func TestConnectionsFormOffersEveryKind(t *testing.T) {
	t.Parallel()
	b := setupConnections(t)
	_, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	c := b.client(t)
	c.login(owner.Email)
	form := doc(t, c.get("/connections")).Find(`[data-testid=connection-form]`)
	for _, kind := range connect.Kinds() {
		if form.Find(`select[name=kind] option[value="`+kind+`"]`).Length() != 1 {
			t.Errorf("no option for %s", kind)
		}
		fields := 0
		form.Find(`fieldset[data-kind-fields]`).Each(func(_ int, f *goquery.Selection) {
			if slices.Contains(strings.Fields(f.AttrOr("data-kind-fields", "")), kind) {
				fields++
			}
		})
		if fields != 1 {
			t.Errorf("%s has %d fieldsets", kind, fields)
		}
	}
}
