package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestCollectDaySpendReadsWhatScanReads reads the same day rows from the
// wire and through Scan: days across years (before 2000 too), repeated and
// empty names, amounts of every scale, negative, zero and beyond int64, with
// and without the groups-folded count, with each row's charges instead, and
// NULLs, which Scan refuses.
func TestCollectDaySpendReadsWhatScanReads(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	const rows = `
		SELECT d::date, c, g, a::numeric, o` + `%s` + `
		FROM (VALUES
			('2026-12-02', 'USD', 'Amazon EC2', '123.4500', false, 0),
			('2026-12-02', 'USD', 'Amazon EC2', '-0.000000001', false, 0),
			('1999-12-31', 'EUR', '', '0', true, 7),
			('2000-01-01', 'EUR', 'ünïcode ✓', '0.00', false, 3),
			('2024-02-29', 'USD', 'big', '12345678901234567890123.5', true, 2),
			('1970-01-01', 'JPY', 'Amazon EC2', '-99999999.99999999', true, 0)
		) v (d, c, g, a, o, n)`
	for _, tc := range []struct {
		name, count string
		charges     bool
	}{{"five columns", "", false}, {"with the count", ", n::int", false}, {"with charges", ", n::int8 * 1000000000000", true}} {
		read := func(collect func(r pgx.Rows, hint int, charges bool) ([]store.DaySpend, []int64, error)) ([]store.DaySpend, []int64) {
			t.Helper()
			r, err := st.Pool().Query(ctx, fmt.Sprintf(rows, tc.count))
			if err != nil {
				t.Fatal(err)
			}
			out, counts, err := collect(r, 1, tc.charges)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			return out, counts
		}
		fast, fastCharges := read(store.ReadDaySpend)
		scanned, scannedCharges := read(store.ScanDaySpend)
		if len(fast) != 6 || len(fast) != len(scanned) {
			t.Fatalf("%s: %d rows from the wire, %d through Scan", tc.name, len(fast), len(scanned))
		}
		if want := []int64{0, 0, 7e12, 3e12, 2e12, 0}; tc.charges && (fmt.Sprint(fastCharges) != fmt.Sprint(want) || fmt.Sprint(scannedCharges) != fmt.Sprint(want)) {
			t.Errorf("%s: charges %v from the wire, %v through Scan, want %v", tc.name, fastCharges, scannedCharges, want)
		}
		if !tc.charges && (fastCharges != nil || scannedCharges != nil) {
			t.Errorf("%s: charges %v and %v, want none", tc.name, fastCharges, scannedCharges)
		}
		for i := range fast {
			f, s := fast[i], scanned[i]
			if !f.Day.Equal(s.Day) || f.Day.Location() != s.Day.Location() || f.Currency != s.Currency || f.Group != s.Group ||
				f.Amount.Coefficient().Cmp(s.Amount.Coefficient()) != 0 || f.Amount.Exponent() != s.Amount.Exponent() ||
				f.Other != s.Other || f.OtherGroups != s.OtherGroups {
				t.Errorf("%s, row %d: from the wire %+v, through Scan %+v", tc.name, i, f, s)
			}
		}
		if tc.count != "" && !tc.charges && (fast[2].OtherGroups != 7 || fast[3].OtherGroups != 0) {
			t.Errorf("%s: groups folded %d and %d, want 7 on the Other row and 0 on the other", tc.name, fast[2].OtherGroups, fast[3].OtherGroups)
		}
	}
	for _, null := range []struct {
		what, row string
		charges   bool
	}{{"a NULL day", `SELECT NULL::date, 'USD', '', 1::numeric, false`, false}, {"NULL charges", `SELECT '2026-12-02'::date, 'USD', '', 1::numeric, false, NULL::int8`, true}} {
		r, err := st.Pool().Query(ctx, null.row)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := store.ReadDaySpend(r, 1, null.charges); err == nil {
			t.Errorf("%s read without an error", null.what)
		}
	}
}
