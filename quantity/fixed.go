package quantity

import (
	"github.com/shopspring/decimal"
)

// A page of a year's spend by group writes thousands of amounts. Decimal's
// own rounding and String go through math/big and allocate at every step;
// amounts whose coefficient fits in an int64 (every amount a bill has, and
// their sums up to 18 digits) are written here with integer arithmetic
// instead, to the same digits. Anything larger takes decimal's way.

// maxFastDigits is the most digits a coefficient may have for the integer
// path: 10^18 fits in an int64, with room to round up.
const maxFastDigits = 18

// pow10s are the powers of ten an int64 holds.
var pow10s = func() (p [maxFastDigits + 1]int64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// smallCoefficient is d's coefficient and its number of digits, when it
// has at most maxFastDigits. (decimal's NumDigits is exact beyond 2^53 and
// may be one off below it, where every coefficient fits anyway; the count
// returned is exact.)
func smallCoefficient(d decimal.Decimal) (coef int64, digits int, ok bool) {
	if d.IsZero() {
		// Not through CoefficientInt64: it allocates the coefficient of a
		// zero Decimal (a day without spend), on a copy, every call.
		return 0, 1, true
	}
	if d.NumDigits() > maxFastDigits {
		return 0, 0, false
	}
	coef = d.CoefficientInt64()
	u := coef
	if u < 0 {
		u = -u
	}
	digits = 1
	for digits <= maxFastDigits && u >= pow10s[digits] {
		digits++
	}
	return coef, digits, digits <= maxFastDigits
}

// roundedCoefficient is d rounded half away from zero to places decimals,
// as an integer count of 10^-places, when that fits the integer path.
func roundedCoefficient(d decimal.Decimal, places int32) (int64, bool) {
	if places < 0 || places > maxFastDigits {
		return 0, false
	}
	coef, digits, ok := smallCoefficient(d)
	if !ok {
		return 0, false
	}
	exp := d.Exponent()
	if shift := int64(exp) + int64(places); shift >= 0 {
		// Nothing to round: scale up, if the digits still fit.
		if int64(digits)+shift > maxFastDigits {
			return 0, false
		}
		return coef * pow10s[shift], true
	}
	drop := -(int64(exp) + int64(places))
	if drop > maxFastDigits {
		return 0, true // below half a unit of the last place
	}
	unit := pow10s[drop]
	q, r := coef/unit, coef%unit
	if r < 0 {
		r = -r
	}
	if r >= unit-r { // r ≥ unit/2, without losing the odd half
		if coef < 0 {
			q--
		} else {
			q++
		}
	}
	return q, true
}

// appendFixed writes n × 10^-places with exactly places decimals, grouped
// with thousands separators when group is set; "-0.00" is written "0.00".
func appendFixed(b []byte, n int64, places int, group bool) []byte {
	if n < 0 {
		b = append(b, '-')
	}
	// |n| as unsigned: −MinInt64 does not fit an int64.
	u := uint64(n)
	if n < 0 {
		u = -u
	}
	// The digits, right-aligned, with zeros before them up to one whole
	// digit: 5 at 2 places is 0.05.
	var digits [maxFastDigits + 24]byte
	i := len(digits)
	for u > 0 || len(digits)-i <= places {
		i--
		digits[i] = byte('0' + u%10)
		u /= 10
	}
	s := digits[i:]
	whole, frac := s[:len(s)-places], s[len(s)-places:]
	for i, c := range whole {
		if group && i > 0 && (len(whole)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, c)
	}
	if places > 0 {
		b = append(b, '.')
		b = append(b, frac...)
	}
	return b
}

// fixed is d rounded half away from zero to places decimals, written with
// exactly that many (as decimal's StringFixed, grouped if group is set),
// and false when d is too large for the integer path.
func fixed(d decimal.Decimal, places int32, group bool) (string, bool) {
	n, ok := roundedCoefficient(d, places)
	if !ok {
		return "", false
	}
	var buf [40]byte
	return string(appendFixed(buf[:0], n, int(places), group)), true
}

// trimZeros drops trailing zeros of a written fraction, keeping at least
// keep decimals: 0.002500 → 0.0025.
func trimZeros(b []byte, keep int) []byte {
	dot := len(b) - 1
	for dot >= 0 && b[dot] != '.' {
		dot--
	}
	for len(b)-dot-1 > keep && b[len(b)-1] == '0' {
		b = b[:len(b)-1]
	}
	return b
}

// plain is FormatExact on the integer path: d rounded half away from zero
// to ExactPlaces, trailing zeros and a lone point dropped, "-0" as "0".
func plain(d decimal.Decimal) (string, bool) {
	places := int32(ExactPlaces)
	if e := d.Exponent(); e > -places {
		// Fewer places than ExactPlaces: write the ones it has (none
		// for whole numbers, whose exponent may be positive).
		places = max(-e, 0)
	}
	n, ok := roundedCoefficient(d, places)
	if !ok {
		return "", false
	}
	var buf [40]byte
	b := appendFixed(buf[:0], n, int(places), false)
	if places > 0 {
		b = trimZeros(b, 0)
		if b[len(b)-1] == '.' {
			b = b[:len(b)-1]
		}
	}
	if len(b) == 2 && b[0] == '-' && b[1] == '0' {
		return "0", true
	}
	return string(b), true
}

// Compare is a.Cmp(b) (-1, 0 or +1), without math/big when both
// coefficients fit the integer path and one scales to the other's exponent
// within an int64: Cmp rescales through math/big, allocating, whenever the
// exponents differ (a sum of several scales against a whole-number
// threshold, say).
func Compare(a, b decimal.Decimal) int {
	ca, _, okA := smallCoefficient(a)
	cb, _, okB := smallCoefficient(b)
	if !okA || !okB {
		return a.Cmp(b)
	}
	switch {
	case ca == 0 || cb == 0 || (ca < 0) != (cb < 0):
		return cmpInt(sign(ca), sign(cb))
	}
	ea, eb := a.Exponent(), b.Exponent()
	// Bring the one with the larger exponent down to the other's.
	for ; ea > eb; ea-- {
		if ca > maxFastCoef || ca < -maxFastCoef {
			return a.Cmp(b)
		}
		ca *= 10
	}
	for ; eb > ea; eb-- {
		if cb > maxFastCoef || cb < -maxFastCoef {
			return a.Cmp(b)
		}
		cb *= 10
	}
	return cmpInt(ca, cb)
}

// maxFastCoef is the largest coefficient that can be multiplied by ten
// in an int64.
const maxFastCoef = (1<<63 - 1) / 10

func sign(x int64) int64 {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
