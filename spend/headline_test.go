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

// TestHeadlineMatchesDayReport checks the headline's yesterday and month
// cards, read from the org's daily totals in one query, against the
// digest's report of yesterday (spend.Day) and the month cards of last
// month's first day to today, to the last digit and currency for currency:
// on days in a month's middle, its first and second days, and with a
// currency that spent only weeks before.
func TestHeadlineMatchesDayReport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	org, _ := storetest.Org(t, st, storetest.OrgOpts{})
	end := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)

	var csv strings.Builder
	csv.WriteString("BilledCost,EffectiveCost,ChargePeriodStart,ChargePeriodEnd,BillingCurrency,ProviderName,ServiceName," +
		"ServiceCategory,ChargeCategory,SkuMeter,ResourceId,ConsumedQuantity,ConsumedUnit,BillingAccountId\n")
	row := func(d time.Time, cur, provider, amount string) {
		fmt.Fprintf(&csv, "%s,%s,%s,%s,%s,%s,Compute,Compute,Usage,box,r-1,24,Hours,acct-1\n", amount, amount,
			d.Format(time.RFC3339), d.AddDate(0, 0, 1).Format(time.RFC3339), cur, provider)
	}
	for i := -120; i <= 0; i++ {
		d := budget.AddDays(end, i)
		row(d, "USD", "AWS", fmt.Sprintf("%d.%04d", 100+i%17, (i*i*7919)%10000))
		if i%3 == 0 {
			row(d, "USD", "OpenAI", fmt.Sprintf("%d.%06d", 3+i%5, (i*104729)%1000000+1000000))
		}
		// EUR spends only from 80 to 50 days before the end.
		if i >= -80 && i <= -50 {
			row(d, "EUR", "Google Cloud", fmt.Sprintf("7.%03d", (i*31)%1000+1000))
		}
	}
	im := ingest.NewImporter(st, ingest.PriceTable(pricing.DefaultLLMPrices()), pricing.DefaultCatalog())
	if _, err := im.Import(ctx, ingest.ImportRequest{Org: org, FileName: "focus.csv", Via: "test"}, strings.NewReader(csv.String())); err != nil {
		t.Fatal(err)
	}

	for _, today := range []time.Time{
		end, budget.AddDays(end, -19), budget.AddDays(end, -18), // the 1st and 2nd of November
		budget.AddDays(end, -49), budget.AddDays(end, -50), // the 1st of October, EUR's last day before
		time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 9, 30, 0, 0, 0, 0, time.UTC),
		// Spend seen in the days before yesterday but none this month or last.
		time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC),
	} {
		name := today.Format(time.DateOnly)
		yesterday := budget.AddDays(today, -1)
		fresh, err := freshness.Load(ctx, st, org, today.Add(9*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		h, err := spend.BuildHeadline(ctx, st, org, fresh)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := spend.Day(ctx, st, org.ID, yesterday, store.DimProvider, budget.EndOf(yesterday))
		if err != nil {
			t.Fatal(err)
		}
		monthRows, err := st.SpendByDay(ctx, org.ID, store.SpendFilter{
			From: time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, -1, 0), To: today}, "")
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]spend.HeadlineCurrency{}
		// A currency without a card of its own shows nothing this month
		// against nothing last month, to the same day, on the same basis.
		for _, c := range rep.Currencies {
			hc := want[c.Currency]
			hc.Currency, hc.Day.Currency, hc.Day.Spent, hc.Day.DayBefore = c.Currency, c.Currency, c.Spent, c.DayBefore
			hc.Month = spend.MonthCards([]store.DaySpend{{Day: today, Currency: c.Currency, Amount: decimal.Zero}},
				fresh.Current(freshness.Scope{}))[0]
			want[c.Currency] = hc
		}
		for _, m := range spend.MonthCards(monthRows, fresh.Current(freshness.Scope{})) {
			hc := want[m.Currency]
			hc.Currency, hc.Month = m.Currency, m
			want[m.Currency] = hc
		}
		if len(h.Currencies) != len(want) {
			t.Errorf("%s: headline currencies %+v, want %+v", name, h.Currencies, want)
			continue
		}
		for _, c := range h.Currencies {
			w, ok := want[c.Currency]
			switch {
			case !ok:
				t.Errorf("%s: headline has %s, the day report and cards do not", name, c.Currency)
			case c.Day.Currency != w.Day.Currency || c.Day.Spent.String() != w.Day.Spent.String() ||
				c.Day.DayBefore.String() != w.Day.DayBefore.String():
				t.Errorf("%s %s: yesterday %s (%q) against %s, want %s (%q) against %s", name, c.Currency,
					c.Day.Spent, c.Day.Currency, c.Day.DayBefore, w.Day.Spent, w.Day.Currency, w.Day.DayBefore)
			case fmt.Sprint(c.Month) != fmt.Sprint(w.Month):
				t.Errorf("%s %s: month card %+v, want %+v", name, c.Currency, c.Month, w.Month)
			}
		}
	}
}

// TestHeadlineBudgetIsTheTightest: the budget a currency's day and month
// are measured against is the smallest of its budgets on all spend for
// that period, not their sum (each covers all spend); scoped budgets and
// other currencies' play no part.
func TestHeadlineBudgetIsTheTightest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	org, _ := storetest.Org(t, st, storetest.OrgOpts{})
	for _, in := range []store.BudgetInput{
		{Name: "all", Amount: decimal.RequireFromString("95000"), Currency: "USD", Period: "monthly"},
		{Name: "all, stricter", Amount: decimal.RequireFromString("80000"), Currency: "USD", Period: "monthly"},
		{Name: "AWS", Amount: decimal.RequireFromString("10"), Currency: "USD", Period: "monthly", Scope: store.BudgetScope{Provider: "AWS"}},
		{Name: "day", Amount: decimal.RequireFromString("300"), Currency: "USD", Period: "daily"},
		{Name: "day, looser", Amount: decimal.RequireFromString("500"), Currency: "USD", Period: "daily"},
		{Name: "euros", Amount: decimal.RequireFromString("70"), Currency: "EUR", Period: "monthly"},
	} {
		in.Thresholds = []int{100}
		if _, err := st.CreateBudget(ctx, org.ID, 0, in); err != nil {
			t.Fatal(err)
		}
	}
	fresh, err := freshness.Load(ctx, st, org, time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	h, err := spend.BuildHeadline(ctx, st, org, fresh)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{"USD": {"300", "80000"}, "EUR": {"0", "70"}}
	for _, c := range h.Currencies {
		w, ok := want[c.Currency]
		if !ok {
			t.Fatalf("currency %s in the headline", c.Currency)
		}
		delete(want, c.Currency)
		if c.DailyBudget.String() != w[0] || c.MonthlyBudget.String() != w[1] {
			t.Errorf("%s: daily budget %s, monthly %s; want %s and %s", c.Currency, c.DailyBudget, c.MonthlyBudget, w[0], w[1])
		}
	}
	if len(want) != 0 {
		t.Errorf("currencies missing from the headline: %v", want)
	}
}
