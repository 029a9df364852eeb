package web

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/budget"
	"github.com/burnrate/burnrate/spend"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/web/views"
)

// BenchmarkDashboardLayout times the Go side of a dashboard view not
// cached yet, after its queries: laying out the overview (series,
// anomalies, movers), the page's tables and chart, rendering the htmx
// fragment and gzipping it. Rows are shaped like a large org's (two
// currencies, the top groups and the rest, amounts to four decimals, 700
// drivers); the queries themselves are measured by scripts/bench-dashboard.
//
//	go test -run '^$' -bench DashboardLayout -benchmem ./web/
func BenchmarkDashboardLayout(b *testing.B) {
	today := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	for _, days := range []int{30, 90, 365} {
		b.Run(fmt.Sprintf("%dd", days), func(b *testing.B) {
			from := budget.AddDays(today, 1-days)
			sq, err := parseSpendQuery(url.Values{"range": {"custom"}, "from": {from.Format(time.DateOnly)},
				"to": {today.Format(time.DateOnly)}, "group": {"team"}}, today, range30d)
			if err != nil {
				b.Fatal(err)
			}
			rows, bk := benchOverviewRows(from, today)
			head := headlinePart{budgets: []store.Budget{
				{Name: "All spend", Amount: decimal.NewFromInt(9_000_000), Currency: "USD", Period: string(budget.Monthly)},
				{Name: "LLM per day", Amount: decimal.NewFromInt(30_000), Currency: "USD", Period: string(budget.Daily)}}}
			zw, _ := gzip.NewWriterLevel(io.Discard, gzipLevel)
			for b.Loop() {
				o := spend.Compose(sq.Filter, sq.Group, today, rows, rows, bk)
				d := layoutDashboard("USD", sq, head, o)
				zw.Reset(io.Discard)
				if err := views.DashboardContent(d.view).Render(context.Background(), zw); err != nil {
					b.Fatal(err)
				}
				zw.Close()
			}
		})
	}
}

// benchOverviewRows is what SpendByDayTop and SpendBreakdown answer for
// a large org from AnomalyWindow days before from to to.
func benchOverviewRows(from, to time.Time) ([]store.DaySpend, store.Breakdown) {
	r := rand.New(rand.NewPCG(1, 2))
	amount := func(scale int64) decimal.Decimal { return decimal.New(r.Int64N(scale*10_000), -4) }
	var rows []store.DaySpend
	for day := budget.AddDays(from, -spend.AnomalyWindow); !day.After(to); day = budget.AddDays(day, 1) {
		for _, cur := range []string{"EUR", "USD"} {
			for g := range 10 {
				rows = append(rows, store.DaySpend{Day: day, Currency: cur, Group: fmt.Sprintf("team-%02d", g), Amount: amount(40_000)})
			}
			rows = append(rows, store.DaySpend{Day: day, Currency: cur, Amount: amount(5_000), Other: true, OtherGroups: 14})
		}
	}
	bk := store.Breakdown{Facets: map[store.Dimension][]string{}}
	for i := range 700 {
		bk.Drivers = append(bk.Drivers, store.Driver{Provider: "AWS", Service: fmt.Sprintf("service-%d", i%40),
			Account: fmt.Sprintf("account-%d", i%17), Currency: []string{"USD", "EUR"}[i%2], Amount: amount(100_000)})
	}
	for i := range 12 {
		bk.GPUs = append(bk.GPUs, store.GPUUsage{GPUType: fmt.Sprintf("gpu-%d", i), Currency: "USD", Amount: amount(50_000), GPUHours: amount(2_000)})
		bk.Models = append(bk.Models, store.ModelUsage{Model: fmt.Sprintf("model-%d", i), Currency: "USD", Amount: amount(9_000),
			InputTokens: r.Int64N(1e10), OutputTokens: r.Int64N(1e9), Requests: r.Int64N(1e7)})
	}
	for _, dim := range []store.Dimension{store.DimProvider, store.DimTeam, store.DimModel} {
		for i := range 15 {
			bk.Facets[dim] = append(bk.Facets[dim], fmt.Sprintf("%s-%d", dim, i))
		}
	}
	return rows, bk
}
