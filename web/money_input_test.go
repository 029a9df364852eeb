package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/burnrate/burnrate/store/storetest"
)

// TestMoneyInputsRefuseAmbiguousCommas checks that "12,5" — 12.5 in much
// of Europe, a typo elsewhere — is refused by the budget form and by the
// API alike with a message saying how to write it, and nothing is saved;
// "1,250.50" reads as 1250.5 in the form (the API takes plain numbers).
func TestMoneyInputsRefuseAmbiguousCommas(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	_, token, err := b.st.CreateAPIToken(ctx(), org.ID, "t", owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	c := b.client(t)
	c.login(owner.Email)
	for _, amount := range []string{"12,5", "1.250,50", "1,25", "12,50"} {
		rec := c.post("/budgets", url.Values{"name": {"Comma"}, "amount": {amount}, "period": {"monthly"}})
		wantStatus(t, rec, http.StatusUnprocessableEntity)
		msg := doc(t, rec).Find(`[data-testid=field-error]`).Text()
		if !strings.Contains(msg, "write decimals with a point (12.5)") {
			t.Errorf("form %q: %q", amount, msg)
		}
		api := httptest.NewRecorder()
		b.srv.ServeHTTP(api, apiRequest(http.MethodPost, "/api/v1/budgets", token, `{"name":"Comma","amount":"`+amount+`"}`))
		if api.Code != http.StatusUnprocessableEntity || !strings.Contains(api.Body.String(), "write decimals with a point") {
			t.Errorf("API %q: %d %s", amount, api.Code, api.Body)
		}
	}
	if bs, err := b.st.Budgets(ctx(), org.ID); err != nil || len(bs) != 0 {
		t.Fatalf("budgets saved: %v, %v", bs, err)
	}
	wantStatus(t, c.post("/budgets", url.Values{"name": {"Grouped"}, "amount": {"1,250.50"}, "period": {"monthly"}}), http.StatusSeeOther)
	if bs, err := b.st.Budgets(ctx(), org.ID); err != nil || len(bs) != 1 || bs[0].Amount.String() != "1250.5" {
		t.Fatalf("budgets = %v, %v", bs, err)
	}
}
