package digest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/digest"
	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/ingest/curgen"
	"github.com/burnrate/burnrate/pricing"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestDigestSavingsLine: an org whose bills show an unowned GPU instance
// running around the clock gets one line about it, with the Savings page's
// total; an org with nothing to save gets none.
func TestDigestSavingsLine(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	org, _ := storetest.Org(t, st, storetest.OrgOpts{Name: "GPU Co"})
	var f strings.Builder
	f.WriteString("BilledCost,ChargePeriodStart,ChargePeriodEnd,BillingCurrency,ProviderName,ServiceName,ChargeCategory,SkuMeter,ResourceId,ConsumedQuantity,ConsumedUnit,BillingAccountId\n")
	first := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := range 10 {
		d := first.AddDate(0, 0, i)
		fmt.Fprintf(&f, "390.912,%s,%s,USD,AWS,Amazon Elastic Compute Cloud,Usage,USE1-BoxUsage:g5.48xlarge,i-0abc,24,Hours,acct-1\n",
			d.Format(time.RFC3339), d.AddDate(0, 0, 1).Format(time.RFC3339))
	}
	im := ingest.NewImporter(st, ingest.PriceTable(pricing.DefaultLLMPrices()), pricing.DefaultCatalog())
	if _, err := im.Import(context.Background(), ingest.ImportRequest{Org: org, FileName: "gpu.csv", Via: "test"},
		strings.NewReader(f.String())); err != nil {
		t.Fatal(err)
	}

	d, err := digest.Build(context.Background(), st, org, date("2026-03-10"), morningAfter(date("2026-03-10")))
	if err != nil {
		t.Fatal(err)
	}
	// 16.288 × 24 a day, × 730/24 a month.
	if len(d.Savings) != 1 || d.Savings[0].Name != "USD" || !d.Savings[0].Amount.Equal(decimal.RequireFromString("11890.24")) {
		t.Fatalf("savings = %+v", d.Savings)
	}
	nt, err := digest.Render(d, "https://burnrate.example.com", "")
	if err != nil {
		t.Fatal(err)
	}
	if want := "Savings found: 11,890.24 USD/month — see Savings https://burnrate.example.com/savings"; !strings.Contains(nt.Text, want) {
		t.Errorf("text lacks %q:\n%s", want, nt.Text)
	}
	if !strings.Contains(nt.HTML, `data-testid="savings-line"`) || !strings.Contains(nt.HTML, "https://burnrate.example.com/savings") {
		t.Errorf("HTML lacks the savings line:\n%s", nt.HTML)
	}

	// The digest of a day before the instance had run a week finds nothing.
	d, err = digest.Build(context.Background(), st, org, date("2026-03-04"), morningAfter(date("2026-03-04")))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Savings) != 0 {
		t.Fatalf("savings on the 4th = %+v", d.Savings)
	}
	if nt, err = digest.Render(d, "https://burnrate.example.com", ""); err != nil || strings.Contains(nt.Text, "Savings found") {
		t.Errorf("a digest with nothing found mentions savings (%v):\n%s", err, nt.Text)
	}
}

// TestDigestSavingsLineShortBill: the digest's line is the Savings page's
// total, and one day of bills (the two-hour CUR of `curgen -rows 3000`)
// is too few to scale to a month (docs/savings.md): no "Savings found"
// line from a single hour of p5 usage.
func TestDigestSavingsLineShortBill(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	org, _ := storetest.Org(t, st, storetest.OrgOpts{Name: "Bench Co"})
	var cur strings.Builder
	if err := curgen.Generate(&cur, 3000, 1); err != nil {
		t.Fatal(err)
	}
	im := ingest.NewImporter(st, ingest.PriceTable(pricing.DefaultLLMPrices()), pricing.DefaultCatalog())
	if _, err := im.Import(context.Background(), ingest.ImportRequest{Org: org, FileName: "cur.csv", Via: "test"},
		strings.NewReader(cur.String())); err != nil {
		t.Fatal(err)
	}
	d, err := digest.Build(context.Background(), st, org, date("2026-01-01"), morningAfter(date("2026-01-01")))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Savings) != 0 {
		t.Fatalf("savings per month from one day of bills = %+v", d.Savings)
	}
	if nt, err := digest.Render(d, "https://burnrate.example.com", ""); err != nil || strings.Contains(nt.Text, "Savings found") {
		t.Errorf("the digest of a one-day bill mentions savings (%v):\n%s", err, nt.Text)
	}
}
