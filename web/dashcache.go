package web

import (
	"sync"
	"time"
)

// dashboardCache keeps computed dashboards, keyed by the org, its time
// zone, the view, today and the org's SpendVersion, so an entry can never
// outlive the data it was computed from: a new import or budget change
// makes a new key. Entries also expire after dashboardCacheTTL, and the
// cache holds at most dashboardCacheSize of them.
type dashboardCache struct {
	mu      sync.Mutex
	entries map[string]dashboardCacheEntry
}

type dashboardCacheEntry struct {
	data dashboardData
	at   time.Time
}

const (
	dashboardCacheTTL  = 10 * time.Minute
	dashboardCacheSize = 256
)

func newDashboardCache() *dashboardCache {
	return &dashboardCache{entries: map[string]dashboardCacheEntry{}}
}

func (c *dashboardCache) get(key string) (dashboardData, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || time.Since(e.at) > dashboardCacheTTL {
		return dashboardData{}, false
	}
	return e.data, true
}

func (c *dashboardCache) put(key string, d dashboardData) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= dashboardCacheSize {
		// Drop the expired, else the oldest.
		var oldest string
		for k, e := range c.entries {
			if time.Since(e.at) > dashboardCacheTTL {
				delete(c.entries, k)
			} else if oldest == "" || e.at.Before(c.entries[oldest].at) {
				oldest = k
			}
		}
		if len(c.entries) >= dashboardCacheSize {
			delete(c.entries, oldest)
		}
	}
	c.entries[key] = dashboardCacheEntry{data: d, at: time.Now()}
}
