package web_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/burnrate/burnrate/access"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

func TestBudgetsCRUDInBrowser(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, owner, _, _ := demoOrg(t, b)
	c := b.client(t)
	c.login(owner.Email)

	rec := c.get("/budgets")
	wantStatus(t, rec, http.StatusOK)
	d := doc(t, rec)
	if d.Find(`[data-testid=new-budget]`).Length() != 1 || d.Find(`[data-testid=budget-row]`).Length() != 6 {
		t.Fatalf("budgets page: new button %d, rows %d", d.Find(`[data-testid=new-budget]`).Length(), d.Find(`[data-testid=budget-row]`).Length())
	}
	wantStatus(t, c.get("/budgets/new"), http.StatusOK)

	// Invalid: every problem is named next to its field, nothing is saved.
	rec = c.post("/budgets", url.Values{"name": {""}, "amount": {"lots"}, "currency": {"dollars"}, "tags": {"env"},
		"thresholds": {"50, eighty"}, "recipients": {"not-an-email"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	if n := doc(t, rec).Find(`[data-testid=field-error]`).Length(); n != 6 {
		t.Fatalf("field errors = %d, want 6: %s", n, doc(t, rec).Find(`[data-testid=field-error]`).Text())
	}

	rec = c.post("/budgets", url.Values{"name": {"Prod LLM"}, "amount": {"1,500.50"}, "currency": {""}, "period": {"monthly"},
		"provider": {"openai"}, "tags": {"env=prod, project = ranker"}, "thresholds": {""}, "recipients": {"a@example.com, b@example.com"}})
	wantStatus(t, rec, http.StatusSeeOther)
	loc := rec.Header().Get("Location")
	if !strings.HasPrefix(loc, "/budgets/") {
		t.Fatalf("redirect to %q", loc)
	}
	rec = c.get(loc)
	wantStatus(t, rec, http.StatusOK)
	d = doc(t, rec)
	if got := d.Find(`[data-testid=budget-name]`).Text(); got != "Prod LLM" {
		t.Fatalf("name = %q", got)
	}
	text := d.Text()
	for _, want := range []string{"1,500.50 USD", "provider=OpenAI", "tag env=prod", "tag project=ranker", "50% / 80% / 100%", "b@example.com"} {
		if !strings.Contains(text, want) {
			t.Errorf("budget page lacks %q", want)
		}
	}
	if d.Find(`[data-testid=from-charges]`).Length() != 1 {
		t.Error("a tag budget does not say it is computed from charges")
	}
	// Six past months, but only those with data: the demo's 90 days.
	today := testNow.UTC()
	first := today.AddDate(0, 0, -89)
	want := 0
	for k := 1; k <= 6; k++ {
		if end := time.Date(today.Year(), today.Month()-time.Month(k)+1, 0, 0, 0, 0, 0, time.UTC); !end.Before(first.Truncate(24 * time.Hour)) {
			want++
		}
	}
	if n := d.Find(`[data-testid=history-row]`).Length(); n != want {
		t.Errorf("history rows = %d, want %d past months with data", n, want)
	}

	wantStatus(t, c.get(loc+"/edit"), http.StatusOK)
	rec = c.post(loc, url.Values{"name": {"Prod LLM daily"}, "amount": {"50"}, "currency": {"usd"}, "period": {"daily"}, "thresholds": {"100, 80"}})
	wantStatus(t, rec, http.StatusSeeOther)
	rec = c.get(loc)
	d = doc(t, rec)
	if got := d.Find(`[data-testid=budget-name]`).Text(); got != "Prod LLM daily" || !strings.Contains(d.Text(), "80% / 100%") {
		t.Fatalf("after edit: %q, %s", got, d.Find("p.muted").First().Text())
	}
	if n := d.Find(`[data-testid=history-row]`).Length(); n != 14 {
		t.Errorf("daily history rows = %d, want 14 past days", n)
	}

	wantStatus(t, c.post(loc+"/delete", nil), http.StatusSeeOther)
	wantStatus(t, c.get(loc), http.StatusNotFound)
}

func TestOnlyAdminsChangeBudgets(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	bud := createBudget(t, b, org, owner)
	for _, role := range []access.Role{access.Viewer, access.Member} {
		u := storetest.Member(t, b.st, org, role)
		c := b.client(t)
		c.login(u.Email)
		rec := c.get("/budgets")
		wantStatus(t, rec, http.StatusOK)
		if doc(t, rec).Find(`[data-testid=new-budget]`).Length() != 0 {
			t.Errorf("%s sees the new budget button", role)
		}
		rec = c.get("/budgets/" + itoa(bud.ID))
		wantStatus(t, rec, http.StatusOK)
		if doc(t, rec).Find(`[data-testid=edit-budget]`).Length() != 0 {
			t.Errorf("%s sees the edit button", role)
		}
		wantStatus(t, c.get("/budgets/new"), http.StatusForbidden)
		wantStatus(t, c.post("/budgets", url.Values{"name": {"x"}, "amount": {"10"}}), http.StatusForbidden)
		wantStatus(t, c.post("/budgets/"+itoa(bud.ID), url.Values{"name": {"x"}, "amount": {"10"}}), http.StatusForbidden)
		wantStatus(t, c.post("/budgets/"+itoa(bud.ID)+"/delete", nil), http.StatusForbidden)
	}
	admin := storetest.Member(t, b.st, org, access.Admin)
	c := b.client(t)
	c.login(admin.Email)
	wantStatus(t, c.post("/budgets", url.Values{"name": {"Admin's"}, "amount": {"10"}}), http.StatusSeeOther)
	if bs, _ := b.st.Budgets(ctx(), org.ID); len(bs) != 2 {
		t.Fatalf("budgets = %d, want 2", len(bs))
	}
}

func createBudget(t *testing.T, b *bundle, org store.Org, owner store.User) store.Budget {
	t.Helper()
	c := b.client(t)
	c.login(owner.Email)
	c.get("/budgets/new")
	rec := c.post("/budgets", url.Values{"name": {"Everything"}, "amount": {"1000"}})
	wantStatus(t, rec, http.StatusSeeOther)
	bs, err := b.st.Budgets(ctx(), org.ID)
	if err != nil || len(bs) != 1 {
		t.Fatalf("budgets: %v, %v", bs, err)
	}
	return bs[0]
}

func TestAPIBudgets(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	_, token, _ := b.st.CreateAPIToken(ctx(), org.ID, "t", owner.ID)
	call := func(method, path, body string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		b.srv.ServeHTTP(rec, apiRequest(method, path, token, body))
		return rec
	}
	rec := call(http.MethodPost, "/api/v1/budgets", `{"name":"GPUs","amount":"2500.5","scope":{"provider":"AWS","team":"ml","tags":{"env":"prod"}},"recipients":["lead@example.com"]}`)
	wantStatus(t, rec, http.StatusCreated)
	var got map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "name", "amount", "currency", "period", "scope", "thresholds", "recipients"} {
		if _, ok := got[k]; !ok {
			t.Errorf("budget lacks %q: %s", k, rec.Body)
		}
	}
	if got["amount"] != "2500.5" || got["currency"] != "USD" || got["period"] != "monthly" {
		t.Errorf("amount/currency/period = %v %v %v", got["amount"], got["currency"], got["period"])
	}
	if th, _ := json.Marshal(got["thresholds"]); string(th) != "[50,80,100]" {
		t.Errorf("default thresholds = %s", th)
	}
	scope := got["scope"].(map[string]any)
	if scope["provider"] != "AWS" || scope["tags"].(map[string]any)["env"] != "prod" {
		t.Errorf("scope = %v", scope)
	}
	id := itoa(int64(got["id"].(float64)))

	rec = call(http.MethodGet, "/api/v1/budgets", "")
	wantStatus(t, rec, http.StatusOK)
	if !strings.Contains(rec.Body.String(), `"name":"GPUs"`) {
		t.Fatalf("list = %s", rec.Body)
	}
	rec = call(http.MethodPut, "/api/v1/budgets/"+id, `{"name":"GPUs daily","amount":100,"currency":"eur","period":"daily","thresholds":[90]}`)
	wantStatus(t, rec, http.StatusOK)
	if !strings.Contains(rec.Body.String(), `"currency":"EUR"`) || !strings.Contains(rec.Body.String(), `"thresholds":[90]`) || !strings.Contains(rec.Body.String(), `"scope":{}`) {
		t.Fatalf("after PUT = %s", rec.Body)
	}
	rec = call(http.MethodGet, "/api/v1/budgets/"+id, "")
	wantStatus(t, rec, http.StatusOK)
	if !strings.Contains(rec.Body.String(), `"period":"daily"`) {
		t.Fatalf("GET = %s", rec.Body)
	}
	for body, want := range map[string]string{
		`{"name":"x"}`:                                "amount is required",
		`{"name":"x","amount":-1}`:                    "more than zero",
		`{"name":"x","amount":1,"period":"weekly"}`:   "daily or monthly",
		`{"name":"x","amount":1,"colour":"red"}`:      "unknown field",
		`{"name":"x","amount":1,"recipients":["no"]}`: "not an email",
		`{"name":"x","amount":1,"thresholds":[0,50]}`: "between 1 and 1000",
		`not json`: "not a budget as JSON",
	} {
		rec := call(http.MethodPost, "/api/v1/budgets", body)
		if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), want) {
			t.Errorf("POST %s: %d %s, want 422 with %q", body, rec.Code, rec.Body, want)
		}
	}
	wantStatus(t, call(http.MethodDelete, "/api/v1/budgets/"+id, ""), http.StatusNoContent)
	wantStatus(t, call(http.MethodGet, "/api/v1/budgets/"+id, ""), http.StatusNotFound)
	wantStatus(t, call(http.MethodDelete, "/api/v1/budgets/"+id, ""), http.StatusNotFound)
}
