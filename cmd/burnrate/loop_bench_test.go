package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/pricing"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// BenchmarkDigestJobs1000Orgs measures the job queue on the daily loop's
// busiest hour: 1,000 orgs, each over a daily budget yesterday, whose digest
// is due now. One process works the jobs (as serve does, SMTP not set, so
// mail ends in the outbox): the hourly pass, 1,000 digests, their email
// deliveries and outbox mail, plus the hourly budget evaluations. It reports
// the jobs finished per second and the wall time until all were done.
//
//	go test -run '^$' -bench BenchmarkDigestJobs1000Orgs -benchtime 1x ./cmd/burnrate/
func BenchmarkDigestJobs1000Orgs(b *testing.B) {
	const orgs = 1000
	ctx := context.Background()
	url := storetest.URL(b)
	st, err := store.Open(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	im := ingest.NewImporter(st, ingest.PriceTable(pricing.DefaultLLMPrices()), pricing.DefaultCatalog())
	yesterday := time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)
	for i := range orgs {
		org, owner := storetest.Org(b, st, storetest.OrgOpts{Name: fmt.Sprintf("Bench %d", i)})
		body := "BilledCost,ChargePeriodStart,BillingCurrency,ProviderName,ServiceName,BillingAccountId\n" +
			"130.00," + yesterday + "T12:00:00Z,USD,AWS,Compute,acct\n"
		if _, err := im.Import(ctx, ingest.ImportRequest{Org: org, FileName: "spend.csv", Via: "bench"}, strings.NewReader(body)); err != nil {
			b.Fatal(err)
		}
		if _, err := st.CreateBudget(ctx, org.ID, 0, store.BudgetInput{Name: "Daily cap", Amount: decimal.NewFromInt(100),
			Currency: "USD", Period: "daily", Thresholds: []int{50, 80, 100}}); err != nil {
			b.Fatal(err)
		}
		set, err := st.DigestSettings(ctx, org.ID)
		if err != nil {
			b.Fatal(err)
		}
		if err := st.SaveDigestSettings(ctx, set, owner.ID); err != nil {
			b.Fatal(err)
		}
	}
	cfg, err := loadConfig(env(map[string]string{"DATABASE_URL": url}))
	if err != nil {
		b.Fatal(err)
	}
	// Setting up takes a while: the digests are due in the hour the jobs
	// start in.
	if _, err := st.Pool().Exec(ctx, `UPDATE digest_settings SET send_hour = $1`, time.Now().UTC().Hour()); err != nil {
		b.Fatal(err)
	}
	a, err := newApp(st, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- a.Jobs.Run(runCtx) }()
	var finished, digests int
	for {
		var open int
		err := st.Pool().QueryRow(ctx, `SELECT count(*) FILTER (WHERE state IN ('completed', 'cancelled', 'discarded')),
			count(*) FILTER (WHERE state NOT IN ('completed', 'cancelled', 'discarded')),
			count(*) FILTER (WHERE kind = 'digest' AND state = 'completed') FROM river_job`).Scan(&finished, &open, &digests)
		if err != nil {
			b.Fatal(err)
		}
		if digests == orgs && open == 0 {
			break
		}
		if time.Since(start) > 15*time.Minute {
			b.Fatalf("after 15 minutes: %d digests done, %d jobs open", digests, open)
		}
		time.Sleep(200 * time.Millisecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	var mail int
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM outbox WHERE kind = 'digest'`).Scan(&mail); err != nil {
		b.Fatal(err)
	}
	if mail != orgs {
		b.Fatalf("%d digests in the outbox, want %d", mail, orgs)
	}
	b.ReportMetric(float64(finished)/elapsed.Seconds(), "jobs/s")
	b.ReportMetric(float64(finished), "jobs")
	b.ReportMetric(elapsed.Seconds(), "s-total")
}
