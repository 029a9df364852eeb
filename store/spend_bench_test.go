package store_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/burnrate/burnrate/store"
)

// BenchmarkSpendBreakdown times the dashboard's unfiltered breakdown, the
// way the web calls it (fenced to the org, pgx's statement cache warm), on
// an existing database: STORE_BENCH_DB names it (a URL), STORE_BENCH_ORG
// the org's slug (default bench, as scripts/bench-dashboard loads it; keep
// one with BENCH_KEEP=1). Ranges end on the org's last day of spend.
// Skipped without STORE_BENCH_DB. It only reads.
func BenchmarkSpendBreakdown(b *testing.B) {
	url := os.Getenv("STORE_BENCH_DB")
	if url == "" {
		b.Skip("STORE_BENCH_DB not set")
	}
	slug := os.Getenv("STORE_BENCH_ORG")
	if slug == "" {
		slug = "bench"
	}
	ctx := context.Background()
	st, err := store.Open(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	org, err := st.OrgBySlug(ctx, slug)
	if err != nil {
		b.Fatal(err)
	}
	var last time.Time
	if err := st.Pool().QueryRow(ctx, `SELECT max(day) FROM daily_spend WHERE org_id = $1`, org.ID).Scan(&last); err != nil {
		b.Fatal(err)
	}
	for _, days := range []int{30, 90, 365} {
		b.Run(strconv.Itoa(days)+"d", func(b *testing.B) {
			f := store.SpendFilter{From: last.AddDate(0, 0, 1-days), To: last}
			err := st.Fenced(ctx, org.ID, 0, func(st *store.Store) error {
				for b.Loop() {
					if _, err := st.SpendBreakdown(ctx, org.ID, f); err != nil {
						return err
					}
				}
				// Whether Postgres settled on a generic plan (no planning a
				// call) or plans each call for its parameters.
				var generic, custom int64
				if err := store.RawQueryRow(ctx, st, `SELECT coalesce(sum(generic_plans), 0), coalesce(sum(custom_plans), 0)
					FROM pg_prepared_statements WHERE statement LIKE '%FROM month_to_date_drivers%'`).Scan(&generic, &custom); err != nil {
					return err
				}
				b.Logf("breakdown statement: %d generic plans, %d custom plans", generic, custom)
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		})
	}
}
