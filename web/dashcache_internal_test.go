package web

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/budget"
	"github.com/burnrate/burnrate/spend"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/web/views"
)

// bigDashboard computes a dashboard the way handleDashboard does, from
// rows of groups × days of spend in one currency: the series, the chart and
// the daily table, with the given group names (seed makes them distinct
// from another dashboard's).
func bigDashboard(seed, groups, days int) dashboardData {
	from := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var rows []store.DaySpend
	for g := range groups {
		for d := range days {
			rows = append(rows, store.DaySpend{Day: from.AddDate(0, 0, d), Currency: "USD",
				Group: fmt.Sprintf("model-%d-%d", seed, g), Amount: decimal.New(int64(seed*7+g*3+d+1), -2)})
		}
	}
	to := from.AddDate(0, 0, days-1)
	sq := spendQuery{Range: rangeCustom, Filter: store.SpendFilter{From: from, To: to}, Group: store.DimModel, Chart: "daily"}
	var d dashboardData
	for _, s := range spend.Build(rows, from, to, store.DimModel) {
		d.series = append(d.series, s)
		d.view.Daily = append(d.view.Daily, dailyTable(s, nil))
		d.chart.Charts = append(d.chart.Charts, chartFor(s, nil, nil, sq))
	}
	d.view.Chart = d.chart
	d.view.Query = "seed=" + strconv.Itoa(seed)
	for g := range min(groups, spend.TopGroups) {
		d.view.Models = append(d.view.Models, store.ModelUsage{Model: fmt.Sprintf("model-%d-%d", seed, g), Currency: "USD", Amount: decimal.New(int64(g), 0)})
		d.view.Drivers = append(d.view.Drivers, views.DriverRow{Driver: store.Driver{Provider: "openai", Model: fmt.Sprintf("model-%d-%d", seed, g), Currency: "USD"}})
	}
	return d
}

// TestDashboardCacheStaysWithinBudget stores many large, distinct
// dashboards of many sizes: the sum of what the cache holds, by the
// estimate it keeps for each entry, never exceeds its budget; an entry too
// large for its share is not kept; and the entry read most recently
// survives the churn.
func TestDashboardCacheStaysWithinBudget(t *testing.T) {
	t.Parallel()
	const budget = 4 << 20
	c := newDashboardCache(budget)
	views := make([]dashboardData, 0, 12)
	for i := range 12 {
		views = append(views, bigDashboard(i, 1+i*3, 30+i*60)) // from a few KB to past budget/8
	}
	var tooBig int
	for _, v := range views {
		if v.size() > budget/dashboardCacheMaxShare {
			tooBig++
		}
	}
	if tooBig == 0 || tooBig == len(views) {
		t.Fatalf("%d of %d views are over the share; the test wants some of each", tooBig, len(views))
	}
	c.put("hot", views[2])
	for i := range 300 {
		v := views[i%len(views)]
		c.put("view-"+strconv.Itoa(i), v)
		if _, ok := c.get("hot"); !ok {
			t.Fatalf("after %d puts the most recently read entry was evicted", i+1)
		}
		var sum int64
		for el := c.lru.Front(); el != nil; el = el.Next() {
			e := el.Value.(*dashboardCacheEntry)
			if e.size > budget/dashboardCacheMaxShare {
				t.Fatalf("an entry of %d bytes is kept, over the %d share", e.size, budget/dashboardCacheMaxShare)
			}
			sum += e.size
		}
		if sum != c.used || c.used > budget || len(c.entries) != c.lru.Len() {
			t.Fatalf("after %d puts: entries sum to %d, cache counts %d, budget %d; %d keys, %d in the list",
				i+1, sum, c.used, budget, len(c.entries), c.lru.Len())
		}
	}
	if c.used < budget/2 {
		t.Errorf("the cache holds %d of %d bytes after 300 puts: it should fill up", c.used, budget)
	}
	// Replacing an entry does not count it twice.
	used := c.used
	c.put("hot", views[2])
	if c.used != used {
		t.Errorf("putting the same key again: %d bytes, was %d", c.used, used)
	}
}

// TestDashboardCacheBoundsTheHeap fills the cache with far more large,
// distinct dashboards than its budget holds and measures the heap: what
// stays reachable is about the budget, not the sum of all views. It also
// checks that the estimate does not undercount what a view really holds.
// Not parallel: it reads the process's heap.
func TestDashboardCacheBoundsTheHeap(t *testing.T) {
	heap := func() int64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	// The estimate against the heap: keep 8 views alive, no cache.
	before := heap()
	kept := make([]dashboardData, 0, 8)
	var estimated int64
	for i := range 8 {
		v := bigDashboard(1000+i, 26, 365)
		kept = append(kept, v)
		estimated += v.size()
	}
	held := heap() - before
	runtime.KeepAlive(kept)
	kept = nil
	t.Logf("8 views: %d KB of heap, %d KB by estimate", held>>10, estimated>>10)
	if held > estimated*5/4 {
		t.Fatalf("8 views hold %d bytes of heap; the estimate says %d: it undercounts", held, estimated)
	}

	const budget = 8 << 20
	c := newDashboardCache(budget)
	before = heap()
	var stored int64
	for i := range 80 {
		v := bigDashboard(i, 26, 300) // ten months of the top 25 groups and Other
		if v.size() > budget/dashboardCacheMaxShare {
			t.Fatalf("a view of %d bytes is over the cache's share: the test would store nothing", v.size())
		}
		stored += v.size()
		c.put("view-"+strconv.Itoa(i), v)
	}
	grown := heap() - before
	runtime.KeepAlive(c)
	t.Logf("stored %d MB of views by estimate; the cache holds %d MB by estimate, the heap grew %d MB",
		stored>>20, c.used>>20, grown>>20)
	if stored < 4*budget {
		t.Fatalf("the test stores only %d bytes: not enough to overflow a %d budget", stored, budget)
	}
	if grown > 2*budget {
		t.Fatalf("the heap grew by %d MB with a %d MB cache", grown>>20, budget>>20)
	}
}

// TestHeadlineCacheIsBoundedAndStamped fills the headline cache past its
// bound: it never holds more than maxHeadlines orgs, keeps the one just
// stored, and answers only for the stamp an entry was computed under.
func TestHeadlineCacheIsBoundedAndStamped(t *testing.T) {
	t.Parallel()
	c := newHeadlineCache()
	for id := range int64(maxHeadlines + 50) {
		c.put(id, "v1", headlinePart{budgets: []store.Budget{{ID: id}}})
		if len(c.entries) > maxHeadlines {
			t.Fatalf("%d entries after %d puts, bound %d", len(c.entries), id+1, maxHeadlines)
		}
		if p, ok := c.get(id, "v1"); !ok || p.budgets[0].ID != id {
			t.Fatalf("org %d not kept right after its put", id)
		}
	}
	last := int64(maxHeadlines + 49)
	if _, ok := c.get(last, "v2"); ok {
		t.Fatal("an entry answered for another stamp")
	}
	c.put(last, "v2", headlinePart{})
	if _, ok := c.get(last, "v1"); ok {
		t.Fatal("the replaced entry still answers")
	}
}

// TestChartBudgetLinesPerDay checks the chart's budget lines, whose daily
// amount is formatted once a month, against each day's own
// budget.DailyAmount and the month's running sum, across months of 28 to
// 31 days, for a monthly and a daily budget.
func TestChartBudgetLinesPerDay(t *testing.T) {
	t.Parallel()
	from := time.Date(2026, 1, 20, 0, 0, 0, 0, time.UTC)
	var rows []store.DaySpend
	for d := range 80 {
		rows = append(rows, store.DaySpend{Day: from.AddDate(0, 0, d), Currency: "USD", Group: "AWS", Amount: decimal.New(int64(d+1), -1)})
	}
	to := from.AddDate(0, 0, 79)
	budgets := []store.Budget{
		{ID: 1, Name: "Monthly", Amount: decimal.RequireFromString("1000.003"), Currency: "USD", Period: "monthly"},
		{ID: 2, Name: "Daily", Amount: decimal.RequireFromString("33.335"), Currency: "USD", Period: "daily"},
	}
	sq := spendQuery{Range: rangeCustom, Filter: store.SpendFilter{From: from, To: to}, Group: store.DimProvider, Chart: "daily"}
	series := spend.Build(rows, from, to, store.DimProvider)
	p := chartFor(series[0], nil, budgets, sq)
	if len(p.Budgets) != 2 {
		t.Fatalf("%d budget lines", len(p.Budgets))
	}
	for i, b := range budgets {
		pace := decimal.Zero
		for j, day := range series[0].Days {
			daily := budget.DailyAmount(budget.Period(b.Period), b.Amount, day)
			if day.Day() == 1 {
				pace = decimal.Zero
			}
			pace = pace.Add(daily)
			if got := p.Budgets[i].Daily[j]; got != daily.StringFixed(2) {
				t.Errorf("%s on %s: daily %s, want %s", b.Name, day.Format(time.DateOnly), got, daily.StringFixed(2))
			}
			if got := p.Budgets[i].Pace[j]; got != pace.StringFixed(2) {
				t.Errorf("%s on %s: pace %s, want %s", b.Name, day.Format(time.DateOnly), got, pace.StringFixed(2))
			}
		}
	}
}
