package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/pricing"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestDigestCommand prints an org's digest of a day over its daily budget:
// the text names the budget over and the day's spend; --json says so too;
// --send records the email delivery once, queued for the jobs of a
// running serve or worker.
func TestDigestCommand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.URL(t)
	st, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	org, _ := storetest.Org(t, st, storetest.OrgOpts{Name: "Acme ML"})
	im := ingest.NewImporter(st, ingest.PriceTable(pricing.DefaultLLMPrices()), pricing.DefaultCatalog())
	csv := "BilledCost,ChargePeriodStart,BillingCurrency,ProviderName,ServiceName,BillingAccountId\n" +
		"40.00,2026-03-09T12:00:00Z,USD,AWS,Compute,a\n1234.56,2026-03-10T12:00:00Z,USD,AWS,Compute,a\n"
	if _, err := im.Import(ctx, ingest.ImportRequest{Org: org, FileName: "f.csv", Via: "test"}, strings.NewReader(csv)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateBudget(ctx, org.ID, 0, store.BudgetInput{Name: "GPU cap", Amount: decimal.NewFromInt(1000),
		Currency: "USD", Period: "daily", Thresholds: []int{100}}); err != nil {
		t.Fatal(err)
	}
	digestCmd := func(args ...string) string {
		t.Helper()
		var out bytes.Buffer
		err := run(ctx, append([]string{"digest", "--org", org.Slug, "--date", "2026-03-10"}, args...),
			env(map[string]string{"DATABASE_URL": url, "LOG_LEVEL": "error"}), &out, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		return out.String()
	}

	text := digestCmd()
	for _, want := range []string{"Subject: Acme ML: 1,234.56 USD on Mar 10 — 1 budget over", "OVER  “GPU cap” (daily): 1,234.56 USD of 1,000.00 USD (123%)"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}

	var js struct {
		Date       string
		Over       bool
		Currencies []struct{ Spent string }
		Budgets    []struct {
			Name string
			Over bool
		}
	}
	if err := json.Unmarshal([]byte(digestCmd("--json")), &js); err != nil {
		t.Fatal(err)
	}
	if js.Date != "2026-03-10" || !js.Over || js.Currencies[0].Spent != "1234.56" || !js.Budgets[0].Over {
		t.Errorf("json %+v", js)
	}

	for range 2 {
		out := digestCmd("--send")
		if !strings.Contains(out, "email") || !strings.Contains(out, "pending") {
			t.Errorf("send:\n%s", out)
		}
	}
	ds, err := st.Deliveries(ctx, org.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ds[0].Kind != "digest" || ds[0].Channel != "email" {
		t.Errorf("deliveries %+v, want one digest email", ds)
	}
}
