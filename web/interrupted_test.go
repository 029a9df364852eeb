package web_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestInterruptedImportShowsFailed checks that an import its server died
// in the middle of says so, once swept, in the API and in the browser,
// instead of "processing" forever.
func TestInterruptedImportShowsFailed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	_, token, err := b.st.CreateAPIToken(ctx(), org.ID, "t", owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	dead := storetest.AbandonedImport(t, b.st, org.ID)
	if _, err := ingest.FailInterrupted(ctx(), b.st); err != nil {
		t.Fatal(err)
	}

	rec := httptest.NewRecorder()
	b.srv.ServeHTTP(rec, apiRequest(http.MethodGet, "/api/v1/imports/"+itoa(dead.ID), token, ""))
	wantStatus(t, rec, http.StatusOK)
	var one struct{ Status, Error string }
	if err := json.Unmarshal(rec.Body.Bytes(), &one); err != nil || one.Status != "failed" || one.Error != ingest.InterruptedMessage {
		t.Errorf("GET /api/v1/imports/%d = %s (%v), want failed with %q", dead.ID, rec.Body, err, ingest.InterruptedMessage)
	}
	rec = httptest.NewRecorder()
	b.srv.ServeHTTP(rec, apiRequest(http.MethodGet, "/api/v1/imports", token, ""))
	wantStatus(t, rec, http.StatusOK)
	var list struct {
		Imports []struct{ Status, Error string }
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil || len(list.Imports) != 1 || list.Imports[0].Status != "failed" || list.Imports[0].Error != ingest.InterruptedMessage {
		t.Errorf("GET /api/v1/imports = %s (%v)", rec.Body, err)
	}

	c := b.client(t)
	c.login(owner.Email)
	d := doc(t, c.get("/imports/"+itoa(dead.ID)))
	if s, e := d.Find(`[data-testid=import-status]`).Text(), d.Find(`[data-testid=import-error]`).Text(); s != "failed" || e != ingest.InterruptedMessage {
		t.Errorf("import page: status %q, error %q", s, e)
	}
	row := doc(t, c.get("/imports")).Find(`[data-testid=import-row]`)
	if s := row.Find(`[data-testid=import-status]`).Text(); s != "failed" || !strings.Contains(row.Text(), ingest.InterruptedMessage) {
		t.Errorf("history row: status %q in %q", s, row.Text())
	}
}
