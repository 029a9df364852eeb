package connect_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/burnrate/burnrate/connect"
	"github.com/burnrate/burnrate/store/storetest"
)

// BenchmarkOpenAIYearBackfill is a new connection's first sync of a year
// of daily OpenAI costs from a loopback server in the documented shape:
// 20 projects × 10 line items a day (73,000 cost rows), 180 buckets a page
// as the API allows, imported as one file. Each iteration is a fresh org.
//
//	go test -run '^$' -bench OpenAIYearBackfill -benchtime 3x ./connect/
func BenchmarkOpenAIYearBackfill(b *testing.B) {
	bd := newBundle(b)
	f := &fakeOpenAI{t: b, key: "sk-admin-bench-0123456789", perPage: 180, cost: baseCost}
	for i := range 20 {
		f.projects = append(f.projects, fmt.Sprintf("proj_%02d", i))
	}
	for i := range 10 {
		f.items = append(f.items, fmt.Sprintf("gpt-4o-2024-08-06, input %d", i))
	}
	srv := httptest.NewServer(f)
	b.Cleanup(srv.Close)
	bd.svc.OpenAIURL = srv.URL
	start := bd.now.AddDate(-1, 0, 1).Format(time.DateOnly)
	var rows int64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		bd.org, _ = storetest.Org(b, bd.st, storetest.OrgOpts{})
		c := bd.create(b, connect.Input{Name: "year", Kind: connect.KindOpenAI, APIKey: f.key, StartDate: start})
		b.StartTimer()
		res, err := bd.svc.Sync(context.Background(), bd.org.ID, c.ID)
		if err != nil {
			b.Fatal(err)
		}
		rows = res.Rows
	}
	b.ReportMetric(float64(rows), "rows/op")
}
