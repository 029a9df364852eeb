package store

import (
	"math/rand/v2"
	"testing"

	"github.com/shopspring/decimal"
)

// TestDecSumIsExact adds random decimals of every size and scale, tiny,
// negative and past 18 digits, and compares with decimal.Decimal.Add.
func TestDecSumIsExact(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var s decSum
		want := decimal.Zero
		for range 1 + rng.IntN(300) {
			coef := rng.Int64N(1 << uint(1+rng.IntN(62)))
			if rng.IntN(3) == 0 {
				coef = -coef
			}
			d := decimal.New(coef, int32(rng.IntN(40)-30))
			if rng.IntN(50) == 0 {
				d = d.Mul(decimal.RequireFromString("123456789012345678901234567890"))
			}
			s.add(d)
			want = want.Add(d)
		}
		if got := s.value(); !got.Equal(want) {
			t.Fatalf("round %d: sum %s, want %s", round, got, want)
		}
	}
}
