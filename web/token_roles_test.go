package web_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/access"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// apiWriteRoles is the least role each API route that changes something
// needs, as its page does. Every such route must be listed: the test walks
// the route table.
var apiWriteRoles = map[string]access.Role{
	"POST /api/v1/budgets":              access.Admin,
	"PUT /api/v1/budgets/:id":           access.Admin,
	"DELETE /api/v1/budgets/:id":        access.Admin,
	"POST /api/v1/imports":              access.Member,
	"DELETE /api/v1/imports/:id":        access.Admin,
	"POST /api/v1/connections":          access.Admin,
	"DELETE /api/v1/connections/:id":    access.Admin,
	"POST /api/v1/connections/:id/sync": access.Admin,
	"PUT /api/v1/connections/:id/key":   access.Admin,
	"PUT /api/v1/tiers":                 access.Admin,
	"DELETE /api/v1/tiers":              access.Admin,
	"POST /api/v1/advise":               access.Viewer, // computations: they change nothing
	"POST /api/v1/breakeven":            access.Viewer,
}

// TestAPITokensActWithTheirMakersRole: a token acts with its maker's role
// as it is now. Route by route, every API route that changes something
// refuses tokens whose maker's role is below the page's (403) and lets the
// others through; demoting the maker narrows their token at once, and
// removing them ends it.
func TestAPITokensActWithTheirMakersRole(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{Name: "Roles"})
	tokens := map[access.Role]string{}
	makers := map[access.Role]store.User{access.Owner: owner}
	for _, r := range access.Roles {
		if r != access.Owner {
			makers[r] = storetest.Member(t, b.st, org, r)
		}
		_, secret, err := b.st.CreateAPIToken(ctx(), org.ID, string(r), makers[r].ID)
		if err != nil {
			t.Fatal(err)
		}
		tokens[r] = secret
	}
	ids := map[string]string{}
	for range access.Roles { // one of each per role: an allowed DELETE uses one up
		bud, err := b.st.CreateBudget(ctx(), org.ID, owner.ID, store.BudgetInput{Name: "b" + strings.Repeat("x", len(ids)), Amount: decimal.NewFromInt(100),
			Currency: "USD", Period: "monthly", Thresholds: []int{100}})
		if err != nil {
			t.Fatal(err)
		}
		ids["/api/v1/budgets/:id"] = itoa(bud.ID)
	}
	imp, err := b.st.CreateImport(ctx(), store.NewImport{OrgID: org.ID, FileName: "a.csv", SHA256: []byte("a"), Via: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ids["/api/v1/imports/:id"] = itoa(imp.ID)
	conn, err := b.st.CreateConnection(ctx(), store.NewConnection{OrgID: org.ID, Name: "OpenAI", Kind: "openai",
		Settings: []byte(`{}`), Secret: "v1.00000000.AAAA", SecretHint: "…BBBB"})
	if err != nil {
		t.Fatal(err)
	}
	ids["/api/v1/connections/:id"] = itoa(conn.ID)
	bodies := map[string]string{
		"/api/v1/budgets":     `{"name":"n","amount":"5","period":"monthly"}`,
		"/api/v1/budgets/:id": `{"name":"n","amount":"5","period":"monthly"}`,
		"/api/v1/imports":     "not,a\nfile,x\n",
		"/api/v1/connections": `{"name":"x","kind":"openai","api_key":"sk-admin-0123456789"}`,
		"/api/v1/tiers":       `{}`,
		"/api/v1/advise":      `{"job":"qlora","model":"llama-3.1-8b","tokens":1e6}`,
		"/api/v1/breakeven":   `{"model":"gpt-4.1-mini","input_tokens":1e6,"output_tokens":1e6}`,
	}

	seen := 0
	for _, rt := range b.srv.Routes() {
		if !strings.HasPrefix(rt.Path, "/api/v1/") || rt.Method == http.MethodGet || rt.Method == http.MethodHead {
			continue
		}
		key := rt.Method + " " + rt.Path
		min, ok := apiWriteRoles[key]
		if !ok {
			t.Errorf("%s changes something and is not in apiWriteRoles: say which role it needs", key)
			continue
		}
		seen++
		for _, r := range access.Roles {
			path := rt.Path
			if id, ok := ids[rt.Path]; ok {
				path = strings.Replace(rt.Path, ":id", id, 1)
			}
			rec := httptest.NewRecorder()
			b.srv.ServeHTTP(rec, apiRequest(rt.Method, path, tokens[r], bodies[rt.Path]))
			switch {
			case !r.AtLeast(min) && rec.Code != http.StatusForbidden:
				t.Errorf("%s with a %s's token: %d %s, want 403", key, r, rec.Code, rec.Body)
			case r.AtLeast(min) && (rec.Code == http.StatusForbidden || rec.Code == http.StatusUnauthorized):
				t.Errorf("%s with a %s's token: %d %s, want it let through", key, r, rec.Code, rec.Body)
			}
		}
	}
	if seen != len(apiWriteRoles) {
		t.Errorf("walked %d routes, apiWriteRoles lists %d", seen, len(apiWriteRoles))
	}

	// An admin's token, then the admin demoted: admin routes refuse it at
	// once; then removed: it no longer works at all.
	admin := makers[access.Admin]
	if _, err := b.st.SetMemberRole(ctx(), org.ID, admin.ID, access.Member, nil); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	b.srv.ServeHTTP(rec, apiRequest(http.MethodPost, "/api/v1/connections", tokens[access.Admin], bodies["/api/v1/connections"]))
	if rec.Code != http.StatusForbidden {
		t.Errorf("demoted admin's token: %d %s, want 403", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	b.srv.ServeHTTP(rec, apiRequest(http.MethodGet, "/api/v1/budgets", tokens[access.Admin], ""))
	wantStatus(t, rec, http.StatusOK)
	if _, _, err := b.st.RemoveMember(ctx(), org.ID, admin.ID, nil); err != nil {
		t.Fatal(err)
	}
	rec = httptest.NewRecorder()
	b.srv.ServeHTTP(rec, apiRequest(http.MethodGet, "/api/v1/budgets", tokens[access.Admin], ""))
	if rec.Code != http.StatusUnauthorized {
		t.Errorf("removed member's token: %d %s, want 401", rec.Code, rec.Body)
	}
}
