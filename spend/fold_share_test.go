package spend_test

import (
	"testing"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/spend"
)

// TestShareText: spend in whole percents, a credit its negative share
// (never "0%"), and no share of a total that is not positive.
func TestShareText(t *testing.T) {
	d := decimal.RequireFromString
	for _, tt := range []struct{ part, whole, want string }{
		{"420.02", "420.02", "100%"},
		{"50", "200", "25%"},
		{"-250", "100000", "-0.3%"},
		{"-250", "1000", "-25%"},
		{"-1", "10000000", "—"},
		{"10", "0", "—"},
		{"-10", "-5", "—"},
	} {
		if got := spend.ShareText(d(tt.part), d(tt.whole)); got != tt.want {
			t.Errorf("ShareText(%s, %s) = %q, want %q", tt.part, tt.whole, got, tt.want)
		}
	}
}
