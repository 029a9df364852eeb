package store_test

import (
	"context"
	"math/rand/v2"
	"testing"

	pgxdecimal "github.com/jackc/pgx-shopspring-decimal"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestNumericEncoding sends decimals through the fast binary encoder and
// checks that Postgres reads exactly the value (and scale) that the same
// decimal's text form gives.
func TestNumericEncoding(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	values := []string{"0", "0.0", "1", "-1", "123.45", "0.05", "0.00001", "10000", "-10000.0001", "20.52022672899",
		"-2.6137", "99999999.99999999", "0.000000000000000001", "123456789012345678", "1234567890123456789012345.5",
		"1E+5", "-7E+3", "0.1000", "8816909.53994"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		values = append(values, decimal.New(r.Int64N(1<<53)-(1<<52), -int32(r.IntN(20))).String())
	}
	for _, v := range values {
		d := decimal.RequireFromString(v)
		var fast, text string
		if err := st.Pool().QueryRow(ctx, `SELECT $1::numeric::text, $2::text::numeric::text`, d, d.String()).Scan(&fast, &text); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		got, err := decimal.NewFromString(fast)
		if err != nil || !got.Equal(d) {
			t.Fatalf("%s encoded reads back as %s", v, fast)
		}
		// Same scale as the decimal carries (1.50 stays 1.50), unless the
		// exponent is positive (1E+5 has no fraction).
		if d.Exponent() <= 0 && fast != d.StringFixed(-d.Exponent()) {
			t.Fatalf("%s reads back as %s, want %s", v, fast, d.StringFixed(-d.Exponent()))
		}
		_ = text
	}
}

// TestNumericDecoding reads numerics as Postgres sends them (literals and
// sums of several scales, zeros, negatives, integers with trailing zeros,
// values of up to 30 digits) and checks the fast decoder against
// pgx-shopspring-decimal's: the same coefficient and exponent, or the
// library's path for what it does not take.
func TestNumericDecoding(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	values := []string{"0", "0.0", "0.0000", "-0.00", "1", "-1", "123.45", "1.50", "0.05", "0.00001", "10000", "100000",
		"-10000.0001", "20.52022672899", "99999999.99999999", "9999999999999999", "99999999999999999",
		"0.000000000000000001", "123456789012345678", "1234567890123456789012345.5", "1E+5", "-7E+3", "0.1000",
		"8816909.53994", "12345678.12345678", "1234567812345678.5"}
	r := rand.New(rand.NewPCG(3, 4))
	for range 3000 {
		values = append(values, decimal.New(r.Int64N(1<<53)-(1<<52), -int32(r.IntN(20))+int32(r.IntN(3))).String())
	}
	lib := pgtype.NewMap()
	pgxdecimal.Register(lib)
	rows, err := st.Pool().Query(ctx, `
		SELECT v::numeric FROM unnest($1::text[]) v
		UNION ALL SELECT sum(v::numeric) FROM unnest($1::text[]) WITH ORDINALITY AS u(v, i) GROUP BY i % 97`, values)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	fast, n := 0, 0
	for rows.Next() {
		raw := rows.RawValues()[0]
		var want decimal.Decimal
		if err := lib.PlanScan(pgtype.NumericOID, pgtype.BinaryFormatCode, &want).Scan(raw, &want); err != nil {
			t.Fatal(err)
		}
		n++
		got, ok := store.DecodeNumeric(raw)
		if !ok {
			if c := want.Coefficient(); c.IsInt64() && c.Int64() > -1e15 && c.Int64() < 1e15 {
				t.Errorf("%s (15 digits or fewer) left to the library", want)
			}
			continue
		}
		fast++
		if got.Coefficient().Cmp(want.Coefficient()) != 0 || got.Exponent() != want.Exponent() {
			t.Fatalf("decoded %s (%se%d), the library %s (%se%d)", got, got.Coefficient(), got.Exponent(), want, want.Coefficient(), want.Exponent())
		}
		var scanned decimal.Decimal
		if err := store.RawQueryRow(ctx, st, "SELECT $1::text::numeric", want.String()).Scan(&scanned); err != nil || !scanned.Equal(want) {
			t.Fatalf("%s scans as %s, %v", want, scanned, err)
		}
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	if n < 3000 || fast < n*9/10 {
		t.Fatalf("%d values, %d decoded fast", n, fast)
	}
}
