package advisor

import (
	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/quantity"
)

// jsonNumbers parses the number fields of a JSON body, keeping the first
// error: a *quantity.Error naming the field, which the API answers with 422
// and {"field": …}. A field left out (or null) is zero, or nil.
type jsonNumbers struct{ err error }

func (n *jsonNumbers) parse(k quantity.Kind, field string, t quantity.Text) (decimal.Decimal, bool) {
	if t == "" || n.err != nil {
		return decimal.Zero, false
	}
	d, err := k.Parse(field, string(t))
	if err != nil {
		n.err = err
		return decimal.Zero, false
	}
	return d, true
}

func (n *jsonNumbers) float(k quantity.Kind, field string, t quantity.Text) float64 {
	d, _ := n.parse(k, field, t)
	return d.InexactFloat64()
}

func (n *jsonNumbers) int(k quantity.Kind, field string, t quantity.Text) int {
	d, _ := n.parse(k, field, t)
	return int(d.IntPart())
}

// optFloat is a field whose absence means "the default", not zero.
func (n *jsonNumbers) optFloat(k quantity.Kind, field string, t quantity.Text) *float64 {
	d, ok := n.parse(k, field, t)
	if !ok {
		return nil
	}
	f := d.InexactFloat64()
	return &f
}

func (n *jsonNumbers) money(field string, t quantity.Text) *decimal.Decimal {
	d, ok := n.parse(quantity.Price, field, t)
	if !ok {
		return nil
	}
	return &d
}
