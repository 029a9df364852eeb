package spend

import (
	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/quantity"
	"github.com/burnrate/burnrate/store"
)

// FoldDrivers keeps each currency's n largest drivers and sums the rest
// into one row per currency, which says in its provider column what it
// sums.
func FoldDrivers(ds []store.Driver, n int) []store.Driver {
	// Hundreds of drivers fold into a view's rest: added as a
	// quantity.Sum per currency, named (and given its amount) at the end.
	amounts := quantity.Sums[string]{}
	return foldRest(ds, n, func(d store.Driver) string { return d.Currency },
		func(_ *store.Driver, d store.Driver) { amounts.Add(d.Currency, d.Amount) },
		func(sum *store.Driver, cur string, folded int) {
			sum.Currency, sum.Provider = cur, OtherName(folded, "provider/service/account/model combination")
			sum.Amount = amounts[cur].Value()
		})
}

// FoldModels keeps each currency's n largest models and sums the rest,
// money, tokens and requests, into one row per currency named for what it
// sums.
func FoldModels(ms []store.ModelUsage, n int) []store.ModelUsage {
	return foldRest(ms, n, func(m store.ModelUsage) string { return m.Currency },
		func(sum *store.ModelUsage, m store.ModelUsage) {
			sum.Amount = sum.Amount.Add(m.Amount)
			sum.InputTokens += m.InputTokens
			sum.OutputTokens += m.OutputTokens
			sum.CachedTokens += m.CachedTokens
			sum.Requests += m.Requests
		},
		func(sum *store.ModelUsage, cur string, folded int) {
			sum.Currency, sum.Model = cur, OtherName(folded, "model")
		})
}

// foldRest keeps the first n items of each currency (xs comes largest
// first) and sums the others of each currency into one item, put after
// them: add adds an item to a sum (which starts as the zero item), and
// name gives a sum its currency and a label saying how many items it
// holds.
func foldRest[T any](xs []T, n int, currency func(T) string, add func(sum *T, x T), name func(sum *T, cur string, folded int)) []T {
	var out []T
	kept, folded := map[string]int{}, map[string]int{}
	sums := map[string]*T{}
	var curs []string
	for _, x := range xs {
		cur := currency(x)
		if kept[cur] < n {
			kept[cur]++
			out = append(out, x)
			continue
		}
		sum := sums[cur]
		if sum == nil {
			sum = new(T)
			sums[cur] = sum
			curs = append(curs, cur)
		}
		add(sum, x)
		folded[cur]++
	}
	for _, cur := range curs {
		name(sums[cur], cur, folded[cur])
		out = append(out, *sums[cur])
	}
	return out
}

// ShareText is part as a percentage of whole, for a table: whole
// percents for spend; a credit (part below zero) shows its negative share
// to a tenth, or "—" when that rounds to nothing, never a misleading 0%;
// "—" too when whole is not positive, where a share means nothing.
func ShareText(part, whole decimal.Decimal) string {
	if !whole.IsPositive() {
		return "—"
	}
	pct := part.Mul(decimal.NewFromInt(100)).Div(whole)
	if part.IsNegative() {
		if r := pct.Round(1); !r.IsZero() {
			return r.String() + "%"
		}
		return "—"
	}
	return pct.Round(0).String() + "%"
}
