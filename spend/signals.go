package spend

import (
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/quantity"
	"github.com/burnrate/burnrate/store"
)

// Anomalies: a day is anomalous when it spends more than AnomalyFactor
// times the median of the AnomalyWindow days before it, and more than
// AnomalyMinimum (in its currency) — so that 3 cents after 1 cent is not.
const (
	AnomalyWindow  = 7
	AnomalyFactor  = 2
	AnomalyMinimum = 50
)

// Median is the middle value of vs (the mean of the middle two when even),
// zero for none.
func Median(vs []decimal.Decimal) decimal.Decimal {
	if len(vs) == 0 {
		return decimal.Zero
	}
	s := slices.Clone(vs)
	slices.SortFunc(s, quantity.Compare)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return s[len(s)/2-1].Add(s[len(s)/2]).Div(decimal.NewFromInt(2))
}

// Anomaly is a day that spent well above its trailing baseline, and the
// groups whose growth made it.
type Anomaly struct {
	Day      time.Time
	Currency string
	Amount   decimal.Decimal
	Baseline decimal.Decimal // median of the AnomalyWindow days before
	Drivers  []Mover         // up to 3 groups that grew most against their own medians
	Dim      store.Dimension // what the drivers' groups are values of
}

// Impact is how much more than usual the day spent: its amount less its
// baseline.
func (a Anomaly) Impact() decimal.Decimal { return a.Amount.Sub(a.Baseline) }

// TopAnomalies is how many unusual days a view lists before "show all".
const TopAnomalies = 7

// RankAnomalies orders as by what they cost beyond the usual, largest
// first, main's currency (the org's) before the others: the few that
// matter come first, whatever their dates.
func RankAnomalies(as []Anomaly, main string) {
	slices.SortStableFunc(as, func(a, b Anomaly) int {
		if c := CompareCurrencies(main, a.Currency, b.Currency); c != 0 && (a.Currency == main || b.Currency == main) {
			return c
		}
		if c := b.Impact().Cmp(a.Impact()); c != 0 {
			return c
		}
		return b.Day.Compare(a.Day)
	})
}

// Note says why the day is an anomaly and what grew, in one sentence, for
// tooltips, exports and messages alike.
func (a Anomaly) Note() string {
	note := "More than " + strconv.Itoa(AnomalyFactor) + "× the median of the " + strconv.Itoa(AnomalyWindow) +
		" days before (" + quantity.FormatMoney(a.Baseline, a.Currency) + ")."
	if len(a.Drivers) > 0 {
		note += " Grew most:"
		for i, m := range a.Drivers {
			if i > 0 {
				note += ","
			}
			note += " " + GroupLabel(a.Dim, m.Group) + " " + quantity.FormatSignedMoney(m.Change(), a.Currency)
		}
	}
	return note
}

// Anomalies looks at each day of s from index start on; the AnomalyWindow
// days before a day are its baseline, so the first AnomalyWindow days of s,
// counted from its first day with spend, are never judged.
func Anomalies(s Series, start int) []Anomaly {
	var out []Anomaly
	minimum := decimal.NewFromInt(AnomalyMinimum)
	// The days before the series' first spend are no baseline: before an
	// org's first bills they are not days that spent nothing, and a new
	// org's fifth day measured against three of them and a weekend was
	// "unusual". A day is judged once AnomalyWindow days of bills precede it.
	first := slices.IndexFunc(s.Totals, func(d decimal.Decimal) bool { return !d.IsZero() })
	if first < 0 {
		return nil
	}
	for i := max(start, first+AnomalyWindow); i < len(s.Days); i++ {
		base := Median(s.Totals[i-AnomalyWindow : i])
		amount := s.Totals[i]
		if !base.IsPositive() || quantity.Compare(amount, minimum) <= 0 || quantity.Compare(amount, base.Mul(decimal.NewFromInt(AnomalyFactor))) <= 0 {
			continue
		}
		a := Anomaly{Day: s.Days[i], Currency: s.Currency, Amount: amount, Baseline: base, Dim: s.Dim}
		for _, g := range s.Groups {
			vs := s.ByGroup[g]
			gb := Median(vs[i-AnomalyWindow : i])
			if quantity.Compare(vs[i], gb) > 0 {
				a.Drivers = append(a.Drivers, Mover{Group: s.Name(g), Currency: s.Currency, Before: gb, After: vs[i]})
			}
		}
		SortMovers(a.Drivers)
		if len(a.Drivers) > 3 {
			a.Drivers = a.Drivers[:3]
		}
		out = append(out, a)
	}
	return out
}

// Mover is a group whose spend changed between two spans.
type Mover struct {
	Group         string
	Currency      string
	Before, After decimal.Decimal
}

// Change is After - Before.
func (m Mover) Change() decimal.Decimal { return m.After.Sub(m.Before) }

// Percent is the change relative to Before, "new" when Before is zero.
func (m Mover) Percent() string {
	if m.Before.IsZero() {
		return "new"
	}
	return m.Change().Mul(decimal.NewFromInt(100)).Div(m.Before.Abs()).StringFixed(0) + "%"
}

// SortMovers orders ms by the size of their change, largest first, ties by
// group.
func SortMovers(ms []Mover) {
	sort.SliceStable(ms, func(i, j int) bool {
		if c := ms[i].Change().Abs().Cmp(ms[j].Change().Abs()); c != 0 {
			return c > 0
		}
		return ms[i].Group < ms[j].Group
	})
}

// Movers compares each group's spend over the span days ending at index
// end (inclusive) with the span before it, largest change first, at most
// limit of them; nil when s has not 2×span days up to end.
func Movers(s Series, end, span, limit int) []Mover {
	if end-2*span+1 < 0 {
		return nil
	}
	var out []Mover
	for _, g := range s.Groups {
		vs := s.ByGroup[g]
		m := Mover{Group: s.Name(g), Currency: s.Currency}
		var after, before quantity.Sum
		for i := end - span + 1; i <= end; i++ {
			after.Add(vs[i])
		}
		for i := end - 2*span + 1; i <= end-span; i++ {
			before.Add(vs[i])
		}
		m.After, m.Before = after.Value(), before.Value()
		if !m.Change().IsZero() {
			out = append(out, m)
		}
	}
	SortMovers(out)
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}
