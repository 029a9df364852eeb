package spend

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/store"
)

func TestAnomaliesAndMovers(t *testing.T) {
	t.Parallel()
	day0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var rows []store.DaySpend
	add := func(i int, group, amount string) {
		rows = append(rows, store.DaySpend{Day: day0.AddDate(0, 0, i), Currency: "USD", Group: group, Amount: decimal.RequireFromString(amount)})
	}
	for i := 0; i < 20; i++ {
		add(i, "aws", "100")
		add(i, "openai", "20")
	}
	add(10, "aws", "300")    // day 10: 420 against a median of 120 → anomaly, driven by aws
	add(14, "openai", "100") // day 14: 220, less than 2 × 120 → not one
	add(19, "gcp", "5")      // a new group on the last day
	s := Build(rows, day0, day0.AddDate(0, 0, 19), store.DimProvider)[0]

	got := Anomalies(s, 0)
	if len(got) != 1 || !got[0].Day.Equal(day0.AddDate(0, 0, 10)) || got[0].Drivers[0].Group != "aws" || !got[0].Baseline.Equal(decimal.NewFromInt(120)) {
		t.Fatalf("anomalies = %+v", got)
	}

	// Small amounts are never anomalies, however they grow.
	small := Build([]store.DaySpend{
		{Day: day0, Currency: "USD", Amount: decimal.NewFromInt(1)}, {Day: day0.AddDate(0, 0, 1), Currency: "USD", Amount: decimal.NewFromInt(1)},
		{Day: day0.AddDate(0, 0, 2), Currency: "USD", Amount: decimal.NewFromInt(1)}, {Day: day0.AddDate(0, 0, 3), Currency: "USD", Amount: decimal.NewFromInt(1)},
		{Day: day0.AddDate(0, 0, 4), Currency: "USD", Amount: decimal.NewFromInt(1)}, {Day: day0.AddDate(0, 0, 5), Currency: "USD", Amount: decimal.NewFromInt(1)},
		{Day: day0.AddDate(0, 0, 6), Currency: "USD", Amount: decimal.NewFromInt(1)}, {Day: day0.AddDate(0, 0, 7), Currency: "USD", Amount: decimal.NewFromInt(40)},
	}, day0, day0.AddDate(0, 0, 7), store.DimProvider)[0]
	if a := Anomalies(small, 0); len(a) != 0 {
		t.Fatalf("40 after 1s is flagged: %+v", a)
	}

	dod := Movers(s, 19, 1, 10)
	if len(dod) != 1 || dod[0].Group != "gcp" || dod[0].Percent() != "new" {
		t.Fatalf("day over day = %+v", dod)
	}
	wow := Movers(s, 19, 7, 10)
	// Days 13–19 vs 6–12: aws 700 vs 1000 (day 10's burst), openai 220 vs 140, gcp 5 vs 0.
	if len(wow) != 3 || wow[0].Group != "aws" || !wow[0].Change().Equal(decimal.NewFromInt(-300)) || wow[1].Group != "openai" {
		t.Fatalf("week over week = %+v", wow)
	}
	if Movers(s, 5, 7, 10) != nil {
		t.Fatal("movers without two full weeks")
	}
}

// TestFoldModelsPerCurrency checks that the models beyond the top of each
// currency are summed per currency, never across currencies.
func TestFoldModelsPerCurrency(t *testing.T) {
	t.Parallel()
	var ms []store.ModelUsage
	for i, cur := range []string{"USD", "EUR", "USD", "USD", "EUR", "EUR", "USD"} {
		ms = append(ms, store.ModelUsage{Model: "m" + string(rune('a'+i)), Currency: cur, Amount: decimal.NewFromInt(int64(100 - i)),
			InputTokens: 10, Requests: 1})
	}
	got := FoldModels(ms, 2)
	if len(got) != 6 {
		t.Fatalf("folded = %+v, want 2 + 2 kept and one other per currency", got)
	}
	for _, want := range []store.ModelUsage{
		{Model: "Other (2 more models)", Currency: "USD", Amount: decimal.NewFromInt(97 + 94), InputTokens: 20, Requests: 2},
		{Model: "Other (1 more model)", Currency: "EUR", Amount: decimal.NewFromInt(95), InputTokens: 10, Requests: 1},
	} {
		found := false
		for _, m := range got[4:] {
			if m.Model == want.Model && m.Currency == want.Currency && m.Amount.Equal(want.Amount) && m.InputTokens == want.InputTokens && m.Requests == want.Requests {
				found = true
			}
		}
		if !found {
			t.Errorf("no %+v among the sums %+v", want, got[4:])
		}
	}
}

// TestNoAnomalyAgainstDaysBeforeTheFirstBills: the days before a series'
// first spend are no baseline. A new org's weekday after a weekend dip,
// measured against three days before its bills began, looked like twice
// the median; it is judged once a week of bills precedes it.
func TestNoAnomalyAgainstDaysBeforeTheFirstBills(t *testing.T) {
	t.Parallel()
	day0 := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	var rows []store.DaySpend
	// Bills from day 3 (a Friday): 2,300 on weekdays, 1,100 at weekends.
	for i := 3; i < 30; i++ {
		amount := decimal.NewFromInt(2300)
		if wd := day0.AddDate(0, 0, i).Weekday(); wd == time.Saturday || wd == time.Sunday {
			amount = decimal.NewFromInt(1100)
		}
		rows = append(rows, store.DaySpend{Day: day0.AddDate(0, 0, i), Currency: "USD", Group: "aws", Amount: amount})
	}
	rows = append(rows, store.DaySpend{Day: day0.AddDate(0, 0, 25), Currency: "USD", Group: "gcp", Amount: decimal.NewFromInt(9000)})
	s := Build(rows, day0, day0.AddDate(0, 0, 29), store.DimProvider)[0]
	got := Anomalies(s, 0)
	if len(got) != 1 || !got[0].Day.Equal(day0.AddDate(0, 0, 25)) {
		t.Fatalf("anomalies = %+v, want day 25's burst only", got)
	}
	// (Without the rule, day 7, a Tuesday of 2,300, was one: the median of
	// days 0–6 was 1,100, of three zeros before the bills, two weekend days
	// and two weekdays.)
}
