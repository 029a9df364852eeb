package spend_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/budget"
	"github.com/burnrate/burnrate/freshness"
	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/pricing"
	"github.com/burnrate/burnrate/spend"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestComparisonsUseCompleteDays fixes the clock on a day whose bills have
// begun to arrive (a large partial day) and checks that day over day and
// week over week compare complete days, as the headline does: yesterday
// against the day before, and the 7 days to yesterday against the 7
// before, never today's partial day.
func TestComparisonsUseCompleteDays(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	org, _ := storetest.Org(t, st, storetest.OrgOpts{})
	today := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	yesterday := budget.AddDays(today, -1)

	// AWS spends 100 a day and OpenAI 10, except: yesterday AWS 130 and
	// OpenAI 25; the week before last AWS 90 a day; today (partial) AWS
	// 1000 and OpenAI 0.
	var csv strings.Builder
	csv.WriteString("BilledCost,EffectiveCost,ChargePeriodStart,ChargePeriodEnd,BillingCurrency,ProviderName,ServiceName," +
		"ServiceCategory,ChargeCategory,SkuMeter,ResourceId,ConsumedQuantity,ConsumedUnit,BillingAccountId\n")
	row := func(d time.Time, provider string, amount int) {
		fmt.Fprintf(&csv, "%d,%d,%s,%s,USD,%s,Compute,Compute,Usage,box,r-1,24,Hours,acct-1\n", amount, amount,
			d.Format(time.RFC3339), d.AddDate(0, 0, 1).Format(time.RFC3339), provider)
	}
	for i := -29; i <= 0; i++ {
		d := budget.AddDays(today, i)
		aws, openai := 100, 10
		switch {
		case i == 0:
			aws, openai = 1000, 0
		case i == -1:
			aws, openai = 130, 25
		case i <= -8 && i >= -14:
			aws = 90
		}
		row(d, "AWS", aws)
		if openai > 0 {
			row(d, "OpenAI", openai)
		}
	}
	im := ingest.NewImporter(st, ingest.PriceTable(pricing.DefaultLLMPrices()), pricing.DefaultCatalog())
	if _, err := im.Import(ctx, ingest.ImportRequest{Org: org, FileName: "focus.csv", Via: "test"}, strings.NewReader(csv.String())); err != nil {
		t.Fatal(err)
	}

	o, err := spend.Dashboard(ctx, st, org.ID, store.SpendFilter{From: budget.AddDays(today, -29), To: today}, store.DimProvider, today)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Currencies) != 1 {
		t.Fatalf("%d currencies", len(o.Currencies))
	}
	co := o.Currencies[0]
	if !co.MoversDay.Equal(yesterday) {
		t.Fatalf("movers end on %s, want yesterday %s", co.MoversDay.Format(time.DateOnly), yesterday.Format(time.DateOnly))
	}
	want := func(what string, ms []spend.Mover, group string, before, after int64) {
		t.Helper()
		for _, m := range ms {
			if m.Group == group {
				if !m.Before.Equal(decimal.NewFromInt(before)) || !m.After.Equal(decimal.NewFromInt(after)) {
					t.Errorf("%s %s: %s → %s, want %d → %d", what, group, m.Before, m.After, before, after)
				}
				return
			}
		}
		t.Errorf("%s: no %s among %+v", what, group, ms)
	}
	want("day over day", co.DoD, "AWS", 100, 130)
	want("day over day", co.DoD, "OpenAI", 10, 25)
	want("week over week", co.WoW, "AWS", 7*90, 6*100+130)
	if len(co.WoW) != 2 { // OpenAI: 6×10+25 against 7×10
		t.Errorf("week over week = %+v, want AWS and OpenAI", co.WoW)
	}

	// The headline's yesterday is the same day, with the same numbers.
	rep, err := freshness.Load(ctx, st, org, today.Add(9*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	h, err := spend.BuildHeadline(ctx, st, org, rep)
	if err != nil {
		t.Fatal(err)
	}
	after, before := decimal.Zero, decimal.Zero
	for _, m := range co.DoD {
		after, before = after.Add(m.After), before.Add(m.Before)
	}
	if !h.Yesterday.Equal(co.MoversDay) || len(h.Currencies) != 1 || !h.Currencies[0].Day.Spent.Equal(after) ||
		!h.Currencies[0].Day.DayBefore.Equal(before) {
		t.Fatalf("headline: %s spent %+v; day over day: %s → %s", h.Yesterday.Format(time.DateOnly), h.Currencies, before, after)
	}

	// A range that ends before yesterday compares its own last day.
	o, err = spend.Dashboard(ctx, st, org.ID, store.SpendFilter{From: budget.AddDays(today, -20), To: budget.AddDays(today, -8)}, store.DimProvider, today)
	if err != nil {
		t.Fatal(err)
	}
	if co := o.Currencies[0]; !co.MoversDay.Equal(budget.AddDays(today, -8)) {
		t.Errorf("a past range's movers end on %s, want its last day", co.MoversDay.Format(time.DateOnly))
	}
}
