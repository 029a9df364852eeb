package quantity_test

import (
	"math/rand/v2"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/quantity"
)

// TestSumIsExact adds random decimals of every size and scale, tiny,
// negative and past 18 digits, and compares with decimal.Decimal.Add.
func TestSumIsExact(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var s quantity.Sum
		want := decimal.Zero
		for range 1 + rng.IntN(300) {
			d := randomDecimal(rng)
			s.Add(d)
			want = want.Add(d)
		}
		if got := s.Value(); !got.Equal(want) {
			t.Fatalf("round %d: sum %s, want %s", round, got, want)
		}
	}
}

// randomDecimal is a decimal of up to 62 bits of coefficient, either
// sign, 30 places to 10 powers of ten, and now and then past 18 digits.
func randomDecimal(rng *rand.Rand) decimal.Decimal {
	coef := rng.Int64N(1 << uint(1+rng.IntN(62)))
	if rng.IntN(2) == 0 {
		coef = -coef
	}
	d := decimal.New(coef, int32(rng.IntN(40)-30))
	if rng.IntN(40) == 0 {
		d = d.Mul(decimal.RequireFromString("123456789012345678901234567890"))
	}
	return d
}

// TestCompareIsCmp compares random decimals of every size, sign and scale
// (zeros of several scales, coefficients past 18 digits, exponents far
// apart) with quantity.Compare and decimal.Decimal.Cmp.
func TestCompareIsCmp(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	random := func() decimal.Decimal {
		if rng.IntN(8) == 0 {
			return decimal.New(0, int32(rng.IntN(20)-10))
		}
		return randomDecimal(rng)
	}
	for range 20000 {
		a, b := random(), random()
		if rng.IntN(10) == 0 {
			b = a.Add(decimal.New(int64(rng.IntN(3)-1), a.Exponent())) // a neighbour, or a at another scale
			if rng.IntN(2) == 0 {
				b = decimal.New(a.CoefficientInt64()*10, a.Exponent()-1)
			}
		}
		if got, want := quantity.Compare(a, b), a.Cmp(b); got != want {
			t.Fatalf("Compare(%s, %s) = %d, Cmp says %d", a, b, got, want)
		}
	}
	for _, c := range [][2]string{{"0", "0.00"}, {"-0.001", "0"}, {"50", "50.0000000001"}, {"49.99", "50"},
		{"1E+18", "999999999999999999"}, {"-1E+18", "-999999999999999999.5"}} {
		a, b := decimal.RequireFromString(c[0]), decimal.RequireFromString(c[1])
		if got, want := quantity.Compare(a, b), a.Cmp(b); got != want {
			t.Errorf("Compare(%s, %s) = %d, Cmp says %d", a, b, got, want)
		}
	}
}

// TestSumsByKey adds random decimals under a few keys and compares each
// key's value with decimal.Decimal.Add; a key never added has no value.
func TestSumsByKey(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	sums := quantity.Sums[string]{}
	want := map[string]decimal.Decimal{}
	for range 1000 {
		k, d := []string{"USD", "EUR", "JPY"}[rng.IntN(3)], randomDecimal(rng)
		sums.Add(k, d)
		want[k] = want[k].Add(d)
	}
	got := sums.Values()
	if len(got) != len(want) {
		t.Fatalf("%d keys, want %d", len(got), len(want))
	}
	for k, w := range want {
		if !got[k].Equal(w) {
			t.Errorf("%s: %s, want %s", k, got[k], w)
		}
	}
	if _, ok := got["GBP"]; ok {
		t.Error("a key never added has a value")
	}
}
