package store

import (
	"encoding/binary"
	"math"

	pgxdecimal "github.com/jackc/pgx-shopspring-decimal"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shopspring/decimal"
)

// numericCodec is pgx-shopspring-decimal's numeric codec with a faster
// binary encoder for decimal.Decimal. Imports send every row's costs this
// way, and the library's path (math/big division and powers of ten for each
// value) is a sixth of an import's client time. Values whose coefficient
// needs more than 18 digits still take the library's path.
type numericCodec struct{ pgxdecimal.NumericCodec }

func (c numericCodec) PlanEncode(m *pgtype.Map, oid uint32, format int16, value any) pgtype.EncodePlan {
	if _, ok := value.(decimal.Decimal); ok && format == pgtype.BinaryFormatCode {
		return numericPlan{slow: c.NumericCodec.PlanEncode(m, oid, format, pgxdecimal.Decimal{})}
	}
	return c.NumericCodec.PlanEncode(m, oid, format, value)
}

// PlanScan reads binary numerics into decimal.Decimal without math/big or
// text when the value fits 64-bit arithmetic (every rollup amount): a
// dashboard reads thousands per view, and the library's path (pgx's
// decoder into a big.Int and its text, parsed again by decimal's
// sql.Scanner) is the largest part of its client time. Other values,
// NULL, NaN and infinities take that path.
func (c numericCodec) PlanScan(m *pgtype.Map, oid uint32, format int16, target any) pgtype.ScanPlan {
	if _, ok := target.(*decimal.Decimal); ok && format == pgtype.BinaryFormatCode {
		return numericScanPlan{c: c, m: m, oid: oid}
	}
	return c.NumericCodec.PlanScan(m, oid, format, target)
}

type numericScanPlan struct {
	c   numericCodec
	m   *pgtype.Map
	oid uint32
}

func (p numericScanPlan) Scan(src []byte, dst any) error {
	if d, ok := decodeNumeric(src); ok {
		*dst.(*decimal.Decimal) = d
		return nil
	}
	// pgx's path for an sql.Scanner.
	v, err := p.c.DecodeDatabaseSQLValue(p.m, p.oid, pgtype.BinaryFormatCode, src)
	if err != nil {
		return err
	}
	return dst.(*decimal.Decimal).Scan(v)
}

// decodeNumeric reads Postgres's binary numeric (see appendNumeric) into
// the coefficient and exponent its text gives decimal.NewFromString: the
// exponent is minus the display scale (1.50 is 150e-2, 10000 is 10000e0;
// zero is 0e0).
// ok is false for NULL, NaN, infinities and values beyond int64.
func decodeNumeric(src []byte) (_ decimal.Decimal, ok bool) {
	const signNeg = 0x4000
	if len(src) < 8 {
		return decimal.Decimal{}, false
	}
	ndigits := int(binary.BigEndian.Uint16(src))
	weight := int(int16(binary.BigEndian.Uint16(src[2:])))
	sign := binary.BigEndian.Uint16(src[4:])
	dscale := int(int16(binary.BigEndian.Uint16(src[6:])))
	if (sign != 0 && sign != signNeg) || ndigits > 5 || len(src) != 8+2*ndigits || dscale < 0 || dscale > 1000 {
		return decimal.Decimal{}, false
	}
	if ndigits == 0 {
		// Zero reads as 0, whatever its scale; the zero Decimal is that 0
		// without a coefficient allocated (the breakdown's drivers read a
		// zero of GPU-hours each).
		return decimal.Decimal{}, true
	}
	var coef int64
	for i := range ndigits {
		d := binary.BigEndian.Uint16(src[8+2*i:])
		if d > 9999 {
			return decimal.Decimal{}, false
		}
		if coef > (math.MaxInt64-9999)/10000 {
			return decimal.Decimal{}, false
		}
		coef = coef*10000 + int64(d)
	}
	// coef × 10^exp is the value; bring exp to -dscale.
	exp := (weight - ndigits + 1) * 4
	for ; exp > -dscale; exp-- {
		if coef > math.MaxInt64/10 {
			return decimal.Decimal{}, false
		}
		coef *= 10
	}
	for ; exp < -dscale; exp++ {
		if coef%10 != 0 {
			return decimal.Decimal{}, false // digits past the scale: not Postgres's form
		}
		coef /= 10
	}
	if sign == signNeg {
		coef = -coef
	}
	return decimal.New(coef, int32(exp)), true
}

type numericPlan struct{ slow pgtype.EncodePlan }

func (p numericPlan) Encode(value any, buf []byte) ([]byte, error) {
	d := value.(decimal.Decimal)
	if d.NumDigits() <= 18 {
		if out, ok := appendNumeric(buf, d.CoefficientInt64(), d.Exponent()); ok {
			return out, nil
		}
	}
	return p.slow.Encode(pgxdecimal.Decimal(d), buf)
}

// appendNumeric appends coef × 10^exp in Postgres's binary numeric format:
// ndigits, weight, sign, dscale (int16 each), then base-10000 digits, most
// significant first, without leading or trailing zero digits. ok is false
// when the value does not fit the 64-bit arithmetic used here.
func appendNumeric(buf []byte, coef int64, exp int32) (_ []byte, ok bool) {
	const signNeg = 0x4000
	var sign uint16
	u := uint64(coef)
	if coef < 0 {
		sign, u = signNeg, uint64(-coef)
	}
	var dscale int32
	if exp < 0 {
		dscale = -exp
	}
	if dscale > math.MaxInt16 {
		return buf, false
	}
	// Whole powers of ten go into the integer; then the fraction is padded
	// to whole base-10000 digits.
	for ; exp > 0; exp-- {
		if u > math.MaxUint64/10 {
			return buf, false
		}
		u *= 10
	}
	pad := (4 - dscale%4) % 4
	for range pad {
		if u > math.MaxUint64/10 {
			return buf, false
		}
		u *= 10
	}
	fracDigits := int((dscale + pad) / 4)
	var digits [5]uint16 // least significant first; 2^64 has 20 decimal digits
	n := 0
	for u > 0 {
		digits[n] = uint16(u % 10000)
		u /= 10000
		n++
	}
	low := 0
	for low < n && digits[low] == 0 {
		low++
	}
	weight := n - fracDigits - 1
	if low == n { // zero
		weight, sign = 0, 0
	}
	buf = binary.BigEndian.AppendUint16(buf, uint16(n-low))
	buf = binary.BigEndian.AppendUint16(buf, uint16(int16(weight)))
	buf = binary.BigEndian.AppendUint16(buf, sign)
	buf = binary.BigEndian.AppendUint16(buf, uint16(dscale))
	for i := n - 1; i >= low; i-- {
		buf = binary.BigEndian.AppendUint16(buf, digits[i])
	}
	return buf, true
}
