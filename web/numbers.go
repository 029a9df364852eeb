package web

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/quantity"
)

// formNumbers reads number fields of a form or query through quantity's
// bounds, collecting one message per bad field. A blank field is zero (or
// nil, for optional amounts).
type formNumbers struct {
	v    url.Values
	errs []string
	bad  map[string]bool // the keys of the fields errs are about
}

func (f *formNumbers) parse(k quantity.Kind, key, label string) (decimal.Decimal, bool) {
	s := strings.TrimSpace(f.v.Get(key))
	if s == "" {
		return decimal.Zero, false
	}
	d, err := k.ParseHuman(label, s)
	if err != nil {
		f.errs = append(f.errs, formNumberError(k, label, s, err))
		if f.bad == nil {
			f.bad = map[string]bool{}
		}
		f.bad[key] = true
		return decimal.Zero, false
	}
	return d, true
}

// float is the field as a float64, for the pricing model's estimates.
func (f *formNumbers) float(k quantity.Kind, key, label string) float64 {
	d, _ := f.parse(k, key, label)
	return d.InexactFloat64()
}

// int is a whole-number field (k is a whole kind, so it fits).
func (f *formNumbers) int(k quantity.Kind, key, label string) int {
	d, _ := f.parse(k, key, label)
	return int(d.IntPart())
}

// money is an optional amount: nil when blank or bad.
func (f *formNumbers) money(key, label string) *decimal.Decimal {
	d, ok := f.parse(quantity.Price, key, label)
	if !ok {
		return nil
	}
	return &d
}

// formNumberError is the message shown for a bad number: the parser's,
// with a hint of how to write counts when the text is not a number at all.
func formNumberError(k quantity.Kind, label, s string, err error) string {
	if errors.Is(err, quantity.ErrNotNumber) && k.Suffixes {
		return fmt.Sprintf("%s: %q is not a count (write e.g. 1000000, 1e6, 2.5M, 3B or 1T)", label, s)
	}
	return err.Error()
}
