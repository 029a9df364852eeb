package web_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/burnrate/burnrate/access"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestRemoveImportInTheBrowserAndAPI: an admin removes an import from its
// page (asked first, with what goes), the spend API no longer counts it, and
// the history shows it removed, by whom; members and viewers may not; the
// API removes another import (204), and answers a second removal 409.
func TestRemoveImportInTheBrowserAndAPI(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	_, token, _ := b.st.CreateAPIToken(ctx(), org.ID, "ci", owner.ID)
	sample, err := os.ReadFile(focusSample)
	if err != nil {
		t.Fatal(err)
	}
	focus := apiImport(t, b, token, "focus.csv", sample)
	gcp := apiImport(t, b, token, "gcp.csv", mustRead(t, "../ingest/testdata/exports/gcp/202011_30c31bca571d9b7f3b2c8459dd8bc34a_2020-11-08_2020-11-11.csv"))
	focusID, gcpID := int64(focus["id"].(float64)), int64(gcp["id"].(float64))
	// The spend of each import's own period (the files are years apart).
	spendOf := func(imp map[string]any) map[string]string {
		_, totals, _ := apiSpendOf(t, b, token, "?from="+imp["period_start"].(string)+"&to="+imp["period_end"].(string))
		return totals
	}
	if len(spendOf(focus)) == 0 || len(spendOf(gcp)) == 0 {
		t.Fatalf("no spend before the removal: %v %v", spendOf(focus), spendOf(gcp))
	}

	for _, role := range []access.Role{access.Viewer, access.Member} {
		u := storetest.Member(t, b.st, org, role)
		c := b.client(t)
		c.login(u.Email)
		rec := c.get("/imports/" + itoa(focusID))
		wantStatus(t, rec, http.StatusOK)
		if doc(t, rec).Find(`[data-testid=remove-import]`).Length() != 0 {
			t.Errorf("%s sees the remove button", role)
		}
		wantStatus(t, c.post("/imports/"+itoa(focusID)+"/delete", nil), http.StatusForbidden)
	}

	admin := storetest.Member(t, b.st, org, access.Admin)
	c := b.client(t)
	c.login(admin.Email)
	rec := c.get("/imports/" + itoa(focusID))
	if got := strings.TrimSpace(doc(t, rec).Find(`[data-testid=import-status]`).Text()); got != "imported" {
		t.Errorf("import page: status %q, want imported, as in the history", got)
	}
	form := doc(t, rec).Find(`[data-testid=remove-import]`)
	if ask, _ := form.Attr("data-confirm"); !strings.Contains(ask, "Its 1,000 rows leave the dashboard") {
		t.Errorf("the removal asks %q", ask)
	}
	rec = c.post("/imports/"+itoa(focusID)+"/delete", nil)
	wantStatus(t, rec, http.StatusSeeOther)
	rec = c.get("/imports")
	page := doc(t, rec)
	if !strings.Contains(page.Text(), "removed, with its 1,000 rows") {
		t.Errorf("no flash after the removal: %s", page.Find("main").Text())
	}
	statuses := page.Find(`[data-testid=import-row] [data-testid=import-status]`).Map(func(_ int, s *goquery.Selection) string { return strings.TrimSpace(s.Text()) })
	if strings.Join(statuses, ",") != "imported,removed" {
		t.Errorf("history statuses %q, want the GCP import, then the removed FOCUS one", statuses)
	}
	rec = c.get("/imports/" + itoa(focusID))
	if got := doc(t, rec).Find(`[data-testid=import-removed]`).Text(); !strings.Contains(got, "by "+admin.Email) {
		t.Errorf("import page says %q, want removed by %s", got, admin.Email)
	}
	if len(spendOf(focus)) != 0 || len(spendOf(gcp)) == 0 {
		t.Errorf("after removing the FOCUS import: its period's spend %v, GCP's %v", spendOf(focus), spendOf(gcp))
	}

	del := func(id int64) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		b.srv.ServeHTTP(rec, apiRequest(http.MethodDelete, "/api/v1/imports/"+itoa(id), token, ""))
		return rec
	}
	wantStatus(t, del(gcpID), http.StatusNoContent)
	rec = del(gcpID)
	wantStatus(t, rec, http.StatusConflict)
	if !strings.Contains(rec.Body.String(), "removed already") {
		t.Errorf("second removal answers %s", rec.Body)
	}
	wantStatus(t, del(gcpID+1000), http.StatusNotFound)
	rec = httptest.NewRecorder()
	b.srv.ServeHTTP(rec, apiRequest(http.MethodGet, "/api/v1/imports/"+itoa(gcpID), token, ""))
	var got struct {
		Status    string `json:"status"`
		RemovedBy string `json:"removed_by"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got.Status != "removed" || got.RemovedBy != "api" {
		t.Errorf("GET the removed import: %s", rec.Body)
	}
	if said := doc(t, c.get("/imports/"+itoa(gcpID))).Find(`[data-testid=import-removed]`).Text(); !strings.Contains(said, "through the API") {
		t.Errorf("the page of an import removed through the API says %q", said)
	}
	if len(spendOf(gcp)) != 0 {
		t.Errorf("GCP's period still spends %v after its removal", spendOf(gcp))
	}
	// The same file can be uploaded again.
	again := apiImport(t, b, token, "focus.csv", sample)
	if again["duplicate"] == true {
		t.Errorf("uploading a removed file again is taken as a duplicate: %v", again)
	}
}
