package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// basisSource is a sliceSource whose file states one cost basis.
type basisSource struct {
	sliceSource
	basis store.CostBasis
}

func (s *basisSource) CostBasis() store.CostBasis { return s.basis }

// wantSpendByMatchesCube fails unless daily_spend_by holds, for every
// dimension, exactly the sums of daily_spend over the other eight, and
// period_drivers the sums of each day, week and month: the same keys (none left at
// zero) and the same measures to the last digit.
func wantSpendByMatchesCube(t *testing.T, st *store.Store, orgID int64, step string) {
	t.Helper()
	var missing, extra, keys int
	err := st.Pool().QueryRow(context.Background(), `
		WITH cube AS (
			SELECT k.dim, d.day, k.value, d.currency, sum(d.billed) AS billed, sum(d.effective) AS effective,
				sum(d.gpu_hours) AS gpu_hours, sum(d.input_tokens) AS input_tokens, sum(d.output_tokens) AS output_tokens,
				sum(d.cached_tokens) AS cached_tokens, sum(d.requests) AS requests, sum(d.rows) AS rows
			FROM daily_spend d
			CROSS JOIN LATERAL (VALUES ('total', ''), ('source', d.source), ('provider', d.provider),
				('service', d.service), ('sub_account', d.sub_account), ('team', d.team), ('model', d.model),
				('charge_category', d.charge_category), ('gpu_type', d.gpu_type)) k (dim, value)
			WHERE d.org_id = $1
			GROUP BY 1, 2, 3, 4
		), by AS (
			SELECT dim, day, value, currency, billed, effective, gpu_hours, input_tokens::numeric, output_tokens::numeric,
				cached_tokens::numeric, requests::numeric, rows::numeric
			FROM daily_spend_by WHERE org_id = $1
		)
		SELECT (SELECT count(*) FROM (SELECT * FROM cube EXCEPT ALL SELECT * FROM by) x),
			(SELECT count(*) FROM (SELECT * FROM by EXCEPT ALL SELECT * FROM cube) x),
			(SELECT count(*) FROM by)`, orgID).Scan(&missing, &extra, &keys)
	if err != nil {
		t.Fatal(err)
	}
	if missing != 0 || extra != 0 {
		t.Fatalf("%s: daily_spend_by differs from daily_spend: %d keys missing or different, %d extra (of %d)", step, missing, extra, keys)
	}
	err = st.Pool().QueryRow(context.Background(), `
		WITH cube AS (
			SELECT p.grain, p.start, provider, service, sub_account, model, currency,
				sum(billed) AS billed, sum(effective) AS effective, sum(rows) AS rows
			FROM daily_spend d
			CROSS JOIN LATERAL (VALUES ('day', d.day), ('week', d.day - extract(isodow FROM d.day)::int + 1),
				('month', d.day - extract(day FROM d.day)::int + 1)) p (grain, start)
			WHERE org_id = $1
			GROUP BY 1, 2, 3, 4, 5, 6, 7
		), m AS (
			SELECT grain, start, provider, service, sub_account, model, currency, billed, effective, rows::numeric
			FROM period_drivers WHERE org_id = $1
		)
		SELECT (SELECT count(*) FROM (SELECT * FROM cube EXCEPT ALL SELECT * FROM m) x),
			(SELECT count(*) FROM (SELECT * FROM m EXCEPT ALL SELECT * FROM cube) x)`, orgID).Scan(&missing, &extra)
	if err != nil {
		t.Fatal(err)
	}
	if missing != 0 || extra != 0 {
		t.Fatalf("%s: period_drivers differs from daily_spend: %d keys missing or different, %d extra", step, missing, extra)
	}
	if keys == 0 {
		var n int
		_ = st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM daily_spend WHERE org_id = $1`, orgID).Scan(&n)
		if n != 0 {
			t.Fatalf("%s: daily_spend_by is empty, daily_spend has %d rows", step, n)
		}
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
	wantSpendByMatchesCube(t, st, data.org.ID, "random imports")
	loc, _ := time.LoadLocation("Asia/Tokyo")
	if err := st.RebuildDailySpend(ctx, data.org.ID, loc); err != nil {
		t.Fatal(err)
	}
	wantSpendByMatchesCube(t, st, data.org.ID, "rebuilt in another time zone")

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
	wantSpendByMatchesCube(t, st, org.ID, "first November export")
	// The restated export replaces November: the row of the 2nd goes, its
	// keys with it.
	importRows(t, st, org, store.DedupeNone, charge(2, "2026-11-01 00:00", "10.10"), charge(3, "2026-11-03 00:00", "2.5"))
	wantSpendByMatchesCube(t, st, org.ID, "restated November")
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
	wantSpendByMatchesCube(t, st, org.ID, "amortized export beside actual cost")

	// Keyed rows: skipped, then restated buckets.
	key := func(src, k string) func(*store.Charge) {
		return func(c *store.Charge) {
			c.Source, c.DedupeKey, c.BillingPeriodStart, c.Model = src, k, time.Time{}, "claude-sonnet-4-5"
		}
	}
	importRows(t, st, org, store.DedupeSkip, charge(2, "2026-11-04 10:00", "0.5", key("litellm-spend", "a")))
	importRows(t, st, org, store.DedupeReplace, charge(2, "2026-11-04 00:00", "3", key("openai-usage", "d1")))
	importRows(t, st, org, store.DedupeReplace, charge(2, "2026-11-04 00:00", "4.75", key("openai-usage", "d1")))
	wantSpendByMatchesCube(t, st, org.ID, "keyed imports")

	// Deleting an import takes its rows out of both.
	if err := st.DeleteImport(ctx, org.ID, imp.ID); err != nil {
		t.Fatal(err)
	}
	wantSpendByMatchesCube(t, st, org.ID, "deleted import")
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM daily_spend WHERE org_id = $1 AND team = 'finance'`, org.ID).Scan(&n); err != nil || n != 0 {
		t.Fatalf("rollup rows of the deleted import's own slice: %d (%v), want none", n, err)
	}
}

// TestUnfilteredBreakdownEqualsTheCube: a breakdown with no filter, read
// from period_drivers and daily_spend_by, is the one the wide rollup
// gives, driver by driver, for ranges within a month, across months, and
// of whole months, in both cost bases.
func TestUnfilteredBreakdownEqualsTheCube(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	data := genSpendData(t, st, 11)
	day := func(s string) time.Time { d, _ := time.Parse(time.DateOnly, s); return d }
	for _, r := range [][2]string{
		{"2026-03-01", "2026-03-31"}, {"2026-03-01", "2026-03-30"}, {"2026-02-23", "2026-03-08"}, {"2026-02-23", "2026-04-05"}, {"2026-03-02", "2026-03-31"}, {"2026-02-20", "2026-04-10"}, {"2026-02-25", "2026-03-31"},
		{"2026-03-01", "2026-04-03"}, {"2026-03-05", "2026-03-20"}, {"2026-01-01", "2026-12-31"}, {"2026-03-31", "2026-04-01"},
		{"2026-03-03", "2026-04-28"}, {"2026-03-03", "2026-03-29"}, {"2026-02-02", "2026-03-01"},
	} {
		for _, basis := range []store.CostBasis{store.CostBilled, store.CostAmortized} {
			f := store.SpendFilter{From: day(r[0]), To: day(r[1]), Cost: basis}
			b, err := st.SpendBreakdown(ctx, data.org.ID, f)
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
				SELECT DISTINCT 'facet|team|' || team, 0 FROM daily_spend WHERE org_id = $1 AND day BETWEEN $2 AND $3 AND team <> ''
				UNION ALL
				SELECT DISTINCT 'facet|category|' || charge_category, 0 FROM daily_spend WHERE org_id = $1 AND day BETWEEN $2 AND $3 AND charge_category <> ''
				UNION ALL
				SELECT DISTINCT 'facet|source|' || source, 0 FROM daily_spend WHERE org_id = $1 AND day BETWEEN $2 AND $3 AND source <> ''`,
				data.org.ID, f.From, f.To)
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
			for dim, name := range map[store.Dimension]string{store.DimTeam: "team", store.DimCategory: "category", store.DimSource: "source"} {
				for _, v := range b.Facets[dim] {
					got["facet|"+name+"|"+v] = decimal.Zero
				}
			}
			if len(got) != len(want) {
				t.Fatalf("%v %s: %d breakdown rows, want %d\ngot  %v\nwant %v", r, basis, len(got), len(want), got, want)
			}
			equalSums(t, fmt.Sprint(r, basis), got, want)
		}
	}
}

// TestDriverSpansCoverEachDayOnce: the months, weeks and days a range is
// read in cover each of its days exactly once, and stay few: at most 6
// odd days, 5 weeks and 6 more days at each end of the whole months.
func TestDriverSpansCoverEachDayOnce(t *testing.T) {
	t.Parallel()
	start := time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 400; i += 3 {
		for _, n := range []int{1, 6, 7, 13, 30, 31, 60, 90, 365, 732} {
			from := start.AddDate(0, 0, i)
			to := from.AddDate(0, 0, n-1)
			months, weeks, days := store.DriverSpans(from, to)
			seen := map[time.Time]int{}
			for _, m := range months {
				if m.Day() != 1 {
					t.Fatalf("%s..%s: month %s does not start on the 1st", from, to, m)
				}
				for d := m; d.Month() == m.Month(); d = d.AddDate(0, 0, 1) {
					seen[d]++
				}
			}
			for _, w := range weeks {
				if w.Weekday() != time.Monday {
					t.Fatalf("%s..%s: week %s does not start on a Monday", from, to, w)
				}
				for k := 0; k < 7; k++ {
					seen[w.AddDate(0, 0, k)]++
				}
			}
			for _, d := range days {
				seen[d]++
			}
			for d := from; !d.After(to); d = d.AddDate(0, 0, 1) {
				if seen[d] != 1 {
					t.Fatalf("%s..%s: day %s read %d times", from, to, d.Format(time.DateOnly), seen[d])
				}
				delete(seen, d)
			}
			if len(seen) != 0 {
				t.Fatalf("%s..%s: reads %d days outside the range", from, to, len(seen))
			}
			if len(days) > 2*12 || len(weeks) > 2*5 {
				t.Fatalf("%s..%s: %d days and %d weeks, too many", from, to, len(days), len(weeks))
			}
		}
	}
}

// TestDriverReadsCoverEachDayOnce: the periods a range's drivers are read
// from, added and subtracted, count each of its days once and no other
// day, and are never more than its driverSpans; a range missing a day or
// two of a month reads that month less those days.
func TestDriverReadsCoverEachDayOnce(t *testing.T) {
	t.Parallel()
	start := time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 400; i += 2 {
		for _, n := range []int{1, 2, 6, 7, 13, 26, 30, 31, 60, 90, 365, 732} {
			from := start.AddDate(0, 0, i)
			to := from.AddDate(0, 0, n-1)
			months, weeks, days, minusWeeks, minusDays := store.DriverReads(from, to)
			seen := map[time.Time]int{}
			for _, m := range months {
				if m.Day() != 1 {
					t.Fatalf("%s..%s: month %s does not start on the 1st", from, to, m)
				}
				for d := m; d.Month() == m.Month(); d = d.AddDate(0, 0, 1) {
					seen[d]++
				}
			}
			for sign, ws := range map[int][]time.Time{1: weeks, -1: minusWeeks} {
				for _, w := range ws {
					if w.Weekday() != time.Monday {
						t.Fatalf("%s..%s: week %s does not start on a Monday", from, to, w)
					}
					for k := 0; k < 7; k++ {
						seen[w.AddDate(0, 0, k)] += sign
					}
				}
			}
			for _, d := range days {
				seen[d]++
			}
			for _, d := range minusDays {
				seen[d]--
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
			pm, pw, pd := store.DriverSpans(from, to)
			if got, plain := len(months)+len(weeks)+len(days)+len(minusWeeks)+len(minusDays), len(pm)+len(pw)+len(pd); got > plain {
				t.Fatalf("%s..%s: %d periods, more than the %d of its spans", from, to, got, plain)
			}
		}
	}
	day := func(s string) time.Time { d, _ := time.Parse(time.DateOnly, s); return d }
	months, weeks, days, minusWeeks, minusDays := store.DriverReads(day("2026-11-02"), day("2026-12-01"))
	if len(months) != 1 || !months[0].Equal(day("2026-11-01")) || len(weeks) != 0 || len(minusWeeks) != 0 ||
		len(days) != 1 || !days[0].Equal(day("2026-12-01")) || len(minusDays) != 1 || !minusDays[0].Equal(day("2026-11-01")) {
		t.Fatalf("2026-11-02..2026-12-01: months %v weeks %v days %v less weeks %v days %v, want November less its 1st, and December 1st",
			months, weeks, days, minusWeeks, minusDays)
	}
}
