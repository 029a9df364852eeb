package spend

import (
	"context"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/budget"
	"github.com/burnrate/burnrate/quantity"
	"github.com/burnrate/burnrate/store"
)

// TopGroups is how many groups of each currency a view's chart lays out
// (its daily table shows fewer), the largest by spend in the range; the rest are summed as
// one "Other". Eleven and Other are the chart palette's twelve colours, so
// no two series share one (at 25, stacked bars repeated colours and were
// read as one another). Without a bound a view of thousands of models held
// thousands of series of every day, hundreds of megabytes.
const TopGroups = 11

// TopModels is how many models of each currency a models table lists, the
// rest folded: a table reads well longer than a chart's legend.
const TopModels = 25

// OtherGroup is the key of the series that sums the groups beyond the top:
// Postgres text cannot hold a NUL byte, so no real group has it.
const OtherGroup = "\x00other"

// OtherName names what a row or series summing n left-out values of dim
// holds, for people and for exports alike.
func OtherName(n int, dim string) string {
	if n == 1 {
		return "Other (1 more " + dim + ")"
	}
	return "Other (" + strconv.Itoa(n) + " more " + dim + "s)"
}

// GroupName is a group as people read it: the empty value is "(none)".
func GroupName(g string) string {
	if g == "" {
		return "(none)"
	}
	return g
}

// NotLLM names, in a view grouped by model, the spend that has no model:
// cloud bills (compute, storage, GPUs), as opposed to LLM API calls.
const NotLLM = "Cloud (not LLM)"

// unmodelledPrefix starts the key, in a view by model, of a provider's LLM
// spend billed without a model (UnmodelledGroup); Postgres text holds no
// control character a bill would put in a model's name.
const unmodelledPrefix = "\x01"

// UnmodelledGroup is the group, in a view by model, of provider's LLM spend
// billed without a model (an OpenAI costs export grouped by project): not
// cloud spend, though it has no model either.
func UnmodelledGroup(provider string) string { return unmodelledPrefix + provider }

// GroupLabel is a group of dim as people read it, on the dashboard, in its
// CSV, in the spend API and in the digest alike: GroupName, except that in
// a view by model the spend without a model is NotLLM, and an LLM
// provider's spend billed without one "OpenAI — model not billed".
func GroupLabel(dim store.Dimension, g string) string {
	if dim == store.DimModel {
		if g == "" {
			return NotLLM
		}
		if p, ok := strings.CutPrefix(g, unmodelledPrefix); ok {
			return p + " — model not billed"
		}
	}
	return GroupName(g)
}

// withUnmodelled is rows (a view of orgID's spend under f by group) with,
// in a view by model, the LLM spend billed without a model taken out of
// the spend without a model (or the folded rest, where it is) and shown as
// its provider's UnmodelledGroup. Sums are unchanged.
func withUnmodelled(ctx context.Context, st *store.Store, orgID int64, f store.SpendFilter, group store.Dimension, rows []store.DaySpend) ([]store.DaySpend, error) {
	if group != store.DimModel {
		return rows, nil
	}
	llm, err := st.UnmodelledLLMSpend(ctx, orgID, f)
	if err != nil || len(llm) == 0 {
		return rows, err
	}
	type key struct {
		day time.Time
		cur string
	}
	none, other := map[key]int{}, map[key]int{}
	for i, r := range rows {
		switch {
		case r.Other:
			other[key{r.Day, r.Currency}] = i
		case r.Group == "":
			none[key{r.Day, r.Currency}] = i
		}
	}
	for _, u := range llm {
		k := key{u.Day, u.Currency}
		i, ok := none[k]
		if !ok {
			if i, ok = other[k]; !ok {
				continue // not in the view's rows (a day outside them)
			}
		}
		rows[i].Amount = rows[i].Amount.Sub(u.Amount)
		rows = append(rows, store.DaySpend{Day: u.Day, Currency: u.Currency, Group: UnmodelledGroup(u.Group), Amount: u.Amount})
	}
	// A day whose spend without a model was all LLM spend keeps no zero
	// row of it: a view of OpenAI alone has no "Cloud (not LLM)".
	return slices.DeleteFunc(rows, func(r store.DaySpend) bool { return !r.Other && r.Group == "" && r.Amount.IsZero() }), nil
}

// Series is one currency's daily spend, per group, over a run of days with
// no gaps.
type Series struct {
	Currency string
	Days     []time.Time
	Groups   []string                     // largest total first; OtherGroup, when there, last
	ByGroup  map[string][]decimal.Decimal // aligned with Days
	Totals   []decimal.Decimal            // per day, all groups
	Dim      store.Dimension              // what the groups are values of
	Other    int                          // how many groups OtherGroup sums
}

// Name is group g as shown and exported: itself, or for OtherGroup what it
// sums.
func (s Series) Name(g string) string {
	if g == OtherGroup {
		return OtherName(s.Other, string(s.Dim))
	}
	return g
}

// Total is the series' sum.
func (s Series) Total() decimal.Decimal {
	var t quantity.Sum
	for _, v := range s.Totals {
		t.Add(v)
	}
	return t.Value()
}

// Index is the position of day in s.Days, or -1 when s does not cover it.
func (s Series) Index(day time.Time) int {
	if len(s.Days) == 0 {
		return -1
	}
	i := budget.DaysBetween(s.Days[0], day)
	if i < 0 || i >= len(s.Days) {
		return -1
	}
	return i
}

// Build lays rows out per currency over every day from..to, missing days
// and groups at zero; rows marked Other go to OtherGroup. dim is what the
// rows are grouped by. Currencies come in alphabetical order.
func Build(rows []store.DaySpend, from, to time.Time, dim store.Dimension) []Series {
	n := budget.DaysBetween(from, to) + 1
	// The day totals and each group's total over the range add a term a
	// row; quantity.Sum adds them without allocating.
	type building struct {
		s           *Series
		totals      []quantity.Sum
		groupTotals map[string]*quantity.Sum
	}
	byCur := map[string]*building{}
	for _, r := range rows {
		i := budget.DaysBetween(from, r.Day)
		if i < 0 || i >= n {
			continue
		}
		b := byCur[r.Currency]
		if b == nil {
			s := &Series{Currency: r.Currency, ByGroup: map[string][]decimal.Decimal{}, Totals: make([]decimal.Decimal, n),
				Days: make([]time.Time, n), Dim: dim}
			for d := range s.Days {
				s.Days[d] = budget.AddDays(from, d)
			}
			b = &building{s: s, totals: make([]quantity.Sum, n), groupTotals: map[string]*quantity.Sum{}}
			byCur[r.Currency] = b
		}
		s := b.s
		key := r.Group
		if r.Other {
			key = OtherGroup
			s.Other = max(s.Other, r.OtherGroups)
		}
		g := s.ByGroup[key]
		if g == nil {
			g = make([]decimal.Decimal, n)
			s.ByGroup[key] = g
			b.groupTotals[key] = &quantity.Sum{}
		}
		g[i] = add(g[i], r.Amount)
		b.totals[i].Add(r.Amount)
		b.groupTotals[key].Add(r.Amount)
	}
	out := make([]Series, 0, len(byCur))
	for _, b := range byCur {
		s := b.s
		for i := range b.totals {
			s.Totals[i] = b.totals[i].Value()
		}
		gt := make(map[string]decimal.Decimal, len(b.groupTotals))
		for g, sum := range b.groupTotals {
			gt[g] = sum.Value()
			s.Groups = append(s.Groups, g)
		}
		sort.Slice(s.Groups, func(i, j int) bool {
			if oi, oj := s.Groups[i] == OtherGroup, s.Groups[j] == OtherGroup; oi != oj {
				return oj
			}
			if c := gt[s.Groups[i]].Cmp(gt[s.Groups[j]]); c != 0 {
				return c > 0
			}
			return s.Groups[i] < s.Groups[j]
		})
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b Series) int { return strings.Compare(a.Currency, b.Currency) })
	return out
}

// add is a + b without decimal's arithmetic when either is zero: a group
// has one row a day, so most sums of a view start at zero, and Add
// allocates even then.
func add(a, b decimal.Decimal) decimal.Decimal {
	switch {
	case a.IsZero():
		return b
	case b.IsZero():
		return a
	}
	return a.Add(b)
}

// Trim drops the days before from (kept only as a baseline), and the
// groups that spent nothing after it.
func (s Series) Trim(from time.Time) Series {
	i := budget.DaysBetween(s.Days[0], from)
	if i <= 0 {
		return s
	}
	t := s
	t.Days = s.Days[i:]
	t.Totals = s.Totals[i:]
	t.ByGroup = map[string][]decimal.Decimal{}
	var groups []string
	for _, g := range s.Groups {
		vs := s.ByGroup[g][i:]
		for _, v := range vs {
			if !v.IsZero() {
				t.ByGroup[g] = vs
				groups = append(groups, g)
				break
			}
		}
	}
	t.Groups = groups
	return t
}

// LastCompleteDay is the index of the last day of s before today (the
// org's day): today's bills are still arriving, so the comparisons of one
// day or week with the one before end there, on yesterday when s reaches
// it, as the headline does (docs/architecture.md, "The dashboard and its
// cache"); -1 when s has no day before today.
func LastCompleteDay(s Series, today time.Time) int {
	for i := len(s.Days) - 1; i >= 0; i-- {
		if s.Days[i].Before(today) {
			return i
		}
	}
	return -1
}
