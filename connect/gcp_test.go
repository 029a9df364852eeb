package connect_test

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/connect"
	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// This file's fake BigQuery answers the REST calls the official client
// makes, in their documented shapes: Google's OAuth token endpoint (a JWT
// signed with the service account's key), tables.get, jobs.insert,
// jobs.get and jobs.getQueryResults with paging. It holds billing export
// rows and runs the one query a GCP connection sends, reading the selected
// columns and the date parameters from it.

const gcpTable = "acme-billing.billing_export.gcp_billing_export_v1_01A2B3_C4D5E6_F7A8B9"

type bqCredit struct {
	name, typ, amount string
}

// bqRow is one row of the billing export.
type bqRow struct {
	account, service, serviceID, sku, skuID, project, region, currency string
	start                                                              time.Time // the hour
	cost, costAtList, usage, unit                                      string
	labels                                                             [][2]string
	credits                                                            []bqCredit
	exported                                                           time.Time // its partition
}

type bqJob struct {
	id, sql    string
	params     map[string]string
	columns    []string
	rows       [][]string
	bytes      int64
	partitions int
}

type fakeBigQuery struct {
	t        *testing.T
	key      *rsa.PrivateKey
	email    string
	tokenURL string
	pageSize int

	mu       sync.Mutex
	rows     []bqRow
	jobs     map[string]*bqJob
	order    []string // job ids, in order
	denied   bool     // jobs.insert answers 403
	badGrant bool     // the token endpoint refuses the key
	tokens   int
	calls    []string // method and path of every BigQuery call
}

func newFakeBigQuery(t *testing.T) (*fakeBigQuery, *httptest.Server) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeBigQuery{t: t, key: key, email: "burnrate-reader@acme-billing.iam.gserviceaccount.com", pageSize: 4, jobs: map[string]*bqJob{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	f.tokenURL = srv.URL + "/token"
	return f, srv
}

// keyJSON is the service account key as Google's console downloads it.
// Its token_uri points elsewhere: the connection must not use it.
func (f *fakeBigQuery) keyJSON(t *testing.T) string {
	der, err := x509.MarshalPKCS8PrivateKey(f.key)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "acme-billing", "private_key_id": "3f2a9c0d17b44e5a8c1b2d3e4f5a6b7c8d9e0f1a",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": f.email, "client_id": "117000000000000000001",
		"auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": "https://token.attacker.example/token",
		"auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
	})
	return string(b)
}

func (f *fakeBigQuery) fail(w http.ResponseWriter, code int, reason, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": msg,
		"errors": []map[string]string{{"reason": reason, "message": msg, "domain": "global"}}, "status": http.StatusText(code)}})
}

func (f *fakeBigQuery) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.URL.Path == "/token" {
		f.token(w, r)
		return
	}
	if r.Header.Get("Authorization") != "Bearer ya29.fake-token" {
		f.fail(w, http.StatusUnauthorized, "authError", "Request had invalid authentication credentials.")
		return
	}
	f.calls = append(f.calls, r.Method+" "+r.URL.Path)
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/bigquery/v2/"), "/")
	switch {
	case r.Method == http.MethodGet && len(parts) == 6 && parts[2] == "datasets" && parts[4] == "tables":
		f.table(w, parts[1], parts[3], parts[5])
	case r.Method == http.MethodPost && len(parts) == 3 && parts[2] == "jobs":
		f.insert(w, r, parts[1])
	case r.Method == http.MethodGet && len(parts) == 4 && parts[2] == "jobs":
		f.getJob(w, parts[1], parts[3])
	case r.Method == http.MethodGet && len(parts) == 4 && parts[2] == "queries":
		f.results(w, r, parts[1], parts[3])
	default:
		f.fail(w, http.StatusNotFound, "notFound", "no such call: "+r.Method+" "+r.URL.Path)
	}
}

// token is Google's OAuth token endpoint for a service account: a JWT
// bearer grant, signed RS256 with the key, naming the account.
func (f *fakeBigQuery) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.Form.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":"unsupported_grant_type"}`)
		return
	}
	parts := strings.Split(r.Form.Get("assertion"), ".")
	var claims struct {
		Iss, Aud, Scope string
	}
	ok := len(parts) == 3 && !f.badGrant
	if ok {
		sig, err1 := base64.RawURLEncoding.DecodeString(parts[2])
		body, err2 := base64.RawURLEncoding.DecodeString(parts[1])
		sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
		ok = err1 == nil && err2 == nil && rsa.VerifyPKCS1v15(&f.key.PublicKey, crypto.SHA256, sum[:], sig) == nil &&
			json.Unmarshal(body, &claims) == nil && claims.Iss == f.email && claims.Aud == f.tokenURL &&
			strings.Contains(claims.Scope, "bigquery")
	}
	w.Header().Set("Content-Type", "application/json")
	if !ok {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":"invalid_grant","error_description":"Invalid JWT Signature."}`)
		return
	}
	f.tokens++
	io.WriteString(w, `{"access_token":"ya29.fake-token","expires_in":3599,"token_type":"Bearer"}`)
}

func field(name, typ string, sub ...map[string]any) map[string]any {
	m := map[string]any{"name": name, "type": typ, "mode": "NULLABLE"}
	if len(sub) > 0 {
		m["fields"] = sub
	}
	return m
}

func repeated(m map[string]any) map[string]any { m["mode"] = "REPEATED"; return m }

// table is tables.get: the standard export's schema (with cost_at_list).
func (f *fakeBigQuery) table(w http.ResponseWriter, project, dataset, table string) {
	if project+"."+dataset+"."+table != gcpTable {
		f.fail(w, http.StatusNotFound, "notFound", "Not found: Table "+project+":"+dataset+"."+table)
		return
	}
	kv := []map[string]any{field("key", "STRING"), field("value", "STRING")}
	schema := []map[string]any{
		field("billing_account_id", "STRING"),
		field("service", "RECORD", field("id", "STRING"), field("description", "STRING")),
		field("sku", "RECORD", field("id", "STRING"), field("description", "STRING")),
		field("usage_start_time", "TIMESTAMP"), field("usage_end_time", "TIMESTAMP"),
		field("project", "RECORD", field("id", "STRING"), field("number", "STRING"), field("name", "STRING"),
			repeated(field("labels", "RECORD", kv...)), field("ancestry_numbers", "STRING")),
		repeated(field("labels", "RECORD", kv...)), repeated(field("system_labels", "RECORD", kv...)),
		field("location", "RECORD", field("location", "STRING"), field("country", "STRING"), field("region", "STRING"), field("zone", "STRING")),
		field("export_time", "TIMESTAMP"), field("cost", "FLOAT"), field("currency", "STRING"),
		field("currency_conversion_rate", "FLOAT"),
		field("usage", "RECORD", field("amount", "FLOAT"), field("unit", "STRING"), field("amount_in_pricing_units", "FLOAT"), field("pricing_unit", "STRING")),
		repeated(field("credits", "RECORD", field("name", "STRING"), field("amount", "FLOAT"), field("full_name", "STRING"), field("id", "STRING"), field("type", "STRING"))),
		field("invoice", "RECORD", field("month", "STRING"), field("publisher_type", "STRING")),
		field("cost_type", "STRING"), field("cost_at_list", "FLOAT"),
	}
	json.NewEncoder(w).Encode(map[string]any{
		"kind": "bigquery#table", "id": "acme-billing:billing_export." + table,
		"tableReference":   map[string]string{"projectId": project, "datasetId": dataset, "tableId": table},
		"schema":           map[string]any{"fields": schema},
		"timePartitioning": map[string]string{"type": "DAY"}, "type": "TABLE", "location": "US",
	})
}

var selected = regexp.MustCompile("AS `([a-z_.]+)`")

// value is column col of row as the connection's query selects it.
func (row bqRow) value(col string, t *testing.T) *string {
	s := func(v string) *string {
		if v == "" {
			return nil
		}
		return &v
	}
	kvJSON := func(kv [][2]string) *string {
		list := []map[string]string{}
		for _, p := range kv {
			list = append(list, map[string]string{"key": p[0], "value": p[1]})
		}
		b, _ := json.Marshal(list)
		return s(string(b))
	}
	switch col {
	case "billing_account_id":
		return s(row.account)
	case "invoice_month":
		return s(row.start.Format("200601"))
	case "cost_type":
		return s("regular")
	case "service_id":
		return s(row.serviceID)
	case "service_description":
		return s(row.service)
	case "sku_id":
		return s(row.skuID)
	case "sku_description":
		return s(row.sku)
	case "usage_start_time":
		return s(row.start.Format("2006-01-02T15:04:05.000000Z"))
	case "usage_end_time":
		return s(row.start.Add(time.Hour).Format("2006-01-02T15:04:05.000000Z"))
	case "project_id":
		return s(row.project)
	case "project_name":
		return s(strings.ToUpper(row.project[:1]) + row.project[1:])
	case "project_labels":
		return kvJSON([][2]string{{"cost-center", "cc-" + row.project}})
	case "labels":
		return kvJSON(row.labels)
	case "system_labels":
		return kvJSON(nil)
	case "location_location":
		return s(row.region)
	case "location_region":
		return s(row.region)
	case "cost":
		return s(row.cost)
	case "currency":
		return s(row.currency)
	case "cost_at_list":
		return s(row.costAtList)
	case "usage_amount", "usage_amount_in_pricing_units":
		return s(row.usage)
	case "usage_unit":
		return s(row.unit)
	case "usage_pricing_unit":
		return s(strings.TrimSuffix(row.unit, "s"))
	case "credits":
		list := []string{}
		for i, c := range row.credits {
			// As TO_JSON_STRING writes a FLOAT64: a JSON number.
			list = append(list, fmt.Sprintf(`{"name":%q,"amount":%s,"full_name":null,"id":"credit-%d","type":%q}`, c.name, c.amount, i, c.typ))
		}
		return s("[" + strings.Join(list, ",") + "]")
	}
	t.Errorf("the query selects %q, which the fake does not know", col)
	return nil
}

// insert is jobs.insert of the connection's query: the rows whose usage
// lies in [@from, @to), in the query's columns, ordered as it orders.
func (f *fakeBigQuery) insert(w http.ResponseWriter, r *http.Request, project string) {
	var job struct {
		JobReference  struct{ JobID, ProjectID string } `json:"jobReference"`
		Configuration struct {
			Query struct {
				Query           string `json:"query"`
				UseLegacySQL    *bool  `json:"useLegacySql"`
				QueryParameters []struct {
					Name           string                 `json:"name"`
					ParameterValue struct{ Value string } `json:"parameterValue"`
				} `json:"queryParameters"`
			} `json:"query"`
		} `json:"configuration"`
	}
	if err := json.NewDecoder(r.Body).Decode(&job); err != nil {
		f.fail(w, http.StatusBadRequest, "invalid", err.Error())
		return
	}
	if f.denied {
		f.fail(w, http.StatusForbidden, "accessDenied", "Access Denied: Project acme-billing: User does not have bigquery.jobs.create permission in project acme-billing.")
		return
	}
	q := job.Configuration.Query
	if q.UseLegacySQL == nil || *q.UseLegacySQL {
		f.fail(w, http.StatusBadRequest, "invalidQuery", "legacy SQL")
		return
	}
	j := &bqJob{id: job.JobReference.JobID, sql: q.Query, params: map[string]string{}}
	if j.id == "" {
		j.id = "job_" + strconv.Itoa(len(f.order)+1)
	}
	for _, p := range q.QueryParameters {
		j.params[p.Name] = p.ParameterValue.Value
	}
	from, err1 := time.Parse(time.DateOnly, j.params["from"])
	to, err2 := time.Parse(time.DateOnly, j.params["to"])
	if err1 != nil || err2 != nil || !strings.Contains(q.Query, "FROM `"+gcpTable+"`") {
		f.fail(w, http.StatusBadRequest, "invalidQuery", "the fake runs the connection's query only: "+q.Query)
		return
	}
	for _, m := range selected.FindAllStringSubmatch(q.Query, -1) {
		j.columns = append(j.columns, m[1])
	}
	partitions := map[string]bool{}
	for _, row := range f.rows {
		if !row.exported.Before(from) {
			partitions[row.exported.Format(time.DateOnly)] = true // read: the _PARTITIONTIME filter's partitions
		}
		if row.start.Before(from) || !row.start.Before(to) {
			continue
		}
		var rec []string
		for _, c := range j.columns {
			v := row.value(c, f.t)
			if v == nil {
				rec = append(rec, "\x00null")
			} else {
				rec = append(rec, *v)
			}
		}
		j.rows = append(j.rows, rec)
	}
	sort.Slice(j.rows, func(a, b int) bool { return slices.Compare(j.rows[a], j.rows[b]) < 0 })
	// Billed as BigQuery bills: at least 10 MB a query; here a megabyte
	// a partition read.
	j.partitions = len(partitions)
	j.bytes = max(10<<20, int64(len(partitions))<<20)
	if strings.Contains(q.Query, "_PARTITIONTIME >= TIMESTAMP(@from)") == false {
		j.bytes = 1 << 30 // a scan of the whole table
	}
	f.jobs[j.id] = j
	f.order = append(f.order, j.id)
	f.writeJob(w, project, j)
}

func (f *fakeBigQuery) writeJob(w http.ResponseWriter, project string, j *bqJob) {
	billed := strconv.FormatInt(j.bytes, 10)
	json.NewEncoder(w).Encode(map[string]any{
		"kind": "bigquery#job", "id": project + ":US." + j.id,
		"jobReference":  map[string]string{"projectId": project, "jobId": j.id, "location": "US"},
		"configuration": map[string]any{"jobType": "QUERY", "query": map[string]any{"query": j.sql, "useLegacySql": false}},
		"status":        map[string]string{"state": "DONE"},
		"statistics": map[string]any{"creationTime": "1763600000000", "startTime": "1763600000100", "endTime": "1763600001200",
			"totalBytesProcessed": billed, "query": map[string]any{"totalBytesProcessed": billed, "totalBytesBilled": billed,
				"cacheHit": false, "statementType": "SELECT", "totalPartitionsProcessed": strconv.Itoa(j.partitions)}},
		"user_email": f.email,
	})
}

func (f *fakeBigQuery) getJob(w http.ResponseWriter, project, id string) {
	j, ok := f.jobs[id]
	if !ok {
		f.fail(w, http.StatusNotFound, "notFound", "Not found: Job "+project+":"+id)
		return
	}
	f.writeJob(w, project, j)
}

// results is jobs.getQueryResults: maxResults=0 to wait, then pages of
// f.pageSize rows, by startIndex and then pageToken.
func (f *fakeBigQuery) results(w http.ResponseWriter, r *http.Request, project, id string) {
	j, ok := f.jobs[id]
	if !ok {
		f.fail(w, http.StatusNotFound, "notFound", "Not found: Job "+project+":"+id)
		return
	}
	q := r.URL.Query()
	var fields []map[string]any
	for _, c := range j.columns {
		fields = append(fields, field(c, "STRING"))
	}
	resp := map[string]any{
		"kind": "bigquery#getQueryResultsResponse", "jobReference": map[string]string{"projectId": project, "jobId": id, "location": "US"},
		"schema": map[string]any{"fields": fields}, "totalRows": strconv.Itoa(len(j.rows)), "jobComplete": true, "cacheHit": false,
	}
	start := 0
	if tok := q.Get("pageToken"); tok != "" {
		start, _ = strconv.Atoi(strings.TrimPrefix(tok, "page-"))
	} else if si := q.Get("startIndex"); si != "" {
		start, _ = strconv.Atoi(si)
	}
	n := f.pageSize
	if mr := q.Get("maxResults"); mr != "" {
		n, _ = strconv.Atoi(mr)
	}
	if n > 0 {
		var rows []map[string]any
		end := min(start+n, len(j.rows))
		for _, rec := range j.rows[start:end] {
			var cells []map[string]any
			for _, v := range rec {
				if v == "\x00null" {
					cells = append(cells, map[string]any{"v": nil})
				} else {
					cells = append(cells, map[string]any{"v": v})
				}
			}
			rows = append(rows, map[string]any{"f": cells})
		}
		resp["rows"] = rows
		if end < len(j.rows) {
			resp["pageToken"] = "page-" + strconv.Itoa(end)
		}
	}
	json.NewEncoder(w).Encode(resp)
}

// exportCSV is the same rows as a person exports them to CSV (the BigQuery
// console's flattening: dotted names, credits and labels as JSON lists,
// credits inside their row), for the gcp-billing importer.
func (f *fakeBigQuery) exportCSV(t *testing.T) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	cols := []string{"billing_account_id", "service.description", "sku.description", "usage_start_time", "usage_end_time",
		"project.id", "labels", "location.region", "cost", "currency", "cost_at_list", "usage.amount", "usage.unit", "credits", "invoice.month"}
	var b strings.Builder
	b.WriteString(strings.Join(cols, ",") + "\n")
	for _, row := range f.rows {
		var cells []string
		for _, c := range cols {
			v := row.value(strings.ReplaceAll(c, ".", "_"), t)
			cell := ""
			if v != nil {
				cell = *v
			}
			cells = append(cells, `"`+strings.ReplaceAll(cell, `"`, `""`)+`"`)
		}
		b.WriteString(strings.Join(cells, ",") + "\n")
	}
	return []byte(b.String())
}

// billingRows makes ten days of an account's export, 2026-11-10 to 19,
// each exported the day after its usage: GPUs, storage, credits.
func billingRows() []bqRow {
	var rows []bqRow
	for d := 0; d < 10; d++ {
		day := time.Date(2026, 11, 10+d, 0, 0, 0, 0, time.UTC)
		for h := 0; h < 24; h += 6 {
			at := day.Add(time.Duration(h) * time.Hour)
			rows = append(rows,
				bqRow{account: "01A2B3-C4D5E6-F7A8B9", service: "Compute Engine", serviceID: "6F81-5844-456A", sku: "Nvidia Tesla A100 GPU running in Americas",
					skuID: "E8AC-1D2B-0F3C", project: "ml-training", region: "us-central1", currency: "USD", start: at,
					cost: fmt.Sprintf("%d.%03d", 17+d, 123+h), costAtList: fmt.Sprintf("%d.%03d", 20+d, 500+h), usage: "21600", unit: "seconds",
					labels:   [][2]string{{"team", "research"}, {"env", "prod"}},
					credits:  []bqCredit{{name: "Committed usage discount: A100 GPU", typ: "COMMITTED_USAGE_DISCOUNT", amount: fmt.Sprintf("-%d.25", 3+d%3)}},
					exported: at.AddDate(0, 0, 1)},
				bqRow{account: "01A2B3-C4D5E6-F7A8B9", service: "Cloud Storage", serviceID: "95FF-2EF5-5EA1", sku: "Standard Storage US Multi-region",
					skuID: "E5F0-6A5D-7BAD", project: "data-lake", region: "us", currency: "USD", start: at,
					cost: "0.04123", costAtList: "0.04123", usage: "3.2e+12", unit: "byte-seconds",
					labels: [][2]string{{"team", "data"}}, exported: at.AddDate(0, 0, 1)},
			)
		}
		rows = append(rows, bqRow{account: "01A2B3-C4D5E6-F7A8B9", service: "BigQuery", serviceID: "24E6-581D-38E5", sku: "Analysis",
			skuID: "5D6F-E0F1-A2B3", project: "data-lake", region: "US", currency: "USD", start: day.Add(12 * time.Hour),
			cost: "1.5e-05", costAtList: "1.5e-05", usage: "1.2e+09", unit: "bytes",
			credits:  []bqCredit{{name: "FreeTrial:Credit-0123", typ: "FREE_TIER", amount: "-1.5e-05"}},
			exported: day.AddDate(0, 0, 1)})
	}
	return rows
}

// gcpBundle is a test's org with a GCP connection to the fake.
type gcpBundle struct {
	*bundle
	bq   *fakeBigQuery
	conn store.Connection
}

func newGCPBundle(t *testing.T) gcpBundle {
	b := newBundle(t)
	bq, srv := newFakeBigQuery(t)
	bq.rows = billingRows()
	b.svc.BigQueryURL = srv.URL + "/bigquery/v2/"
	b.svc.GoogleTokenURL = bq.tokenURL
	b.svc.HTTP = srv.Client()
	conn := b.create(t, connect.Input{Name: "GCP billing", Kind: connect.KindGCP, Table: gcpTable,
		ServiceAccountJSON: bq.keyJSON(t), StartDate: "2026-11-10"})
	return gcpBundle{bundle: b, bq: bq, conn: conn}
}

// totalsByDay is the org's billed cost per day and charge category, from
// the rollup the dashboard reads.
func totalsByDay(t *testing.T, st *store.Store, orgID int64) map[string]string {
	t.Helper()
	rows, err := st.Pool().Query(context.Background(), `
		SELECT day::text, sum(billed)::text FROM daily_spend WHERE org_id = $1 GROUP BY day ORDER BY day`, orgID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var day, sum string
		if err := rows.Scan(&day, &sum); err != nil {
			t.Fatal(err)
		}
		d, _ := decimal.NewFromString(sum)
		out[day] = d.String()
	}
	return out
}

// csvTotals imports the fake's rows as a CSV export into an org of their
// own, through the gcp-billing importer, and returns its totals by day.
func (g gcpBundle) csvTotals(t *testing.T) map[string]string {
	t.Helper()
	org, _ := storetest.Org(t, g.st, storetest.OrgOpts{})
	body := g.bq.exportCSV(t)
	res, err := g.svc.Importer.Import(context.Background(), ingest.ImportRequest{Org: org, FileName: "export.csv", Via: "test"}, strings.NewReader(string(body)))
	if err != nil || res.Source != ingest.SourceGCPBilling {
		t.Fatalf("CSV export: %+v, %v", res, err)
	}
	return totalsByDay(t, g.st, org.ID)
}

// TestGCPBackfillThenRestate: a new GCP connection backfills from its
// start date in one query that reads only the partitions written since
// then; a later run restates the last days, replacing them; the totals,
// day by day, are those of a CSV export of the same rows; the bytes
// BigQuery billed are kept on the connection.
func TestGCPBackfillThenRestate(t *testing.T) {
	t.Parallel()
	g := newGCPBundle(t)
	ctx := context.Background()

	res, err := g.svc.Sync(ctx, g.org.ID, g.conn.ID)
	if err != nil {
		t.Fatal(err)
	}
	first := g.bq.jobs[g.bq.order[0]]
	if first.params["from"] != "2026-11-10" || first.params["to"] != "2026-11-21" {
		t.Fatalf("backfill asked for %v", first.params)
	}
	if !strings.Contains(first.sql, "_PARTITIONTIME >= TIMESTAMP(@from)") || !strings.Contains(first.sql, "`cost_at_list`") {
		t.Fatalf("query:\n%s", first.sql)
	}
	// 10 days × (4 GPU rows + 4 storage rows + 1 BigQuery row), and each
	// row's credits as charges of their own: 4 + 1 a day.
	if len(res.Imports) != 1 || res.Rows != 10*(9+5) || res.Imports[0].Source != ingest.SourceGCPBigQuery {
		t.Fatalf("sync: %+v", res)
	}
	if got, want := totalsByDay(t, g.st, g.org.ID), g.csvTotals(t); !maps(got, want) {
		t.Fatalf("after the backfill, by day:\n got %v\nwant %v", got, want)
	}
	var credits int
	var creditSum decimal.Decimal
	if err := g.st.Pool().QueryRow(ctx, `SELECT count(*), sum(billed_cost) FROM charges WHERE org_id = $1 AND charge_category = 'Credit'`,
		g.org.ID).Scan(&credits, &creditSum); err != nil || credits != 50 || !creditSum.Equal(decimal.RequireFromString("-166.00015")) {
		t.Fatalf("credits: %d, %s, %v", credits, creditSum, err)
	}
	v := connect.ViewOf(g.connection(t, g.conn.ID))
	if v.LastBytesBilled == nil || *v.LastBytesBilled != 10<<20 || v.LastStatus != "ok" {
		t.Fatalf("view after the backfill: %+v", v)
	}

	// Later the same day: the last days restated (the 17th to today),
	// the same totals; once more, the same query and rows, a duplicate.
	again, err := g.svc.Sync(ctx, g.org.ID, g.conn.ID)
	if err != nil || len(again.Imports) != 1 || again.Imports[0].ReplacedRows != 42 || again.Rows != 42 {
		t.Fatalf("second sync: %+v, %v", again, err)
	}
	if got, want := totalsByDay(t, g.st, g.org.ID), g.csvTotals(t); !maps(got, want) {
		t.Fatalf("after the second sync, by day:\n got %v\nwant %v", got, want)
	}
	again, err = g.svc.Sync(ctx, g.org.ID, g.conn.ID)
	if err != nil || len(again.Imports) != 1 || !again.Imports[0].Duplicate || again.Rows != 0 {
		t.Fatalf("third sync: %+v, %v", again, err)
	}

	// Google restates: the 18th loses a row, the 19th's GPU rows cost
	// more and one gains a credit, and the 20th arrives. The 17th,
	// outside the days restated, is left as it is.
	g.bq.mu.Lock()
	var kept []bqRow
	for _, row := range g.bq.rows {
		switch day := row.start.Day(); {
		case day == 18 && row.service == "BigQuery":
			continue
		case day == 19 && row.service == "Compute Engine":
			row.cost = "29.999"
			row.credits = append(row.credits, bqCredit{name: "Sustained usage discount", typ: "SUSTAINED_USAGE_DISCOUNT", amount: "-1.75"})
		}
		kept = append(kept, row)
	}
	late := kept[len(kept)-1]
	late.start, late.exported = time.Date(2026, 11, 20, 3, 0, 0, 0, time.UTC), time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	g.bq.rows = append(kept, late)
	g.bq.mu.Unlock()
	g.now = time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)

	res, err = g.svc.Sync(ctx, g.org.ID, g.conn.ID)
	if err != nil {
		t.Fatal(err)
	}
	restate := g.bq.jobs[g.bq.order[len(g.bq.order)-1]]
	if restate.params["from"] != "2026-11-18" || restate.params["to"] != "2026-11-22" {
		t.Fatalf("restate asked for %v", restate.params)
	}
	if got, want := totalsByDay(t, g.st, g.org.ID), g.csvTotals(t); !maps(got, want) {
		t.Fatalf("after restating, by day:\n got %v\nwant %v", got, want)
	}
	if res.Imports[0].ReplacedRows != 28 {
		t.Fatalf("restate replaced %d rows, want the 18th's and 19th's 28", res.Imports[0].ReplacedRows)
	}
	// The partitions written on the 18th to the 21st are read, none
	// before: billed BigQuery's 10 MB minimum.
	if v := connect.ViewOf(g.connection(t, g.conn.ID)); v.LastBytesBilled == nil || *v.LastBytesBilled != 10<<20 {
		t.Fatalf("view after restating: %+v", v)
	}
	if restate.partitions != 4 {
		t.Fatalf("restate read %d partitions, want 4 (18th to 21st)", restate.partitions)
	}
	// Every call was to BigQuery's documented REST endpoints, paged.
	var pages int
	for _, c := range g.bq.calls {
		if strings.Contains(c, "/queries/") {
			pages++
		}
	}
	if pages < 10 {
		t.Fatalf("%d getQueryResults calls: the results were not paged", pages)
	}
}

func maps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestGCPRefusals: a key Google refuses, and a service account that may not
// run queries, fail the sync in plain words, recorded on the connection,
// without importing anything.
func TestGCPRefusals(t *testing.T) {
	t.Parallel()
	g := newGCPBundle(t)
	ctx := context.Background()
	g.bq.badGrant = true
	_, err := g.svc.Sync(ctx, g.org.ID, g.conn.ID)
	if err == nil || !strings.Contains(err.Error(), "the service account key was refused (invalid_grant)") || connect.Transient(err) {
		t.Fatalf("refused key: %v (transient %v)", err, connect.Transient(err))
	}
	g.bq.badGrant, g.bq.denied = false, true
	_, err = g.svc.Sync(ctx, g.org.ID, g.conn.ID)
	want := "403 from BigQuery: the service account may not run the query"
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "BigQuery Job User") {
		t.Fatalf("denied: %v", err)
	}
	v := connect.ViewOf(g.connection(t, g.conn.ID))
	if v.LastStatus != "failed" || !strings.Contains(v.LastError, want) || g.billed(t).Sign() != 0 {
		t.Fatalf("after refusals: %+v", v)
	}
	// The Test button reads the table's schema: it works with a key that
	// may not run queries, and names a table that does not exist.
	if err := g.svc.Test(ctx, g.conn); err != nil {
		t.Fatalf("test: %v", err)
	}
}

// TestGCPInput: the table and the key are checked as typed, every field's
// mistake at once; the key is sealed and only its account shows.
func TestGCPInput(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	bq, _ := newFakeBigQuery(t)
	key := bq.keyJSON(t)
	ctx := context.Background()
	create := func(in connect.Input) error {
		return b.st.Fenced(ctx, b.org.ID, 0, func(st *store.Store) error {
			_, err := b.svc.Create(ctx, st, b.org.ID, 0, in)
			return err
		})
	}
	err := create(connect.Input{Name: "x", Kind: connect.KindGCP, Table: "billing.export", ServiceAccountJSON: `{"type": "authorized_user"}`,
		RestateDays: "90"})
	var fields []string
	for _, ie := range connect.InputErrors(err) {
		fields = append(fields, ie.Field)
	}
	if !slices.Equal(fields, []string{"table", "service_account_json", "restate_days"}) {
		t.Fatalf("errors %v: %v", fields, err)
	}
	for _, bad := range []string{"not json", `{"type":"service_account","client_email":"a@b.c","private_key":"nope"}`, strings.Repeat(" ", 20<<10) + "{}"} {
		if err := create(connect.Input{Name: "x", Kind: connect.KindGCP, Table: gcpTable, ServiceAccountJSON: bad}); len(connect.InputErrors(err)) != 1 {
			t.Errorf("key %.30q: %v", bad, err)
		}
	}
	for _, table := range []string{"p.d", "my-project.billing.t; DROP TABLE x", "Bad_Project.d.t", "my-project.billing.`t`x"} {
		if err := create(connect.Input{Name: "x", Kind: connect.KindGCP, Table: table, ServiceAccountJSON: key}); len(connect.InputErrors(err)) != 1 {
			t.Errorf("table %q: %v", table, err)
		}
	}
	if err := create(connect.Input{Name: "domain", Kind: connect.KindGCP, Table: "example.com:my-project.billing.gcp_billing_export_resource_v1_01A2B3_C4D5E6_F7A8B9",
		ServiceAccountJSON: key}); err != nil {
		t.Fatalf("a domain-scoped project: %v", err)
	}
	cs, err := b.st.Connections(ctx, b.org.ID)
	if err != nil || len(cs) != 1 {
		t.Fatalf("%v, %v", cs, err)
	}
	if cs[0].SecretHint != bq.email+" (key 3f2a9c0d…)" || strings.Contains(cs[0].Secret, "PRIVATE KEY") {
		t.Fatalf("hint %q, secret %.40q", cs[0].SecretHint, cs[0].Secret)
	}
}

// TestGCPUsesTheGivenKeyOnly: a GCP connection signs in with the key the
// org gave, never with the host's credentials: with the environment's
// pointing at a file that does not exist and no metadata server, the sync
// works, and every token it used came from a JWT signed with the key (the
// fake checks the signature and the account). Not parallel: it sets the
// environment.
func TestGCPUsesTheGivenKeyOnly(t *testing.T) {
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "/nonexistent/host-credentials.json")
	t.Setenv("GCE_METADATA_HOST", "127.0.0.1:1")
	t.Setenv("HOME", t.TempDir())
	g := newGCPBundle(t)
	res, err := g.svc.Sync(context.Background(), g.org.ID, g.conn.ID)
	if err != nil || res.Rows == 0 {
		t.Fatalf("%+v, %v", res, err)
	}
	if g.bq.tokens == 0 {
		t.Fatal("no token was asked of the key's token endpoint")
	}
	u, _ := url.Parse(g.bq.tokenURL)
	if u.Host == "token.attacker.example" {
		t.Fatal("the key's own token_uri was used")
	}
}
