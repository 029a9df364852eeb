package views

import (
	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/quantity"
	"github.com/burnrate/burnrate/savings"
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

// savingsDays writes a report's covered days, "1 day" or "9 days".
func savingsDays(d decimal.Decimal) string { return savings.Days(d.IntPart()) }
