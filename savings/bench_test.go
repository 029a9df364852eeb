package savings_test

import (
	"context"
	"io"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/ingest/curgen"
	"github.com/burnrate/burnrate/pricing"
	"github.com/burnrate/burnrate/savings"
	"github.com/burnrate/burnrate/store/storetest"
)

// BenchmarkSavingsFind times savings.Find on an org holding a generated legacy
// CUR of SAVINGS_BENCH_ROWS rows (default 200,000; hourly GPU and other
// line items, every instance row its own resource id, the worst case for
// the per-resource grouping), imported through the real import path.
func BenchmarkSavingsFind(b *testing.B) {
	rows := 200_000
	if s := os.Getenv("SAVINGS_BENCH_ROWS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatal(err)
		}
		rows = n
	}
	st := storetest.New(b)
	o, _ := storetest.Org(b, st, storetest.OrgOpts{Name: "bench"})
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(curgen.Generate(pw, rows, 1)) }()
	im := ingest.NewImporter(st, ingest.PriceTable(pricing.DefaultLLMPrices()), pricing.DefaultCatalog())
	if _, err := im.Import(context.Background(), ingest.ImportRequest{Org: o, FileName: "cur.csv", Via: "test"}, pr); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		rep, err := savings.Find(context.Background(), st, o, savings.Options{Now: time.Now(), RoutingShare: savings.DefaultOptions().RoutingShare})
		if err != nil {
			b.Fatal(err)
		}
		if b.N == 1 {
			b.Logf("%d findings, totals %v", len(rep.Findings), rep.Totals)
		}
	}
}
