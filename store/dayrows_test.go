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
// and without the groups-folded count, and NULLs, which Scan refuses.
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
	for _, tc := range []struct{ name, count string }{{"five columns", ""}, {"with the count", ", n::int"}} {
		read := func(collect func(r pgx.Rows, hint int) ([]store.DaySpend, error)) []store.DaySpend {
			t.Helper()
			r, err := st.Pool().Query(ctx, fmt.Sprintf(rows, tc.count))
			if err != nil {
				t.Fatal(err)
			}
			out, err := collect(r, 1)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			return out
		}
		fast, scanned := read(store.CollectDaySpend), read(store.ScanDaySpend)
		if len(fast) != 6 || len(fast) != len(scanned) {
			t.Fatalf("%s: %d rows from the wire, %d through Scan", tc.name, len(fast), len(scanned))
		}
		for i := range fast {
			f, s := fast[i], scanned[i]
			if !f.Day.Equal(s.Day) || f.Day.Location() != s.Day.Location() || f.Currency != s.Currency || f.Group != s.Group ||
				f.Amount.Coefficient().Cmp(s.Amount.Coefficient()) != 0 || f.Amount.Exponent() != s.Amount.Exponent() ||
				f.Other != s.Other || f.OtherGroups != s.OtherGroups {
				t.Errorf("%s, row %d: from the wire %+v, through Scan %+v", tc.name, i, f, s)
			}
		}
		if tc.count != "" && (fast[2].OtherGroups != 7 || fast[3].OtherGroups != 0) {
			t.Errorf("%s: groups folded %d and %d, want 7 on the Other row and 0 on the other", tc.name, fast[2].OtherGroups, fast[3].OtherGroups)
		}
	}
	r, err := st.Pool().Query(ctx, `SELECT NULL::date, 'USD', '', 1::numeric, false`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.CollectDaySpend(r, 1); err == nil {
		t.Error("a NULL day read without an error")
	}
}
