package web_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/burnrate/burnrate/store/storetest"
)

// TestJSONBodiesBoundedInDepth: 40 KB of "[" (with a byte that is not
// UTF-8, which sent the text check down its slow path: 70 seconds and 4 GB
// a request) is refused before anything decodes it, on every route that
// reads a JSON body; a document at the limit still has its bad text named
// by its path.
func TestJSONBodiesBoundedInDepth(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{Name: "Deep"})
	_, secret, err := b.st.CreateAPIToken(ctx(), org.ID, "ci", owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	b.srv.ServeHTTP(rec, apiRequest(http.MethodPost, "/api/v1/budgets", secret, `{"name":"b","amount":"10","period":"monthly"}`))
	wantStatus(t, rec, http.StatusCreated)
	deep := strings.Repeat("[", 40_000) + "\"\xff\""
	for _, route := range []struct{ method, path string }{
		{http.MethodPost, "/api/v1/budgets"},
		{http.MethodPut, "/api/v1/budgets/1"},
		{http.MethodPost, "/api/v1/advise"},
		{http.MethodPost, "/api/v1/breakeven"},
		{http.MethodPost, "/api/v1/connections"},
	} {
		rec := httptest.NewRecorder()
		b.srv.ServeHTTP(rec, apiRequest(route.method, route.path, secret, deep))
		if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "body: JSON nested more than 64 levels deep (at byte 65)") {
			t.Errorf("%s %s: %d %s", route.method, route.path, rec.Code, rec.Body)
		}
	}
	atLimit := `{"name":"b","scope":{"tags":{"team":` + strings.Repeat("[", 61) + "\"\xff\"" + strings.Repeat("]", 61) + `}}}`
	rec = httptest.NewRecorder()
	b.srv.ServeHTTP(rec, apiRequest(http.MethodPost, "/api/v1/budgets", secret, atLimit))
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "scope.tags.team"+strings.Repeat("[0]", 61)+": not valid UTF-8") {
		t.Errorf("at the limit: %d %s", rec.Code, rec.Body)
	}
}
