package views

import (
	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/quantity"
)

func savingsMoney(d decimal.Decimal, currency string) string {
	return quantity.FormatMoney(d, currency)
}

func savingsNum(d decimal.Decimal) string {
	if d.IsZero() {
		return "—"
	}
	return quantity.Group(d.Round(1).String())
}
