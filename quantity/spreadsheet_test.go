package quantity

import "testing"

func TestInspectFormatted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want Formatted
	}{
		{"$10,000.00 ", Formatted{Symbol: "$", Decimal: '.'}},
		{"1.234,56 €", Formatted{Symbol: "€", Decimal: ','}},
		{"EUR 1.234.567", Formatted{Symbol: "EUR", Decimal: ','}},
		{"1,234,567", Formatted{Decimal: '.'}},
		{"(12,50) €", Formatted{Symbol: "€", Sep: ','}},
		{"1,234", Formatted{Sep: ',', Ambiguous: true}},
		{"-$1.234", Formatted{Symbol: "$", Sep: '.', Ambiguous: true}},
		{".123", Formatted{Sep: '.'}}, // no digit before: a decimal point
		{"12.5e3", Formatted{Sep: '.'}},
		{"R$ 12", Formatted{Symbol: "R$"}},
		{"1200", Formatted{}},
	}
	for _, tt := range tests {
		if got := InspectFormatted(tt.in); got != tt.want {
			t.Errorf("InspectFormatted(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestSymbolMatches(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		sym, cur string
		want     bool
	}{
		{"", "EUR", true}, {"$", "USD", true}, {"$", "cad", true}, {"$", "EUR", false}, {"US$", "CAD", false},
		{"€", "EUR", true}, {"EUR", "EUR", true}, {"USD", "EUR", false}, {"kr", "SEK", true}, {"¥", "GBP", false},
	} {
		if got := SymbolMatches(tt.sym, tt.cur); got != tt.want {
			t.Errorf("SymbolMatches(%q, %q) = %v", tt.sym, tt.cur, got)
		}
	}
}
