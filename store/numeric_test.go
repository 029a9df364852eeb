package store_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/shopspring/decimal"

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
