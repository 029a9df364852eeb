package web

import (
	"container/list"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/spend"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/web/views"
)

// dashboardCache keeps computed dashboards, keyed by the org, its time
// zone, the view, today and the org's SpendVersion, so an entry can never
// outlive the data it was computed from: a new import or budget change
// makes a new key. Entries also expire after dashboardCacheTTL.
//
// The cache is bounded by bytes, not entries: dashboards differ in size by
// orders of magnitude (a week of one provider, two years of 25 models and
// their budgets), so a count bounds nothing. Each entry's size is estimated
// when it is stored (dashboardData.size); the least recently used entries
// go until the total is within the budget, and an entry larger than
// budget/dashboardCacheMaxShare is not kept at all.
type dashboardCache struct {
	mu      sync.Mutex
	budget  int64 // bytes
	used    int64 // bytes, the sum of the entries' estimates
	lru     *list.List
	entries map[string]*list.Element // of *dashboardCacheEntry
}

type dashboardCacheEntry struct {
	key  string
	data dashboardData
	size int64
	at   time.Time
}

const (
	dashboardCacheTTL = 10 * time.Minute
	// DefaultDashboardCacheBytes is the dashboard cache's budget when
	// Config leaves it at zero.
	DefaultDashboardCacheBytes = 64 << 20
	// dashboardCacheMaxShare: no one entry may take more than this share
	// of the budget, so that one huge view cannot empty the cache.
	dashboardCacheMaxShare = 8
)

// newDashboardCache returns a cache holding at most budget bytes of
// dashboards, by their estimated size; a budget <= 0 keeps nothing.
func newDashboardCache(budget int64) *dashboardCache {
	return &dashboardCache{budget: budget, lru: list.New(), entries: map[string]*list.Element{}}
}

func (c *dashboardCache) get(key string) (dashboardData, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return dashboardData{}, false
	}
	e := el.Value.(*dashboardCacheEntry)
	if time.Since(e.at) > dashboardCacheTTL {
		c.remove(el)
		return dashboardData{}, false
	}
	c.lru.MoveToFront(el)
	return e.data, true
}

func (c *dashboardCache) put(key string, d dashboardData) {
	size := d.size() + sizeString(key) + sizeCacheEntry
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.remove(el)
	}
	if size > c.budget/dashboardCacheMaxShare {
		return
	}
	c.entries[key] = c.lru.PushFront(&dashboardCacheEntry{key: key, data: d, size: size, at: time.Now()})
	c.used += size
	for c.used > c.budget {
		c.remove(c.lru.Back())
	}
}

func (c *dashboardCache) remove(el *list.Element) {
	e := c.lru.Remove(el).(*dashboardCacheEntry)
	delete(c.entries, e.key)
	c.used -= e.size
}

// Sizes, in bytes on a 64-bit platform, for the estimate of an entry. They
// count what the data points to as well as its headers: a decimal's
// big.Int and the smallest allocation of its digits (as measured: 64 bytes
// a computed decimal), a string's bytes rounded up to the allocator's
// 8-byte classes, a slice's capacity rather than its length. A map entry is
// counted at about what a Go map spends on it besides the key and value
// themselves. The estimate errs high: every decimal is counted with a
// big.Int, though a zero may have none.
const (
	sizeWord       = 8
	sizeSliceHdr   = 24
	sizeStringHdr  = 16
	sizeTime       = 24
	sizeDecimalHdr = 16      // decimal.Decimal itself
	sizeBigInt     = 32 + 16 // the *big.Int it points to, and its digits
	sizeDecimal    = sizeDecimalHdr + sizeBigInt
	sizeMapEntry   = 16
	sizeMapHdr     = 48
	sizeCacheEntry = 128 // the list element, the entry and its map slot
)

func sizeString(s string) int64 { return sizeStringHdr + int64((len(s)+7)&^7) }

func sizeStrings(ss []string) int64 {
	n := int64(sizeSliceHdr + cap(ss)*sizeStringHdr)
	for _, s := range ss {
		n += int64((len(s) + 7) &^ 7)
	}
	return n
}

func sizeDecimals(ds []decimal.Decimal) int64 {
	return int64(sizeSliceHdr + cap(ds)*sizeDecimalHdr + len(ds)*sizeBigInt)
}

func sizeStringMap(m map[string]string) int64 {
	n := int64(sizeMapHdr)
	for k, v := range m {
		n += sizeMapEntry + sizeString(k) + sizeString(v)
	}
	return n
}

// size estimates the bytes d holds: every slice, string and map it
// reaches, walked once. It is cheap next to computing d (no reflection,
// one pass over what d holds) and never looks at a value twice: the chart
// held by the view is the same as d.chart.
func (d dashboardData) size() int64 {
	var n int64
	for _, s := range d.series {
		n += sizeSeries(s)
	}
	n += sizeSliceHdr
	for _, as := range d.anomalies {
		n += sizeSliceHdr
		for _, a := range as {
			n += sizeTime + sizeString(a.Currency) + 2*sizeDecimal + sizeSliceHdr + sizeString(string(a.Dim))
			for _, m := range a.Drivers {
				n += sizeString(m.Group) + sizeString(m.Currency) + 2*sizeDecimal
			}
		}
	}
	return n + d.chart.size() + dashboardView(d.view).size()
}

func sizeSeries(s spend.Series) int64 {
	n := sizeString(s.Currency) + sizeSliceHdr + int64(cap(s.Days))*sizeTime + sizeStrings(s.Groups) +
		sizeDecimals(s.Totals) + sizeString(string(s.Dim)) + sizeWord
	n += sizeMapHdr
	for g, vs := range s.ByGroup {
		n += sizeMapEntry + sizeString(g) + sizeDecimals(vs)
	}
	return n
}

func (c chartData) size() int64 {
	n := sizeString(c.Group) + sizeString(c.View) + sizeSliceHdr
	n += sizeSliceHdr
	for _, v := range c.DataThrough {
		n += sizeString(v.Name) + sizeString(v.Source) + sizeString(v.Provider) + sizeString(v.Connection) + sizeString(v.LastDay) +
			sizeTime + 2*sizeWord + sizeSliceHdr + int64(len(v.Accounts))*sizeTime
		for _, a := range v.Accounts {
			n += sizeString(a.ID)
		}
	}
	for _, p := range c.Charts {
		n += sizeString(p.Currency) + sizeStrings(p.Days) + sizeStrings(p.Totals) + sizeStrings(p.Cumulative)
		n += sizeSliceHdr
		for _, s := range p.Series {
			n += sizeString(s.Name) + sizeStrings(s.Data) + sizeWord
		}
		n += sizeSliceHdr
		for _, b := range p.Budgets {
			n += sizeString(b.Name) + sizeStrings(b.Daily) + sizeStrings(b.Pace)
		}
		n += sizeSliceHdr
		for _, a := range p.Anomalies {
			n += sizeString(a.Day) + sizeString(a.Amount) + sizeString(a.Note)
		}
	}
	return n
}

// dashboardView is views.Dashboard, to hang the estimate on. Its Chart is
// d.chart, counted once in dashboardData.size.
type dashboardView views.Dashboard

func (v dashboardView) size() int64 {
	f := v.Filter
	n := sizeString(f.Range) + sizeString(f.From) + sizeString(f.To) + sizeString(f.Group) + sizeString(f.Chart) +
		sizeString(f.Cost) + sizeStringMap(f.Values) + sizeMapHdr
	for k, vs := range f.Facets {
		n += sizeMapEntry + sizeString(k) + sizeStrings(vs)
	}
	n += sizeString(v.Query) + sizeTime + sizeTime
	n += sizeSliceHdr + int64(len(v.Cards))*(4*sizeDecimal+2*sizeTime)
	for _, c := range v.Cards {
		n += sizeString(c.Currency) + sizeString(c.ForecastMethod)
	}
	n += sizeSliceHdr
	for _, b := range v.Budgets {
		n += sizeBudget(b.Budget) + 4*sizeTime + 3*sizeDecimal + sizeString(b.Method) + sizeString(b.Status) + 4*sizeWord +
			sizeSliceHdr + int64(len(b.Crossed))*sizeWord
		n += sizeSliceHdr + int64(len(b.History))*(2*sizeTime+sizeDecimal+sizeWord)
		for _, h := range b.History {
			n += sizeString(h.Status)
		}
	}
	n += sizeSliceHdr
	for _, b := range v.TagBudgets {
		n += sizeBudget(b)
	}
	n += sizeSliceHdr
	for _, t := range v.Daily {
		n += sizeString(t.Currency) + sizeStrings(t.Groups) + sizeWord + sizeDecimal + sizeSliceHdr
		n += int64(cap(t.Rows)-len(t.Rows)) * (sizeTime + sizeSliceHdr + sizeDecimalHdr + sizeWord + sizeStringHdr)
		for _, r := range t.Rows {
			n += sizeTime + sizeDecimals(r.Values) + sizeDecimal + sizeWord + sizeString(r.AnomalyNote)
		}
	}
	n += sizeSliceHdr
	for _, dr := range v.Drivers {
		n += sizeDriver(dr.Driver) + sizeWord
	}
	n += sizeSliceHdr
	for _, dr := range v.AllDrivers {
		n += sizeDriver(dr)
	}
	n += sizeMovers(v.DoD) + sizeMovers(v.WoW)
	n += sizeSliceHdr
	for _, g := range v.GPUs {
		n += sizeString(g.GPUType) + sizeString(g.Currency) + 2*sizeDecimal
	}
	n += sizeSliceHdr
	for _, m := range v.Models {
		n += sizeString(m.Model) + sizeString(m.Currency) + sizeDecimal + 4*sizeWord
	}
	n += sizeSliceHdr
	for _, a := range v.Anomalies {
		n += sizeTime + sizeString(a.Currency) + 2*sizeDecimal + sizeMovers(a.Drivers)
	}
	return n
}

func sizeBudget(b store.Budget) int64 {
	sc := b.Scope
	return 4*sizeWord + sizeString(b.Name) + sizeDecimal + sizeString(b.Currency) + sizeString(b.Period) +
		sizeString(sc.Provider) + sizeString(sc.Service) + sizeString(sc.Account) + sizeString(sc.Team) +
		sizeString(sc.Model) + sizeString(sc.Source) + sizeStringMap(sc.Tags) +
		sizeSliceHdr + int64(len(b.Thresholds))*sizeWord + sizeStrings(b.Recipients) + 2*sizeTime
}

func sizeDriver(d store.Driver) int64 {
	return sizeString(d.Provider) + sizeString(d.Service) + sizeString(d.Account) + sizeString(d.Model) +
		sizeString(d.Currency) + sizeDecimal
}

func sizeMovers(ms []views.Mover) int64 {
	n := int64(sizeSliceHdr)
	for _, m := range ms {
		n += sizeString(m.Group) + sizeString(m.Currency) + 3*sizeDecimal + sizeString(m.Percent)
	}
	return n
}

// headlineCache keeps each org's headline, with the budgets it was computed
// from: every view of the org shows the same one, whatever its range,
// filters and group, so a view not seen before computes only its own
// numbers. An entry holds for the stamp it was computed under (the org's
// time zone, currency, today and SpendVersion, which moves with every
// import and budget write) and for dashboardCacheTTL at most; one entry per
// org, and at most maxHeadlines orgs.
type headlineCache struct {
	mu      sync.Mutex
	entries map[int64]headlineEntry
}

// headlinePart is what every view of an org shares.
type headlinePart struct {
	view    views.Headline
	budgets []store.Budget
}

type headlineEntry struct {
	stamp string
	part  headlinePart
	at    time.Time
}

// maxHeadlines bounds the orgs whose headline is kept; a headline is a few
// kilobytes (its budgets' statuses).
const maxHeadlines = 4096

func newHeadlineCache() *headlineCache {
	return &headlineCache{entries: map[int64]headlineEntry{}}
}

func (c *headlineCache) get(orgID int64, stamp string) (headlinePart, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[orgID]
	if !ok || e.stamp != stamp || time.Since(e.at) > dashboardCacheTTL {
		return headlinePart{}, false
	}
	return e.part, true
}

func (c *headlineCache) put(orgID int64, stamp string, p headlinePart) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[orgID]; !ok && len(c.entries) >= maxHeadlines {
		for id, e := range c.entries {
			if time.Since(e.at) > dashboardCacheTTL {
				delete(c.entries, id)
			}
		}
		for id := range c.entries {
			if len(c.entries) < maxHeadlines {
				break
			}
			delete(c.entries, id)
		}
	}
	c.entries[orgID] = headlineEntry{stamp: stamp, part: p, at: time.Now()}
}

// breakdownCache keeps the breakdowns (drivers, GPU types, models, filter
// choices) of recent ranges, which do not depend on a view's group or
// chart: switching either computes only the series. Keys carry the
// headline's stamp (time zone, currency, today, SpendVersion), so an entry
// never outlives its data; entries also expire after dashboardCacheTTL, and
// at most maxBreakdowns are kept (a year's breakdown of a large org is
// about 200 KB).
type breakdownCache struct {
	mu      sync.Mutex
	entries map[string]breakdownEntry
}

type breakdownEntry struct {
	b  store.Breakdown
	at time.Time
}

const maxBreakdowns = 64

func newBreakdownCache() *breakdownCache {
	return &breakdownCache{entries: map[string]breakdownEntry{}}
}

func (c *breakdownCache) get(key string) (store.Breakdown, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || time.Since(e.at) > dashboardCacheTTL {
		return store.Breakdown{}, false
	}
	return e.b, true
}

func (c *breakdownCache) put(key string, b store.Breakdown) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; !ok && len(c.entries) >= maxBreakdowns {
		oldest := ""
		for k, e := range c.entries {
			if oldest == "" || e.at.Before(c.entries[oldest].at) {
				oldest = k
			}
		}
		delete(c.entries, oldest)
	}
	c.entries[key] = breakdownEntry{b: b, at: time.Now()}
}
