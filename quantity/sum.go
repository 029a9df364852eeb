package quantity

import (
	"math"

	"github.com/shopspring/decimal"
)

// Sum adds decimals exactly, as an int64 coefficient at the smallest
// exponent seen while they fit, and as decimal.Decimal beyond: Decimal.Add
// allocates two big integers a call. An import's rollup adds three
// decimals a row (a tenth of its client time), a dashboard view a few
// thousand. The zero Sum is zero. Its Value has the exponent of the
// smallest nonzero term, where Decimal.Add keeps that of every term:
// the same number, written with fewer trailing zeros.
type Sum struct {
	coef int64
	exp  int32
	big  decimal.Decimal // what did not fit in coef
	used bool            // coef and exp hold a value
}

// Add adds d.
func (s *Sum) Add(d decimal.Decimal) {
	if d.NumDigits() > 18 {
		s.big = s.big.Add(d)
		return
	}
	c, e := d.CoefficientInt64(), d.Exponent()
	if c == 0 {
		return
	}
	if !s.used {
		s.coef, s.exp, s.used = c, e, true
		return
	}
	for ; e > s.exp; e-- {
		if c > math.MaxInt64/10 || c < math.MinInt64/10 {
			s.big = s.big.Add(d)
			return
		}
		c *= 10
	}
	for ; s.exp > e; s.exp-- {
		if s.coef > math.MaxInt64/10 || s.coef < math.MinInt64/10 {
			s.fold()
			s.big = s.big.Add(d)
			return
		}
		s.coef *= 10
	}
	sum := s.coef + c
	if (c > 0 && sum < s.coef) || (c < 0 && sum > s.coef) { // overflow
		s.fold()
		s.big = s.big.Add(d)
		return
	}
	s.coef = sum
}

// fold moves coef into big.
func (s *Sum) fold() {
	if s.used {
		s.big = s.big.Add(decimal.New(s.coef, s.exp))
		s.coef, s.exp, s.used = 0, 0, false
	}
}

// Value is the sum.
func (s *Sum) Value() decimal.Decimal {
	if !s.used {
		return s.big
	}
	if s.big.IsZero() {
		return decimal.New(s.coef, s.exp) // the same value, without Add's big.Int arithmetic
	}
	return s.big.Add(decimal.New(s.coef, s.exp))
}

// Sums are Sums by key (a currency, a day), each made on its first Add.
type Sums[K comparable] map[K]*Sum

// Add adds d to key's sum.
func (s Sums[K]) Add(key K, d decimal.Decimal) {
	sum := s[key]
	if sum == nil {
		sum = &Sum{}
		s[key] = sum
	}
	sum.Add(d)
}

// Values are the sums by key.
func (s Sums[K]) Values() map[K]decimal.Decimal {
	out := make(map[K]decimal.Decimal, len(s))
	for k, sum := range s {
		out[k] = sum.Value()
	}
	return out
}
