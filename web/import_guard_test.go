package web_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/burnrate/burnrate/store/storetest"
)

// The tests here send files the import must refuse, through POST
// /api/v1/imports on a real database: each gets a 422 naming the line (and
// the column, where there is one), nothing is written, and the import
// history keeps the failure and its message.

type apiErrorBody struct {
	Error  string `json:"error"`
	Line   int    `json:"line"`
	Column string `json:"column"`
}

type importerAPI struct {
	t     *testing.T
	b     *bundle
	org   int64
	token string
}

func newImporterAPI(t *testing.T) *importerAPI {
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	_, token, err := b.st.CreateAPIToken(ctx(), org.ID, "ci", owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	return &importerAPI{t: t, b: b, org: org.ID, token: token}
}

// post sends body raw, as curl --data-binary does, with query appended.
func (a *importerAPI) post(query string, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/api/v1/imports"+query, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Content-Type", "text/csv")
	rec := httptest.NewRecorder()
	a.b.srv.ServeHTTP(rec, req)
	return rec
}

// refused checks a 422 at line and column whose message has every one of has.
func (a *importerAPI) refused(rec *httptest.ResponseRecorder, line int, column string, has ...string) apiErrorBody {
	a.t.Helper()
	wantStatus(a.t, rec, http.StatusUnprocessableEntity)
	var e apiErrorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
		a.t.Fatalf("error body %s: %v", rec.Body, err)
	}
	if e.Line != line || e.Column != column {
		a.t.Errorf("error at line %d column %q, want line %d column %q: %s", e.Line, e.Column, line, column, rec.Body)
	}
	for _, h := range has {
		if !strings.Contains(e.Error, h) {
			a.t.Errorf("error %q lacks %q", e.Error, h)
		}
	}
	return e
}

// nothingStored checks that the org has no charges and no daily rollups.
func (a *importerAPI) nothingStored() {
	a.t.Helper()
	for _, table := range []string{"charges", "daily_spend"} {
		var n int
		if err := a.b.st.Pool().QueryRow(ctx(), `SELECT count(*) FROM `+table+` WHERE org_id = $1`, a.org).Scan(&n); err != nil {
			a.t.Fatal(err)
		}
		if n != 0 {
			a.t.Errorf("%d rows in %s after refused imports", n, table)
		}
	}
}

type historyEntry struct {
	FileName string `json:"file_name"`
	Status   string `json:"status"`
	Error    string `json:"error"`
}

// history is the org's import history as the API lists it.
func (a *importerAPI) history() []historyEntry {
	a.t.Helper()
	rec := httptest.NewRecorder()
	a.b.srv.ServeHTTP(rec, apiRequest(http.MethodGet, "/api/v1/imports", a.token, ""))
	wantStatus(a.t, rec, http.StatusOK)
	var body struct{ Imports []historyEntry }
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		a.t.Fatal(err)
	}
	return body.Imports
}

// failedInHistory checks that file is in the history as failed with msg.
func (a *importerAPI) failedInHistory(file, msg string) {
	a.t.Helper()
	for _, h := range a.history() {
		if h.FileName == file {
			if h.Status != "failed" || h.Error != msg {
				a.t.Errorf("history of %s: %s %q, want failed %q", file, h.Status, h.Error, msg)
			}
			return
		}
	}
	a.t.Errorf("%s is not in the import history", file)
}

const focusHeader = "BilledCost,ChargePeriodStart,ServiceName,BillingCurrency\n"

func TestAPIImportRefusesBytesPostgresCannotStore(t *testing.T) {
	t.Parallel()
	a := newImporterAPI(t)

	latin1 := []byte(focusHeader + "1,2024-01-01,Compute,USD\n2,2024-01-02,Caf\xe9 Cloud,USD\n")
	e := a.refused(a.post("?filename=latin1.csv", latin1), 3, "ServiceName",
		`latin1.csv: line 3, column ServiceName: "Caf\xe9 Cloud" is not valid UTF-8`, "Latin-1", "save it as UTF-8")
	a.failedInHistory("latin1.csv", e.Error)

	nul := []byte(focusHeader + "1,2024-01-01,Compute,USD\n2,2024-01-02,Com\x00pute,USD\n")
	e = a.refused(a.post("?filename=nul.csv", nul), 3, "ServiceName", `"Com\x00pute" contains a NUL byte`)
	a.failedInHistory("nul.csv", e.Error)

	// A JSON escape that decodes to NUL, in a tag map.
	tags := []byte("BilledCost,ChargePeriodStart,Tags\n1,2024-09-18 22:00:00,\"{\"\"team\"\": \"\"\\u0000\"\"}\"\n")
	a.refused(a.post("?filename=tags.csv", tags), 2, "Tags", "contains a NUL byte")

	utf16 := []byte("\xff\xfeB\x00i\x00l\x00l\x00e\x00d\x00")
	e = a.refused(a.post("?filename=utf16.csv", utf16), 0, "", "utf16.csv: file is not UTF-8", "UTF-16 (little-endian)")
	a.failedInHistory("utf16.csv", e.Error)

	// File names: refused before anything is recorded.
	before := len(a.history())
	a.refused(a.post("?filename=caf%E9.csv", latin1), 0, "", "filename: not valid UTF-8")
	a.refused(a.post("?filename=a%00.csv", latin1), 0, "", "filename: contains a NUL byte")
	body, ctype := multipartUpload(t, nil, map[string][]byte{"caf\xe9.csv": []byte(focusHeader + "1,2024-01-01,Compute,USD\n")})
	req := httptest.NewRequest(http.MethodPost, "/api/v1/imports", body)
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Content-Type", ctype)
	rec := httptest.NewRecorder()
	a.b.srv.ServeHTTP(rec, req)
	a.refused(rec, 0, "", `filename "caf\xe9.csv": not valid UTF-8; nothing was imported`)
	if n := len(a.history()); n != before {
		t.Errorf("refused file names left %d entries in the history", n-before)
	}
	a.nothingStored()
}

func TestAPIImportRefusesRaggedRows(t *testing.T) {
	t.Parallel()
	a := newImporterAPI(t)
	var csv strings.Builder
	csv.WriteString(focusHeader)
	for i := range 20 {
		if i+2 == 17 {
			csv.WriteString("1\n") // line 17: cut short before its date (a missing currency alone is read as USD)
			continue
		}
		fmt.Fprintf(&csv, "1,2024-01-%02d,Compute,USD\n", i+1)
	}
	e := a.refused(a.post("?filename=ragged.csv", []byte(csv.String())), 17, "",
		"ragged.csv: line 17: 1 fields, the header has 4: it stops before column ChargePeriodStart, which focus needs")
	a.failedInHistory("ragged.csv", e.Error)

	long := []byte(focusHeader + "1,2024-01-01,Compute,USD\n2,2024-01-02,Compute, Inc.,USD\n")
	e = a.refused(a.post("?filename=long.csv", long), 3, "", "long.csv: line 3: 5 fields, the header has 4")
	a.failedInHistory("long.csv", e.Error)
	a.nothingStored()
}

func TestAPIImportRefusesDatesOutOfRange(t *testing.T) {
	t.Parallel()
	a := newImporterAPI(t)
	gcp := []byte("usage_start_time,usage_end_time,cost,currency,service.description\n" +
		"2026-01-01 00:00:00+00:00,2026-01-01 01:00:00+00:00,1,USD,Compute Engine\n" +
		"1970-01-01 00:00:00+00:00,1970-01-01 01:00:00+00:00,1,USD,Compute Engine\n")
	e := a.refused(a.post("?filename=epoch.csv", gcp), 3, "usage_start_time",
		`epoch.csv: line 3, column usage_start_time: "1970-01-01 00:00:00+00:00" is before 2000`)
	a.failedInHistory("epoch.csv", e.Error)

	future := []byte(focusHeader + "1,2024-01-01,Compute,USD\n1,2999-01-01,Compute,USD\n")
	e = a.refused(a.post("?filename=future.csv", future), 3, "ChargePeriodStart",
		`future.csv: line 3, column ChargePeriodStart: "2999-01-01" is more than a year from today`)
	a.failedInHistory("future.csv", e.Error)
	a.nothingStored()
}
