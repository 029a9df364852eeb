package quantity

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

// TestFormatsEqualRoundingFirst checks FormatExact and FormatAmount, which
// skip rounding where it changes nothing, against rounding every value
// first, for values of 0 to 16 places, large and small, either sign.
func TestFormatsEqualRoundingFirst(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 9))
	vals := []decimal.Decimal{decimal.Zero, decimal.New(0, -12), decimal.New(-5, -11), decimal.New(5, -11), decimal.New(15, 3),
		decimal.RequireFromString("-0.000000000049"), decimal.RequireFromString("0.00249999"), decimal.RequireFromString("-0.005")}
	for range 20000 {
		coef := r.Int64N(1e15) - 5e14
		switch r.IntN(4) {
		case 0:
			coef = r.Int64N(2000) - 1000
		case 1:
			// Near and past what an int64 holds: the integer path's
			// edge, and math/big's way beyond it.
			coef = r.Int64N(2e18) - 1e18
		}
		vals = append(vals, decimal.New(coef, -int32(r.IntN(21))+int32(r.IntN(4))))
	}
	for _, s := range []string{"999999999999999999", "-999999999999999999.5", "9223372036854775807", "-9223372036854775808",
		"0.999999999999999999", "99999999999999999.995", "123456789012345678901234567890.125", "0.0000000000000000000001",
		"-1e-30", "5e-3", "-5e-3", "1e17", "1e18", "1e19", "999999.995", "-999999.995"} {
		vals = append(vals, decimal.RequireFromString(s))
	}
	for _, v := range vals {
		want := v.Round(ExactPlaces).String()
		if want == "-0" {
			want = "0"
		}
		if got := FormatExact(v); got != want {
			t.Fatalf("FormatExact(%s) = %s, rounding first %s", v, got, want)
		}
		if got, want := FormatAmount(v), formatAmountRoundingFirst(v); got != want {
			t.Fatalf("FormatAmount(%s) = %s, rounding first %s", v, got, want)
		}
		for _, places := range []int32{0, 1, 2, 6} {
			if got, want := FormatDecimal(v, places), Group(v.StringFixed(places)); got != want {
				t.Fatalf("FormatDecimal(%s, %d) = %s, decimal's %s", v, places, got, want)
			}
			if got, want := FormatFixed(v, places), v.StringFixed(places); got != want {
				t.Fatalf("FormatFixed(%s, %d) = %s, decimal's %s", v, places, got, want)
			}
		}
	}
}

// formatAmountRoundingFirst is FormatAmount as it was, rounding before
// StringFixed.
func formatAmountRoundingFirst(d decimal.Decimal) string {
	places := int32(2)
	if abs := d.Abs(); abs.IsPositive() && abs.LessThan(decimal.NewFromInt(1)) {
		first := int32(-abs.Exponent()) - int32(len(abs.Coefficient().String())) + 1
		places = min(max(first+1, 2), 6)
	}
	s := d.Round(places).StringFixed(places)
	if places > 2 {
		whole, frac, _ := strings.Cut(s, ".")
		frac = strings.TrimRight(frac, "0")
		for len(frac) < 2 {
			frac += "0"
		}
		s = whole + "." + frac
	}
	if s == "-0.00" {
		s = "0.00"
	}
	return Group(s)
}

func BenchmarkFormatAmount(b *testing.B) {
	vs := []decimal.Decimal{decimal.RequireFromString("35787.5202"), decimal.RequireFromString("0.0025"),
		decimal.RequireFromString("1234567.891234567891"), decimal.Zero}
	for b.Loop() {
		for _, v := range vs {
			FormatAmount(v)
			FormatExact(v)
		}
	}
}
