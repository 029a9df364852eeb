package spend_test

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/budget"
	"github.com/burnrate/burnrate/demo"
	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/pricing"
	"github.com/burnrate/burnrate/spend"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestDayReportsTheDemoAnomaly reads the demo org's burst day with spend.Day:
// the day is flagged in the currency it hit, driven by AWS; what it reports
// adds up (groups to the day's spend, movers to the change from the day
// before); and the GPU-hours and tokens behind the money are there.
func TestDayReportsTheDemoAnomaly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	org, _ := storetest.Org(t, st, storetest.OrgOpts{})
	im := ingest.NewImporter(st, ingest.PriceTable(pricing.DefaultLLMPrices()), pricing.DefaultCatalog())
	res, err := demo.Seed(ctx, st, im, org, time.Date(2026, time.March, 18, 14, 30, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := spend.Day(ctx, st, org.ID, res.Anomaly, "", budget.EndOf(res.Anomaly))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Group != store.DimProvider || !rep.Day.Equal(res.Anomaly) || len(rep.Currencies) != 2 {
		t.Fatalf("report of %s by %s: %d currencies, want 2", rep.Day.Format(time.DateOnly), rep.Group, len(rep.Currencies))
	}
	anomalies, gpuHours, tokens := 0, decimal.Zero, int64(0)
	for _, c := range rep.Currencies {
		sum := decimal.Zero
		for i, g := range c.Groups {
			sum = sum.Add(g.Amount)
			if i > 0 && g.Amount.GreaterThan(c.Groups[i-1].Amount) {
				t.Errorf("%s groups out of order: %+v", c.Currency, c.Groups)
			}
		}
		if !sum.Equal(c.Spent) {
			t.Errorf("%s groups add up to %s, the day spent %s", c.Currency, sum, c.Spent)
		}
		change := decimal.Zero
		for _, m := range c.Movers {
			change = change.Add(m.Change())
		}
		if len(c.Movers) < spend.TopMovers && !change.Equal(c.Change()) {
			t.Errorf("%s movers change by %s, the day by %s", c.Currency, change, c.Change())
		}
		if len(c.Drivers) == 0 || len(c.Drivers) > spend.DayDrivers {
			t.Errorf("%s: %d drivers", c.Currency, len(c.Drivers))
		}
		if !c.Month.MonthToDate.GreaterThanOrEqual(c.Spent) || c.Month.Forecast.LessThan(c.Month.MonthToDate) {
			t.Errorf("%s month: %s to date, %s forecast, %s on the day", c.Currency, c.Month.MonthToDate, c.Month.Forecast, c.Spent)
		}
		if c.Anomaly != nil {
			anomalies++
			if !c.Anomaly.Day.Equal(res.Anomaly) || !c.Anomaly.Amount.Equal(c.Spent) || c.Anomaly.Drivers[0].Group != "AWS" {
				t.Errorf("%s anomaly = %+v, want %s driven by AWS", c.Currency, c.Anomaly, res.Anomaly.Format(time.DateOnly))
			}
		}
		gpuHours = gpuHours.Add(c.GPUHours)
		tokens += c.InputTokens + c.OutputTokens
	}
	if anomalies != 1 || !gpuHours.IsPositive() || tokens <= 0 {
		t.Fatalf("%d anomalies, %s GPU-hours, %d tokens; want the burst, GPUs and tokens", anomalies, gpuHours, tokens)
	}

	// The day before is the report of the day before.
	before, err := spend.Day(ctx, st, org.ID, budget.AddDays(res.Anomaly, -1), "", budget.EndOf(budget.AddDays(res.Anomaly, -1)))
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range rep.Currencies {
		if b := before.Currencies[i]; b.Currency != c.Currency || !b.Spent.Equal(c.DayBefore) || b.Anomaly != nil {
			t.Errorf("%s: the day before spent %s (anomaly %v); the report says %s", c.Currency, b.Spent, b.Anomaly, c.DayBefore)
		}
	}
}
