package quantity

import (
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
)

// The one way numbers are written for people: pages, chart tooltips and
// axes (static/js/app.js follows the same rules), CLI text, emails and
// alerts. CSV files and JSON APIs keep exact plain decimals instead.

// ExactPlaces is the scale of the plain decimals that JSON APIs and CSV
// files write (FormatExact). It is beyond any billing precision (clouds
// bill to at most 10 decimal places, tokens priced per million to 9) and
// short of the artefacts of bills written from floating point: a cell
// "12.340000000000001" (17 significant digits, the last two noise) sums
// into a day's spend exactly as written (docs/data-model.md, "Conventions").
const ExactPlaces = 10

// FormatExact writes an amount for machines: a plain decimal (no
// separators, no exponent) rounded half away from zero to ExactPlaces,
// trailing zeros dropped ("12.34", "0.0000004", "-3").
func FormatExact(d decimal.Decimal) string {
	if s, ok := plain(d); ok {
		return s
	}
	// Rounding rescales through math/big even when there is nothing to
	// round; a value of ExactPlaces places or fewer reads the same without.
	var s string
	if d.Exponent() >= -ExactPlaces {
		s = d.String()
	} else {
		s = d.Round(ExactPlaces).String()
	}
	if s == "-0" {
		return "0"
	}
	return s
}

// FormatAmount writes money without its currency: thousands separators and two
// decimals (1,234.50); amounts below one keep two significant digits after
// the leading zeros (0.0025, the price of a token), up to six places, so
// small prices do not read as 0.00.
func FormatAmount(d decimal.Decimal) string {
	places := int32(2)
	if coef, digits, ok := smallCoefficient(d); ok {
		// Below one, the first digit is at place -exponent - digits + 1:
		// 0.0025 (25e-4) has it at place 3.
		if first := -int64(d.Exponent()) - int64(digits) + 1; coef != 0 && first > 0 {
			places = int32(min(max(first+1, 2), 6))
		}
		if n, ok := roundedCoefficient(d, places); ok {
			var buf [40]byte
			b := appendFixed(buf[:0], n, int(places), true)
			if places > 2 {
				b = trimZeros(b, 2)
			}
			return string(b)
		}
	}
	if abs := d.Abs(); abs.IsPositive() && abs.LessThan(decimal.NewFromInt(1)) {
		// 0.0025 has its first digit at place 3: keep places 3 and 4.
		first := int32(-abs.Exponent()) - int32(len(abs.Coefficient().String())) + 1
		places = min(max(first+1, 2), 6)
	}
	s := d.StringFixed(places) // rounds half away from zero, as Round does
	if places > 2 {
		// 0.002500 → 0.0025, but never fewer than two places.
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

// FormatMoney writes an amount with its currency code, always: 1,234.50 USD.
func FormatMoney(d decimal.Decimal, currency string) string {
	return FormatAmount(d) + " " + currency
}

// FormatFormatSignedMoney is FormatMoney with a + on increases, for changes.
func FormatSignedMoney(d decimal.Decimal, currency string) string {
	if d.IsPositive() {
		return "+" + FormatMoney(d, currency)
	}
	return FormatMoney(d, currency)
}

// FormatCount writes a whole count with thousands separators: 134,080.
func FormatCount(n int64) string { return Group(strconv.FormatInt(n, 10)) }

// FormatDecimal writes d rounded to places with thousands separators (GPU-hours:
// 1,204.5).
func FormatDecimal(d decimal.Decimal, places int32) string {
	if s, ok := fixed(d, places, true); ok {
		return s
	}
	return Group(d.StringFixed(places))
}

// FormatCompact writes a large count short, for tokens and axis labels: 1.2B,
// 340M, 12.5k, 999; one decimal, dropped when zero.
func FormatCompact(n int64) string {
	neg := n < 0
	if neg {
		n = -n
	}
	out := strconv.FormatInt(n, 10)
	for _, u := range []struct {
		size   int64
		suffix string
	}{{1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "k"}} {
		if n >= u.size {
			out = decimal.NewFromInt(n).Div(decimal.NewFromInt(u.size)).Round(1).String() + u.suffix
			break
		}
	}
	if neg {
		out = "-" + out
	}
	return out
}

// FormatBytes writes a size in bytes for people: 131 KB, 4.2 MB (powers of
// 1,000, as people read file sizes).
func FormatBytes(n int64) string {
	switch {
	case n >= 1e9:
		return decimal.NewFromInt(n).Div(decimal.NewFromInt(1e9)).Round(1).String() + " GB"
	case n >= 1e6:
		return decimal.NewFromInt(n).Div(decimal.NewFromInt(1e6)).Round(1).String() + " MB"
	case n >= 1e3:
		return decimal.NewFromInt(n).Div(decimal.NewFromInt(1e3)).Round(0).String() + " KB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// FormatFixed writes d rounded half away from zero to places, plain, with
// exactly that many decimals (as decimal's StringFixed): 1234.5 → 1234.50.
func FormatFixed(d decimal.Decimal, places int32) string {
	if s, ok := fixed(d, places, false); ok {
		return s
	}
	return d.StringFixed(places)
}
