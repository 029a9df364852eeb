package schedule_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/billing"
	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/notify"
	"github.com/burnrate/burnrate/pricing"
	"github.com/burnrate/burnrate/schedule"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestNoAlertsOnFree: with billing on, a Free org's crossed budget claims
// no alert and records no notification; on Team the same evaluation does.
// With billing off every org has alerts.
func TestNoAlertsOnFree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	on := billing.Config{SecretKey: "sk_test", WebhookSecret: "whsec"}
	org, _ := storetest.Org(t, st, storetest.OrgOpts{})
	b, err := st.CreateBudget(ctx, org.ID, 0, store.BudgetInput{Name: "GPUs", Amount: decimal.NewFromInt(1000),
		Currency: "USD", Period: "monthly", Thresholds: []int{50}, Recipients: []string{"lead@example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	im := ingest.NewImporter(st, ingest.PriceTable(pricing.DefaultLLMPrices()), pricing.DefaultCatalog())
	now := time.Date(2026, time.March, 18, 14, 30, 0, 0, time.UTC)
	body := "BilledCost,ChargePeriodStart,BillingCurrency,ServiceName\n600,2026-03-18T00:30:00Z,USD,Compute\n"
	if _, err := im.Import(ctx, ingest.ImportRequest{Org: org, FileName: "a.csv", Via: "test"}, strings.NewReader(body)); err != nil {
		t.Fatal(err)
	}
	loop := &schedule.Loop{Store: st, Notifier: notify.New(st, nil, notify.Config{BaseURL: "http://x", Log: slog.New(slog.DiscardHandler)}),
		BaseURL: "http://x", Notifies: on.Notifies, Now: func() time.Time { return now }}
	claimed := func() int {
		alerts, err := st.BudgetAlerts(ctx, org.ID, b.ID)
		if err != nil {
			t.Fatal(err)
		}
		return len(alerts)
	}
	if err := schedule.Evaluate(ctx, loop, org); err != nil {
		t.Fatal(err)
	}
	if n := claimed(); n != 0 {
		t.Fatalf("alerts on Free: %d", n)
	}
	if err := st.SetOrgPlan(ctx, org.ID, "team"); err != nil {
		t.Fatal(err)
	}
	org, _ = st.Org(ctx, org.ID)
	if err := schedule.Evaluate(ctx, loop, org); err != nil {
		t.Fatal(err)
	}
	if n := claimed(); n != 1 {
		t.Fatalf("alerts on Team: %d, want 1", n)
	}
	if !(billing.Config{}).Notifies(store.Org{Plan: "free"}) || on.Notifies(store.Org{Plan: "free"}) {
		t.Fatal("Notifies: want every org with billing off, none on Free with it on")
	}
}
