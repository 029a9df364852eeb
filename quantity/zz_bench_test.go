package quantity

import (
	"testing"

	"github.com/shopspring/decimal"
)

func BenchmarkFormatOne(b *testing.B) {
	for _, s := range []string{"35787.5202", "0.0025", "1234567.891234567891", "0", "35787.520200000000"} {
		v := decimal.RequireFromString(s)
		b.Run(s, func(b *testing.B) {
			for b.Loop() {
				FormatAmount(v)
			}
		})
		b.Run("exact"+s, func(b *testing.B) {
			for b.Loop() {
				FormatExact(v)
			}
		})
	}
}
