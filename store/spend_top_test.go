package store_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestSpendByDayTopKeepsTheLargestAndSumsTheRest checks SpendByDayTop
// against SpendByDay: the same totals every day, the top groups of each
// currency (ranked by their spend in the limit's days) as they are, and the
// others summed in one row per day that says how many groups it holds.
func TestSpendByDayTopKeepsTheLargestAndSumsTheRest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	org, _ := storetest.Org(t, st, storetest.OrgOpts{})
	var rows []store.Charge
	add := func(day int, model, currency, cost string) {
		rows = append(rows, charge(len(rows)+1, fmt.Sprintf("2026-03-%02d 10:00", day), cost, func(c *store.Charge) {
			c.Model, c.BillingCurrency = model, currency
		}))
	}
	for m := range 40 {
		for day := 1; day <= 10; day++ {
			add(day, fmt.Sprintf("m%02d", m), "USD", fmt.Sprintf("%d.%02d", (m*7)%23+day%3, m))
		}
	}
	add(1, "baseline-only", "USD", "5000") // large, but before the ranking days
	add(4, "credit", "USD", "-30")
	add(5, "tied-a", "USD", "0.01")
	add(5, "tied-b", "USD", "0.01")
	for _, m := range []string{"e1", "e2", "e3"} {
		add(6, m, "EUR", "2.5")
	}
	importRows(t, st, org, store.DedupeNone, rows...)

	f := store.SpendFilter{From: march(1), To: march(10)}
	top := store.TopGroups{N: 5, From: march(3), To: march(8)}
	full, err := st.SpendByDay(ctx, org.ID, f, store.DimModel)
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.SpendByDayTop(ctx, org.ID, f, store.DimModel, top)
	if err != nil {
		t.Fatal(err)
	}

	// What the top should be, from the full rows.
	ranked := map[string]map[string]decimal.Decimal{} // currency → group → spend in the ranking days
	inRange := map[string]map[string]bool{}
	for _, r := range full {
		if ranked[r.Currency] == nil {
			ranked[r.Currency], inRange[r.Currency] = map[string]decimal.Decimal{}, map[string]bool{}
		}
		if !r.Day.Before(top.From) && !r.Day.After(top.To) {
			ranked[r.Currency][r.Group] = ranked[r.Currency][r.Group].Add(r.Amount)
			inRange[r.Currency][r.Group] = true
		} else if _, ok := ranked[r.Currency][r.Group]; !ok {
			ranked[r.Currency][r.Group] = decimal.Zero
		}
	}
	wantTop, wantOther := map[string]map[string]bool{}, map[string]int{}
	for cur, groups := range ranked {
		var names []string
		for g := range groups {
			names = append(names, g)
		}
		sort.Slice(names, func(i, j int) bool {
			if c := groups[names[i]].Cmp(groups[names[j]]); c != 0 {
				return c > 0
			}
			return names[i] < names[j]
		})
		wantTop[cur] = map[string]bool{}
		for i, g := range names {
			if i < top.N {
				wantTop[cur][g] = true
			} else if inRange[cur][g] {
				wantOther[cur]++
			}
		}
	}
	if wantTop["USD"]["baseline-only"] || wantOther["USD"] != 38 || wantOther["EUR"] != 0 {
		t.Fatalf("fixture: top %v, others %v", wantTop, wantOther)
	}

	dayTotals := func(rs []store.DaySpend) map[string]decimal.Decimal {
		out := map[string]decimal.Decimal{}
		for _, r := range rs {
			k := r.Day.Format(time.DateOnly) + " " + r.Currency
			out[k] = out[k].Add(r.Amount)
		}
		return out
	}
	want, have := dayTotals(full), dayTotals(got)
	for k, v := range want {
		if !have[k].Equal(v) {
			t.Errorf("%s: total %s with top groups, %s without", k, have[k], v)
		}
	}
	if len(have) != len(want) {
		t.Errorf("%d days×currencies with top groups, %d without", len(have), len(want))
	}

	exact := map[string]decimal.Decimal{}
	for _, r := range full {
		exact[r.Day.Format(time.DateOnly)+" "+r.Currency+" "+r.Group] = r.Amount
	}
	perDay := map[string]int{}
	for _, r := range got {
		k := r.Day.Format(time.DateOnly) + " " + r.Currency
		perDay[k]++
		switch {
		case r.Other:
			if r.Group != "" || r.OtherGroups != wantOther[r.Currency] {
				t.Errorf("%s: other row %+v, want group \"\" summing %d groups", k, r, wantOther[r.Currency])
			}
		case !wantTop[r.Currency][r.Group]:
			t.Errorf("%s: group %q is not in the top %d of %s", k, r.Group, top.N, r.Currency)
		case !r.Amount.Equal(exact[k+" "+r.Group]) || r.OtherGroups != 0:
			t.Errorf("%s %s: %s, want %s as it is", k, r.Group, r.Amount, exact[k+" "+r.Group])
		}
	}
	for k, n := range perDay {
		if n > top.N+1 {
			t.Errorf("%s: %d rows, want at most %d", k, n, top.N+1)
		}
	}
}

func march(d int) time.Time { return time.Date(2026, 3, d, 0, 0, 0, 0, time.UTC) }

// TestSpendByDayTopEqualsWindowsQuery checks the top-groups query against
// the window-function query it replaced, row for row and to the last digit:
// every group-by, no filter (daily_spend_by), one filter and two (daily_spend),
// both cost bases, and limits of 1, 2 and 10 groups over part of the range.
func TestSpendByDayTopEqualsWindowsQuery(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	data := genSpendData(t, st, 11)
	from, to := data.first, data.last
	mid := from.AddDate(0, 0, 20)
	filters := []store.SpendFilter{
		{From: from, To: to},
		{From: from, To: to, Cost: store.CostAmortized},
		{From: from, To: mid, Provider: "AWS"},
		{From: from, To: to, Provider: "OpenAI", Team: "ml"},
		{From: mid, To: to, Source: "focus", Category: "Usage", Cost: store.CostAmortized},
	}
	checked := 0
	for _, f := range filters {
		for _, g := range store.GroupDimensions {
			for _, n := range []int{1, 2, 10} {
				top := store.TopGroups{N: n, From: f.From.AddDate(0, 0, 7), To: f.To}
				want, err := st.SpendByDayTopWindows(ctx, data.org.ID, f, g, top)
				if err != nil {
					t.Fatal(err)
				}
				got, err := st.SpendByDayTop(ctx, data.org.ID, f, g, top)
				if err != nil {
					t.Fatal(err)
				}
				// The same rows; the order of a day's groups is the old
				// query's only.
				inDayOrder(got)
				inDayOrder(want)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%+v by %s, top %d:\n got %v\nwant %v", f, g, n, got, want)
				}
				checked += len(want)
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d rows compared", checked)
	}
}

// inDayOrder sorts rows as the window-function query did: days,
// currencies, then the top groups largest first (ties by name) and the
// rest last.
func inDayOrder(rows []store.DaySpend) {
	slices.SortFunc(rows, func(a, b store.DaySpend) int {
		if c := a.Day.Compare(b.Day); c != 0 {
			return c
		}
		if c := strings.Compare(a.Currency, b.Currency); c != 0 {
			return c
		}
		if a.Other != b.Other {
			if a.Other {
				return 1
			}
			return -1
		}
		if c := b.Amount.Cmp(a.Amount); c != 0 {
			return c
		}
		return strings.Compare(a.Group, b.Group)
	})
}
