package web_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/schedule"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestBudgetAlertLinksToItsDashboard checks how budget alerts meet the
// pages: showing a budget over its thresholds records nothing (only an
// evaluation does, so that it alerts); the alert's link opens the dashboard
// filtered to the budget's scope, whose numbers add up to the alert's; and
// the budget's page then lists the crossings claimed.
func TestBudgetAlertLinksToItsDashboard(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	_, token, err := b.st.CreateAPIToken(ctx(), org.ID, "t", owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	today := testNow.UTC().Format(time.DateOnly)
	rec := httptest.NewRecorder()
	b.srv.ServeHTTP(rec, apiRequest(http.MethodPost, "/api/v1/imports?filename=extra.csv", token,
		"BilledCost,ChargePeriodStart,BillingCurrency,ProviderName,ServiceName\n"+
			"60.25,"+today+" 00:30:00,USD,Extra,GPUs\n30,"+today+" 00:40:00,USD,Extra,Storage\n500,"+today+" 00:50:00,USD,Other,GPUs\n"))
	wantStatus(t, rec, http.StatusCreated)
	bud, err := b.st.CreateBudget(ctx(), org.ID, owner.ID, store.BudgetInput{Name: "Extra", Amount: decimal.NewFromInt(100),
		Currency: "USD", Period: "monthly", Scope: store.BudgetScope{Provider: "Extra"}, Thresholds: []int{50, 80, 100}})
	if err != nil {
		t.Fatal(err)
	}

	c := b.client(t)
	c.login(owner.Email)
	page := "/budgets/" + itoa(bud.ID)
	wantStatus(t, c.get(page), http.StatusOK)
	wantStatus(t, c.get("/budgets"), http.StatusOK)
	if as, err := b.st.BudgetAlerts(ctx(), org.ID, bud.ID); err != nil || len(as) != 0 {
		t.Fatalf("showing the budget recorded %v, %v; only an evaluation records crossings", as, err)
	}

	alerts, err := schedule.BudgetAlerts(ctx(), b.st, org, testNow)
	if err != nil || len(alerts) != 1 {
		t.Fatalf("Evaluate = %+v, %v; want one alert", alerts, err)
	}
	a := alerts[0]
	d := doc(t, c.get(a.Link))
	if v, _ := d.Find(`[data-testid=filter-provider] option[selected]`).Attr("value"); v != "Extra" {
		t.Errorf("the alert's dashboard filters provider %q, want Extra (%s)", v, a.Link)
	}
	if v, _ := d.Find(`[data-testid=filter-group] option[selected]`).Attr("value"); v != "service" {
		t.Errorf("the alert's dashboard groups by %q, want service", v)
	}
	rec = c.get(a.Link + "&format=json")
	wantStatus(t, rec, http.StatusOK)
	var chart struct {
		Charts []struct {
			Currency string
			Totals   []string
		}
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &chart); err != nil {
		t.Fatal(err)
	}
	sum := decimal.Zero
	for _, ch := range chart.Charts {
		for _, v := range ch.Totals {
			sum = sum.Add(decimal.RequireFromString(v))
		}
	}
	if !sum.Equal(a.Status.Spent) || !sum.Equal(decimal.RequireFromString("90.25")) {
		t.Errorf("the alert's dashboard sums to %s, the alert says %s; want 90.25", sum, a.Status.Spent)
	}

	if n := doc(t, c.get(page)).Find(`[data-testid=budget-alerts] tbody tr`).Length(); n != 2 {
		t.Errorf("the budget's page lists %d crossings, want 50%% and 80%%", n)
	}
}
