package store_test

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/migrations"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// basisSource is a sliceSource whose file states one cost basis.
type basisSource struct {
	sliceSource
	basis store.CostBasis
}

func (s *basisSource) CostBasis() store.CostBasis { return s.basis }

// wantSpendByMatchesCube fails unless every rollup of the org is exact
// (store.RollupsDiffer, days in loc): daily_spend_by holds, for every
// dimension, exactly the sums of daily_spend over the other eight, and
// month_to_date_drivers and month_to_date_spend_by their sums of each
// day's month to date: the same keys (none left at zero) and the same
// measures to the last digit; and daily_spend, gpu_resource_daily and
// llm_hourly are what the charges give.
func wantSpendByMatchesCube(t *testing.T, st *store.Store, orgID int64, loc *time.Location, step string) {
	t.Helper()
	diffs, err := st.RollupsDiffer(context.Background(), orgID, loc)
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) > 0 {
		t.Fatalf("%s: %s", step, strings.Join(diffs, "; "))
	}
	var byRows, spendRows int
	if err := st.Pool().QueryRow(context.Background(), `SELECT (SELECT count(*) FROM daily_spend_by WHERE org_id = $1),
		(SELECT count(*) FROM daily_spend WHERE org_id = $1)`, orgID).Scan(&byRows, &spendRows); err != nil {
		t.Fatal(err)
	}
	if (byRows == 0) != (spendRows == 0) {
		t.Fatalf("%s: %d rows in daily_spend_by, %d in daily_spend", step, byRows, spendRows)
	}
}

// TestSpendByDimensionFollowsTheCube: the per-dimension rollup stays equal
// to the wide one through everything that writes it: imports of each kind
// (with amounts of many decimals), a restated period, an amortized export
// beside the actual-cost one, a deleted import, a rebuild in another time
// zone, and charges spread over many keys (random data).
func TestSpendByDimensionFollowsTheCube(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	data := genSpendData(t, st, 7)
	wantSpendByMatchesCube(t, st, data.org.ID, data.org.Location(), "random imports")
	loc, _ := time.LoadLocation("Asia/Tokyo")
	if err := st.RebuildDailySpend(ctx, data.org.ID, loc); err != nil {
		t.Fatal(err)
	}
	wantSpendByMatchesCube(t, st, data.org.ID, loc, "rebuilt in another time zone")

	// The steps below import in UTC, the org's zone.
	org, _ := storetest.Org(t, st, storetest.OrgOpts{})
	if org.TimeZone != "UTC" {
		t.Fatalf("org's time zone %q, want UTC", org.TimeZone)
	}

	manyDecimals := func(c *store.Charge) {
		c.BilledCost = decimal.RequireFromString("0.123456789012345")
		c.EffectiveCost = decimal.RequireFromString("0.000000000001")
		c.GPUType, c.GPUHours, c.Model = "H100", decimal.RequireFromString("1.25"), "gpt-4o"
		c.InputTokens, c.OutputTokens = 1000, 10
	}
	importRows(t, st, org, store.DedupeNone,
		charge(2, "2026-11-01 00:00", "10.10"), charge(3, "2026-11-02 00:00", "5.05", manyDecimals))
	wantSpendByMatchesCube(t, st, org.ID, time.UTC, "first November export")
	// The restated export replaces November: the row of the 2nd goes, its
	// keys with it.
	importRows(t, st, org, store.DedupeNone, charge(2, "2026-11-01 00:00", "10.10"), charge(3, "2026-11-03 00:00", "2.5"))
	wantSpendByMatchesCube(t, st, org.ID, time.UTC, "restated November")
	var n int
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM daily_spend_by WHERE org_id = $1 AND day = '2026-11-02'`, org.ID).Scan(&n); err != nil || n != 0 {
		t.Fatalf("keys of the replaced day: %d (%v), want none", n, err)
	}

	// An amortized export of the same period moves costs between columns.
	amortized := []store.Charge{charge(2, "2026-11-01 00:00", "9", func(c *store.Charge) { c.BilledCost, c.Team = decimal.Zero, "finance" })}
	imp, err := st.CreateImport(ctx, store.NewImport{OrgID: org.ID, FileName: "amortized.csv", SHA256: []byte("amortized"), Via: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.InTx(ctx, func(tx *store.Store) error {
		_, err := tx.WriteCharges(ctx, org.ID, imp.ID, time.UTC, store.DedupeNone,
			&basisSource{sliceSource: sliceSource{rows: amortized}, basis: store.CostAmortized})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	wantSpendByMatchesCube(t, st, org.ID, time.UTC, "amortized export beside actual cost")

	// Keyed rows: skipped, then restated buckets.
	key := func(src, k string) func(*store.Charge) {
		return func(c *store.Charge) {
			c.Source, c.DedupeKey, c.BillingPeriodStart, c.Model = src, k, time.Time{}, "claude-sonnet-4-5"
		}
	}
	importRows(t, st, org, store.DedupeSkip, charge(2, "2026-11-04 10:00", "0.5", key("litellm-spend", "a")))
	importRows(t, st, org, store.DedupeReplace, charge(2, "2026-11-04 00:00", "3", key("openai-usage", "d1")))
	importRows(t, st, org, store.DedupeReplace, charge(2, "2026-11-04 00:00", "4.75", key("openai-usage", "d1")))
	wantSpendByMatchesCube(t, st, org.ID, time.UTC, "keyed imports")

	// Deleting an import takes its rows out of both.
	if err := st.DeleteImport(ctx, org.ID, imp.ID); err != nil {
		t.Fatal(err)
	}
	wantSpendByMatchesCube(t, st, org.ID, time.UTC, "deleted import")
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM daily_spend WHERE org_id = $1 AND team = 'finance'`, org.ID).Scan(&n); err != nil || n != 0 {
		t.Fatalf("rollup rows of the deleted import's own slice: %d (%v), want none", n, err)
	}
}

// TestUnfilteredBreakdownEqualsTheCube: a breakdown with no filter, read
// from month_to_date_drivers and month_to_date_spend_by, is the one the
// wide rollup gives, driver by driver, for ranges within a month, across
// months, and of whole months, in both cost bases.
func TestUnfilteredBreakdownEqualsTheCube(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	data := genSpendData(t, st, 11)
	for _, r := range [][2]string{
		{"2026-03-01", "2026-03-31"}, {"2026-03-01", "2026-03-30"}, {"2026-02-23", "2026-03-08"}, {"2026-02-23", "2026-04-05"}, {"2026-03-02", "2026-03-31"}, {"2026-02-20", "2026-04-10"}, {"2026-02-25", "2026-03-31"},
		{"2026-03-01", "2026-04-03"}, {"2026-03-05", "2026-03-20"}, {"2026-01-01", "2026-12-31"}, {"2026-03-31", "2026-04-01"},
		{"2026-03-03", "2026-04-28"}, {"2026-03-03", "2026-03-29"}, {"2026-02-02", "2026-03-01"},
	} {
		wantBreakdownEqualsCube(t, st, data.org.ID, day(r[0]), day(r[1]), "")
	}
}

func day(s string) time.Time { d, _ := time.Parse(time.DateOnly, s); return d }

// wantBreakdownEqualsCube fails unless orgID's unfiltered breakdown of
// from..to, in both cost bases, holds exactly the drivers, GPU types,
// models and facets that daily_spend grouped by hand gives.
func wantBreakdownEqualsCube(t *testing.T, st *store.Store, orgID int64, from, to time.Time, step string) {
	t.Helper()
	ctx := context.Background()
	for _, basis := range []store.CostBasis{store.CostBilled, store.CostAmortized} {
		f := store.SpendFilter{From: from, To: to, Cost: basis}
		what := fmt.Sprint(step, " ", from.Format(time.DateOnly), "..", to.Format(time.DateOnly), " ", basis)
		b, err := st.SpendBreakdown(ctx, orgID, f)
		if err != nil {
			t.Fatal(err)
		}
		col := "billed"
		if basis == store.CostAmortized {
			col = "effective"
		}
		want := map[string]decimal.Decimal{}
		rows, err := st.Pool().Query(ctx, `
			SELECT 'driver|' || provider || '|' || service || '|' || sub_account || '|' || model || '|' || currency, sum(`+col+`)
			FROM daily_spend WHERE org_id = $1 AND day BETWEEN $2 AND $3 GROUP BY 1
			UNION ALL
			SELECT 'gpu|' || gpu_type || '|' || currency || '|' || trim_scale(sum(gpu_hours)), sum(`+col+`)
			FROM daily_spend WHERE org_id = $1 AND day BETWEEN $2 AND $3 AND gpu_type <> '' GROUP BY gpu_type, currency
			UNION ALL
			SELECT 'model|' || model || '|' || currency || '|' || sum(input_tokens) || '|' || sum(output_tokens) || '|' || sum(requests), sum(`+col+`)
			FROM daily_spend WHERE org_id = $1 AND day BETWEEN $2 AND $3 AND model <> '' GROUP BY model, currency
			UNION ALL
			SELECT DISTINCT 'facet|' || k.dim || '|' || k.value, 0
			FROM daily_spend d
			CROSS JOIN LATERAL (VALUES ('provider', d.provider), ('service', d.service), ('sub_account', d.sub_account),
				('team', d.team), ('model', d.model), ('charge_category', d.charge_category), ('source', d.source)) k (dim, value)
			WHERE org_id = $1 AND day BETWEEN $2 AND $3 AND k.value <> ''`,
			orgID, f.From, f.To)
		if err != nil {
			t.Fatal(err)
		}
		var k string
		var v decimal.Decimal
		if _, err := pgx.ForEachRow(rows, []any{&k, &v}, func() error { want[k] = v; return nil }); err != nil {
			t.Fatal(err)
		}
		got := map[string]decimal.Decimal{}
		for _, d := range b.Drivers {
			got["driver|"+d.Provider+"|"+d.Service+"|"+d.Account+"|"+d.Model+"|"+d.Currency] = d.Amount
		}
		for _, g := range b.GPUs {
			got["gpu|"+g.GPUType+"|"+g.Currency+"|"+g.GPUHours.String()] = g.Amount
		}
		for _, m := range b.Models {
			got[fmt.Sprint("model|", m.Model, "|", m.Currency, "|", m.InputTokens, "|", m.OutputTokens, "|", m.Requests)] = m.Amount
		}
		for dim, name := range map[store.Dimension]string{store.DimProvider: "provider", store.DimService: "service",
			store.DimAccount: "sub_account", store.DimTeam: "team", store.DimModel: "model",
			store.DimCategory: "charge_category", store.DimSource: "source"} {
			for _, v := range b.Facets[dim] {
				got["facet|"+name+"|"+v] = decimal.Zero
			}
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d breakdown rows, want %d\ngot  %v\nwant %v", what, len(got), len(want), got, want)
		}
		equalSums(t, what, got, want)
	}
}

// TestMonthToDateReadsCoverEachDayOnce: the days whose months to date a
// range is read from, added and taken away, count each of its days once
// and no other day, and are at most its months and one day more: the
// month ends before its last month, its last day, and the day before its
// first unless that is a 1st.
func TestMonthToDateReadsCoverEachDayOnce(t *testing.T) {
	t.Parallel()
	start := time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 400; i++ {
		for _, n := range []int{1, 2, 6, 7, 13, 26, 28, 30, 31, 60, 90, 365, 732} {
			from := start.AddDate(0, 0, i)
			to := from.AddDate(0, 0, n-1)
			plus, minus := store.MonthToDateReads(from, to)
			seen := map[time.Time]int{}
			count := func(d time.Time, sign int) {
				for k := time.Date(d.Year(), d.Month(), 1, 0, 0, 0, 0, time.UTC); !k.After(d); k = k.AddDate(0, 0, 1) {
					seen[k] += sign
				}
			}
			for _, d := range plus {
				count(d, 1)
			}
			for _, d := range minus {
				count(d, -1)
			}
			for d, c := range seen {
				in := !d.Before(from) && !d.After(to)
				if in && c != 1 || !in && c != 0 {
					t.Fatalf("%s..%s: day %s counted %d times", from, to, d.Format(time.DateOnly), c)
				}
			}
			for d := from; !d.After(to); d = d.AddDate(0, 0, 1) {
				if seen[d] != 1 {
					t.Fatalf("%s..%s: day %s not read", from, to, d.Format(time.DateOnly))
				}
			}
			months := (to.Year()-from.Year())*12 + int(to.Month()-from.Month()) + 1
			if len(plus) != months || len(minus) > 1 {
				t.Fatalf("%s..%s: %d days added and %d taken away, want %d and at most 1", from, to, len(plus), len(minus), months)
			}
		}
	}
	if plus, minus := store.MonthToDateReads(day("2026-03-05"), day("2026-03-03")); len(plus) != 0 || len(minus) != 0 {
		t.Fatalf("2026-03-05..2026-03-03: %v less %v, want no day", plus, minus)
	}
	plus, minus := store.MonthToDateReads(day("2026-07-25"), day("2026-10-22"))
	if want := []time.Time{day("2026-07-31"), day("2026-08-31"), day("2026-09-30"), day("2026-10-22")}; !slices.Equal(plus, want) ||
		len(minus) != 1 || !minus[0].Equal(day("2026-07-24")) {
		t.Fatalf("2026-07-25..2026-10-22: %v less %v, want %v less 2026-07-24", plus, minus, want)
	}
}

// TestBreakdownFacetsFromPeriods: the unfiltered breakdown read from
// months to date (less those before the range) is the one daily_spend
// gives, for ranges starting and ending mid-week and mid-month, across a
// year boundary, of a single day and of 365 days; and a value whose only
// spend lies outside the range (in a month to date taken away) is no
// facet, nor after its charges are restated away or their import removed.
func TestBreakdownFacetsFromPeriods(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	org, user := storetest.Org(t, st, storetest.OrgOpts{})
	// Spend every day from November to February, two rows a day; a team
	// only on New Year's Eve, a model and a GPU type only mid-January (in
	// another account's bill), a charge category only on 1 February.
	var rows []store.Charge
	for d := day("2025-11-01"); !d.After(day("2026-02-28")); d = d.AddDate(0, 0, 1) {
		at := d.Format(time.DateOnly) + " 10:00"
		rows = append(rows,
			charge(len(rows)+2, at, fmt.Sprint(d.Day(), ".25"), func(c *store.Charge) { c.Team = "core" }),
			charge(len(rows)+3, at, "1.5", func(c *store.Charge) {
				c.ProviderName, c.ServiceName, c.Model, c.InputTokens, c.Requests = "OpenAI", "API", "gpt-4o", 100, 1
				c.EffectiveCost = decimal.RequireFromString("1.25")
			}))
	}
	rows = append(rows,
		charge(len(rows)+2, "2025-12-31 23:00", "7", func(c *store.Charge) { c.Team = "new-year" }),
		charge(len(rows)+3, "2026-02-01 00:00", "-3", func(c *store.Charge) { c.ChargeCategory = "Credit" }))
	finishedImport(t, st, org, "bill.csv", rows...)
	janOnly := finishedImport(t, st, org, "january.csv",
		charge(1, "2026-01-15 00:00", "40", func(c *store.Charge) {
			c.BillingAccountID, c.Model, c.OutputTokens = "222", "jan-model", 5
			c.GPUType, c.GPUHours = "H100", decimal.RequireFromString("2.5")
		}),
		charge(2, "2026-01-16 12:00", "0", func(c *store.Charge) { c.BillingAccountID, c.Model = "222", "jan-model" }))
	wantSpendByMatchesCube(t, st, org.ID, time.UTC, "imported")

	ranges := [][2]string{
		// Single days.
		{"2025-12-31", "2025-12-31"}, {"2026-01-01", "2026-01-01"}, {"2026-01-15", "2026-01-15"},
		// The ISO week across the year's end; mid-week and mid-month ends.
		{"2025-12-29", "2026-01-04"}, {"2025-12-31", "2026-01-01"}, {"2025-12-17", "2026-01-07"}, {"2025-11-05", "2026-02-26"},
		// Two months less a day at each end.
		{"2025-12-02", "2026-01-30"},
		// jan-model's spend outside the range.
		{"2026-01-01", "2026-01-14"}, {"2026-01-17", "2026-02-28"}, {"2026-01-02", "2026-01-31"},
		// Whole months; February less its Credit day.
		{"2026-01-01", "2026-01-31"}, {"2025-11-01", "2026-02-28"}, {"2026-02-02", "2026-02-28"},
		// 365 days.
		{"2025-03-01", "2026-02-28"}, {"2025-06-15", "2026-06-14"},
	}
	for _, r := range ranges {
		wantBreakdownEqualsCube(t, st, org.ID, day(r[0]), day(r[1]), "imported")
	}
	facets := func(from, to string) map[store.Dimension][]string {
		b, err := st.SpendBreakdown(ctx, org.ID, store.SpendFilter{From: day(from), To: day(to)})
		if err != nil {
			t.Fatal(err)
		}
		return b.Facets
	}
	if f := facets("2026-01-17", "2026-01-31"); slices.Contains(f[store.DimModel], "jan-model") || f[store.DimModel] == nil {
		t.Errorf("16 January ends before the range: models %v, want no jan-model", f[store.DimModel])
	}
	if f := facets("2026-01-02", "2026-01-31"); slices.Contains(f[store.DimTeam], "new-year") {
		t.Errorf("teams of January: %v, want no new-year", f[store.DimTeam])
	}
	if f := facets("2026-02-02", "2026-02-28"); !slices.Equal(f[store.DimCategory], []string{"Usage"}) {
		t.Errorf("categories of February less its 1st: %v, want [Usage]", f[store.DimCategory])
	}

	// December restated without New Year's Eve's team; then the January
	// bill removed.
	var december []store.Charge
	for _, c := range rows {
		if c.ChargePeriodStart.Month() == time.December && c.Team != "new-year" {
			december = append(december, c)
		}
	}
	finishedImport(t, st, org, "december-restated.csv", december...)
	wantSpendByMatchesCube(t, st, org.ID, time.UTC, "December restated")
	for _, r := range ranges {
		wantBreakdownEqualsCube(t, st, org.ID, day(r[0]), day(r[1]), "December restated")
	}
	if f := facets("2025-12-01", "2026-01-31"); slices.Contains(f[store.DimTeam], "new-year") {
		t.Errorf("after the restatement, teams %v, want no new-year", f[store.DimTeam])
	}
	if _, err := st.RemoveImport(ctx, org.ID, janOnly, user.ID, "web"); err != nil {
		t.Fatal(err)
	}
	wantSpendByMatchesCube(t, st, org.ID, time.UTC, "January's bill removed")
	for _, r := range ranges {
		wantBreakdownEqualsCube(t, st, org.ID, day(r[0]), day(r[1]), "January's bill removed")
	}
	if f := facets("2025-11-01", "2026-02-28"); slices.Contains(f[store.DimModel], "jan-model") {
		t.Errorf("after the removal, models %v, want no jan-model", f[store.DimModel])
	}
	var n int
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM month_to_date_spend_by WHERE org_id = $1 AND value IN ('jan-model', 'new-year', 'H100')`, org.ID).Scan(&n); err != nil || n != 0 {
		t.Fatalf("month_to_date_spend_by keys of charges gone: %d (%v), want none", n, err)
	}
}

// TestMigrationsOfPeriodRollups: 000030 and 000033 fill their rollups from
// the spend already rolled up, and their down migrations leave daily_spend
// written as before: past 000030 with no period rollup and no trigger left
// to need one, past 000033 with period_drivers and period_spend_by back,
// filled and kept.
func TestMigrationsOfPeriodRollups(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.URL(t)
	st, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	org, _ := storetest.Org(t, st, storetest.OrgOpts{})
	rows := []store.Charge{charge(2, "2025-12-30 00:00", "10.10"), charge(3, "2026-01-02 00:00", "5.05", func(c *store.Charge) {
		c.Model, c.Team, c.GPUType, c.GPUHours, c.InputTokens = "gpt-4o", "ml", "H100", decimal.RequireFromString("1.5"), 100
	})}
	finishedImport(t, st, org, "before.csv", rows...)
	// Undo 000030 (and every migration after it).
	ups, err := fs.Glob(migrations.FS, "*.up.sql")
	if err != nil {
		t.Fatal(err)
	}
	from := func(version string) (n int) {
		for _, name := range ups {
			if name >= version {
				n++
			}
		}
		return n
	}
	if err := migrations.Down(url, from("000030")); err != nil {
		t.Fatal(err)
	}
	wantTables := func(step string, want map[string]bool) {
		t.Helper()
		for table, exists := range want {
			var got *string
			if err := st.Pool().QueryRow(ctx, `SELECT to_regclass($1)::text`, table).Scan(&got); err != nil || (got != nil) != exists {
				t.Fatalf("%s: table %s exists: %v (%v), want %v", step, table, got != nil, err, exists)
			}
		}
	}
	wantTables("before 000030", map[string]bool{"period_spend_by": false, "month_to_date_drivers": false, "month_to_date_spend_by": false})
	// Written without the table, as a binary of the time wrote it: no
	// trigger is left to need it.
	oldBinaryImport(t, st, org, charge(2, "2026-02-01 00:00", "1", func(c *store.Charge) { c.BillingAccountID = "222" }))
	if err := migrations.Up(url); err != nil {
		t.Fatal(err)
	}
	wantSpendByMatchesCube(t, st, org.ID, time.UTC, "after 000033")
	wantBreakdownEqualsCube(t, st, org.ID, day("2025-12-01"), day("2026-02-28"), "after 000033")

	// Undo 000033 (and every migration after it): the period rollups are
	// back, equal to the spend by day, week and month, and kept by their
	// triggers again.
	if err := migrations.Down(url, from("000033")); err != nil {
		t.Fatal(err)
	}
	wantTables("before 000033", map[string]bool{"period_drivers": true, "period_spend_by": true, "month_to_date_drivers": false})
	oldBinaryImport(t, st, org, charge(3, "2026-02-14 00:00", "2.5", func(c *store.Charge) { c.BillingAccountID = "333" }))
	var missing, extra int
	err = st.Pool().QueryRow(ctx, `
		WITH cube AS (
			SELECT p.grain, p.start, provider, service, sub_account, model, currency,
				sum(billed) AS billed, sum(effective) AS effective, sum(rows) AS rows
			FROM daily_spend d
			CROSS JOIN LATERAL (VALUES ('day', d.day), ('week', d.day - extract(isodow FROM d.day)::int + 1),
				('month', d.day - extract(day FROM d.day)::int + 1)) p (grain, start)
			WHERE org_id = $1
			GROUP BY 1, 2, 3, 4, 5, 6, 7
			UNION ALL
			SELECT p.grain, p.start, k.dim, k.value, '', '', d.currency, sum(d.billed), sum(d.effective), sum(d.rows)
			FROM daily_spend d
			CROSS JOIN LATERAL (VALUES ('week', d.day - extract(isodow FROM d.day)::int + 1),
				('month', d.day - extract(day FROM d.day)::int + 1)) p (grain, start)
			CROSS JOIN LATERAL (VALUES ('total', ''), ('source', d.source), ('provider', d.provider),
				('service', d.service), ('sub_account', d.sub_account), ('team', d.team), ('model', d.model),
				('charge_category', d.charge_category), ('gpu_type', d.gpu_type)) k (dim, value)
			WHERE d.org_id = $1
			GROUP BY 1, 2, 3, 4, 7
		), m AS (
			SELECT grain, start, provider, service, sub_account, model, currency, billed, effective, rows::numeric
			FROM period_drivers WHERE org_id = $1
			UNION ALL
			SELECT grain, start, dim, value, '', '', currency, billed, effective, rows::numeric
			FROM period_spend_by WHERE org_id = $1
		)
		SELECT (SELECT count(*) FROM (SELECT * FROM cube EXCEPT ALL SELECT * FROM m) x),
			(SELECT count(*) FROM (SELECT * FROM m EXCEPT ALL SELECT * FROM cube) x)`, org.ID).Scan(&missing, &extra)
	if err != nil {
		t.Fatal(err)
	}
	if missing != 0 || extra != 0 {
		t.Fatalf("before 000033: period rollups differ from daily_spend: %d keys missing or different, %d extra", missing, extra)
	}
	if err := migrations.Up(url); err != nil {
		t.Fatal(err)
	}
	wantTables("after 000033 again", map[string]bool{"period_drivers": false, "period_spend_by": false, "month_to_date_drivers": true})
	wantSpendByMatchesCube(t, st, org.ID, time.UTC, "after 000033 again")
	wantBreakdownEqualsCube(t, st, org.ID, day("2025-12-01"), day("2026-02-28"), "after 000033 again")
}

// oldBinaryImport writes rows as a succeeded import the way a binary of
// before 000034 did, for a test that has migrated the schema down: into
// charges and daily_spend only, the triggers of that schema keeping the
// rollups derived from daily_spend.
func oldBinaryImport(t *testing.T, st *store.Store, org store.Org, rows ...store.Charge) {
	t.Helper()
	ctx := context.Background()
	var importID int64
	if err := st.Pool().QueryRow(ctx, `
		INSERT INTO imports (org_id, file_name, sha256, size_bytes, source, status, rows, finished_at)
		VALUES ($1, 'old.csv', $2, 1, 'aws-cur', 'succeeded', $3, now()) RETURNING id`,
		org.ID, []byte(fmt.Sprint(t.Name(), time.Now().UnixNano())), len(rows)).Scan(&importID); err != nil {
		t.Fatal(err)
	}
	for _, c := range rows {
		if _, err := st.Pool().Exec(ctx, `
			INSERT INTO charges (org_id, import_id, line, source, provider_name, service_name, service_category, sku,
				resource_id, region_id, sub_account_id, charge_category, charge_period_start, charge_period_end,
				billed_cost, effective_cost, list_cost, billing_currency, consumed_quantity, consumed_unit, team,
				x_instance_type, x_gpu_type, x_gpu_count, x_gpu_hours, x_model, x_input_tokens, x_output_tokens,
				x_cached_tokens, x_requests, x_priced_by_us, billing_account_id, billing_period_start, dedupe_key)
			VALUES ($1, $2, $3, $4, $5, $6, '', '', '', '', $7, $8, $9, $10, $11, $12, 0, $13, 0, '', $14, '', $15, 0,
				$16, $17, $18, $19, $20, $21, false, $22, $23, '')`,
			org.ID, importID, c.Line, c.Source, c.ProviderName, c.ServiceName, c.SubAccountID, c.ChargeCategory,
			c.ChargePeriodStart, c.ChargePeriodEnd, c.BilledCost, c.EffectiveCost, c.BillingCurrency, c.Team, c.GPUType,
			c.GPUHours, c.Model, c.InputTokens, c.OutputTokens, c.CachedTokens, c.Requests, c.BillingAccountID,
			c.BillingPeriodStart); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Pool().Exec(ctx, `
		INSERT INTO daily_spend (org_id, day, source, provider, service, sub_account, team, model, charge_category,
			gpu_type, currency, billed, effective, gpu_hours, input_tokens, output_tokens, cached_tokens, requests, rows)
		SELECT org_id, charge_period_start::date, source, provider_name, service_name, sub_account_id, team, x_model,
			charge_category, x_gpu_type, billing_currency, sum(billed_cost), sum(effective_cost), sum(x_gpu_hours),
			sum(x_input_tokens), sum(x_output_tokens), sum(x_cached_tokens), sum(x_requests), count(*)
		FROM charges WHERE org_id = $1 AND import_id = $2
		GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11
		ON CONFLICT (org_id, day, source, provider, service, sub_account, team, model, charge_category, gpu_type, currency)
		DO UPDATE SET billed = daily_spend.billed + EXCLUDED.billed, effective = daily_spend.effective + EXCLUDED.effective,
			gpu_hours = daily_spend.gpu_hours + EXCLUDED.gpu_hours, input_tokens = daily_spend.input_tokens + EXCLUDED.input_tokens,
			output_tokens = daily_spend.output_tokens + EXCLUDED.output_tokens,
			cached_tokens = daily_spend.cached_tokens + EXCLUDED.cached_tokens,
			requests = daily_spend.requests + EXCLUDED.requests, rows = daily_spend.rows + EXCLUDED.rows`,
		org.ID, importID); err != nil {
		t.Fatal(err)
	}
}

// TestSpendBreakdownTopKeepsTheLargestDrivers: a breakdown limited to k
// drivers per currency holds the k largest of the whole breakdown's, in
// each currency, unfiltered (limited in Postgres) and filtered (here), and
// the same GPU types and models.
func TestSpendBreakdownTopKeepsTheLargestDrivers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	data := genSpendData(t, st, 11)
	for _, f := range []store.SpendFilter{
		{From: day("2026-03-01"), To: day("2026-03-01")},
		{From: day("2026-02-20"), To: day("2026-04-10"), Cost: store.CostAmortized},
		{From: day("2026-02-20"), To: day("2026-04-10"), Provider: "AWS"},
	} {
		all, err := st.SpendBreakdown(ctx, data.org.ID, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []int{1, 3} {
			top, err := st.SpendBreakdownTop(ctx, data.org.ID, f, k)
			if err != nil {
				t.Fatal(err)
			}
			// The k-th largest amount of each currency: every kept driver is
			// at least that, and there are k of them (or all there are).
			amounts, kept := map[string][]decimal.Decimal{}, map[string]int{}
			for _, d := range all.Drivers {
				amounts[d.Currency] = append(amounts[d.Currency], d.Amount)
			}
			for _, d := range top.Drivers {
				kept[d.Currency]++
				as := amounts[d.Currency]
				if d.Amount.LessThan(as[min(k, len(as))-1]) {
					t.Errorf("%+v top %d: %s %s kept, below the %d-th largest %s", f, k, d.Currency, d.Amount, k, as[min(k, len(as))-1])
				}
			}
			for cur, as := range amounts {
				if kept[cur] != min(k, len(as)) {
					t.Errorf("%+v top %d: %d drivers of %s, want %d", f, k, kept[cur], cur, min(k, len(as)))
				}
			}
			if len(amounts) < 2 {
				t.Fatalf("fixture: %d currencies", len(amounts))
			}
			if fmt.Sprint(top.GPUs, top.Models) != fmt.Sprint(all.GPUs, all.Models) || top.Facets != nil {
				t.Errorf("%+v top %d: GPUs, models or facets differ", f, k)
			}
		}
	}
}
