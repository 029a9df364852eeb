package main

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/access"
	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/mail"
	"github.com/burnrate/burnrate/mail/mailtest"
	"github.com/burnrate/burnrate/pricing"
	"github.com/burnrate/burnrate/schedule"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestDigestArrivesOnceFromTwoServers runs the jobs of two processes on one
// database, as newApp wires them for serve and worker, with a real SMTP
// server on loopback: the org's digest for yesterday (over its daily
// budget) is due this hour, both processes work jobs, and exactly one email
// arrives for each recipient, with the text and HTML parts and the chart.
func TestDigestArrivesOnceFromTwoServers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	smtp := mailtest.Start(t, mailtest.Options{})
	url := storetest.URL(t)
	st, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	// An hour that is about to end would let the pass run in the next one.
	if now := time.Now().UTC(); now.Minute() == 59 && now.Second() > 45 {
		time.Sleep(time.Until(now.Truncate(time.Hour).Add(time.Hour + time.Second)))
	}
	org, owner := storetest.Org(t, st, storetest.OrgOpts{Name: "Loop Co"})
	admin := storetest.Member(t, st, org, access.Admin)
	yesterday := time.Now().UTC().AddDate(0, 0, -1)
	var csv strings.Builder
	csv.WriteString("BilledCost,ChargePeriodStart,BillingCurrency,ProviderName,ServiceName,BillingAccountId\n")
	for d := yesterday.AddDate(0, 0, -6); !d.After(yesterday); d = d.AddDate(0, 0, 1) {
		fmt.Fprintf(&csv, "80.00,%sT12:00:00Z,USD,AWS,Compute,acct-1\n", d.Format(time.DateOnly))
	}
	fmt.Fprintf(&csv, "150.00,%sT13:00:00Z,USD,AWS,Compute,acct-1\n", yesterday.Format(time.DateOnly))
	im := ingest.NewImporter(st, ingest.PriceTable(pricing.DefaultLLMPrices()), pricing.DefaultCatalog())
	if _, err := im.Import(ctx, ingest.ImportRequest{Org: org, FileName: "spend.csv", Via: "test"}, strings.NewReader(csv.String())); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateBudget(ctx, org.ID, 0, store.BudgetInput{Name: "Daily cap", Amount: decimal.NewFromInt(100),
		Currency: "USD", Period: "daily", Thresholds: []int{50, 80, 100}}); err != nil {
		t.Fatal(err)
	}
	set, err := st.DigestSettings(ctx, org.ID)
	if err != nil {
		t.Fatal(err)
	}
	set.SendHour = time.Now().UTC().Hour()
	if err := st.SaveDigestSettings(ctx, set, owner.ID); err != nil {
		t.Fatal(err)
	}

	cfg, err := loadConfig(env(map[string]string{"DATABASE_URL": url, "SMTP_URL": smtp.URL(), "BASE_URL": "https://burnrate.example.com"}))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	stop := make([]func(), 0, 2)
	for range 2 {
		pst, err := store.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		a, err := newApp(pst, cfg, log)
		if err != nil {
			t.Fatal(err)
		}
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- a.Jobs.Run(runCtx) }()
		stop = append(stop, func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("jobs stopped with %v", err)
			}
			pst.Close()
		})
	}
	defer func() {
		for _, s := range stop {
			s()
		}
	}()

	smtp.Wait(t, 2)
	time.Sleep(2 * time.Second) // room for a duplicate, were there one
	msgs := smtp.Messages()
	if len(msgs) != 2 {
		t.Fatalf("%d emails arrived, want 2 (owner and admin, once each)", len(msgs))
	}
	to := map[string]bool{}
	for _, m := range msgs {
		to[strings.Join(m.EnvelopeTo, ",")] = true
		if !strings.HasPrefix(m.Subject, "Loop Co: 230.00 USD") || !strings.Contains(m.Subject, "1 budget over") {
			t.Errorf("subject %q", m.Subject)
		}
		if !strings.Contains(m.Text, "Daily cap") || !strings.Contains(m.Text, "230.00 USD") {
			t.Errorf("text part lacks the budget over or the day's spend:\n%s", m.Text)
		}
		if !strings.Contains(m.HTML, `src="cid:chart"`) || strings.Contains(m.HTML, "<script") {
			t.Errorf("HTML part: %.300s", m.HTML)
		}
		if len(m.Inline) != 1 {
			t.Fatalf("%d inline parts, want the chart", len(m.Inline))
		}
		if _, err := png.Decode(bytes.NewReader(m.Inline[0].Data)); err != nil {
			t.Errorf("the chart is not a PNG: %v", err)
		}
		if m.Header.Get("List-Unsubscribe-Post") != "List-Unsubscribe=One-Click" || !strings.Contains(m.Header.Get("List-Unsubscribe"), "https://burnrate.example.com/digest/unsubscribe?token=") {
			t.Errorf("unsubscribe headers: %q, %q", m.Header.Get("List-Unsubscribe"), m.Header.Get("List-Unsubscribe-Post"))
		}
	}
	if !to[owner.Email] || !to[admin.Email] {
		t.Errorf("recipients %v, want %s and %s", to, owner.Email, admin.Email)
	}
}

// TestBudgetAlertMailedOnceAfterImports: an import that takes a budget past
// a threshold enqueues its evaluation in the import's transaction, and the
// budget's recipient gets one email; another import in the same period that
// crosses nothing new sends nothing more.
func TestBudgetAlertMailedOnceAfterImports(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	smtp := mailtest.Start(t, mailtest.Options{})
	url := storetest.URL(t)
	st, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	org, owner := storetest.Org(t, st, storetest.OrgOpts{Name: "Alert Co"})
	set, err := st.DigestSettings(ctx, org.ID)
	if err != nil {
		t.Fatal(err)
	}
	set.Enabled = false // this test is about alerts only
	if err := st.SaveDigestSettings(ctx, set, owner.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateBudget(ctx, org.ID, 0, store.BudgetInput{Name: "Monthly GPUs", Amount: decimal.NewFromInt(1000),
		Currency: "USD", Period: "monthly", Thresholds: []int{50, 80, 100}, Recipients: []string{"lead@example.com"}}); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(env(map[string]string{"DATABASE_URL": url, "SMTP_URL": smtp.URL()}))
	if err != nil {
		t.Fatal(err)
	}
	a, err := newApp(st, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- a.Jobs.Run(runCtx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("jobs stopped with %v", err)
		}
	}()

	im := a.Importer
	today := time.Now().UTC().Format(time.DateOnly)
	importCost := func(name, cost string) {
		t.Helper()
		body := "BilledCost,ChargePeriodStart,BillingCurrency,ProviderName,ServiceName,BillingAccountId\n" +
			cost + "," + today + "T00:30:00Z,USD,AWS,Compute," + name + "\n"
		if _, err := im.Import(ctx, ingest.ImportRequest{Org: org, FileName: name + ".csv", Via: "test"}, strings.NewReader(body)); err != nil {
			t.Fatal(err)
		}
	}
	importCost("a", "600.00") // 60%: past 50
	msgs := smtp.Wait(t, 1)
	if !strings.Contains(msgs[0].Subject, "Monthly GPUs") || strings.Join(msgs[0].EnvelopeTo, ",") != "lead@example.com" {
		t.Fatalf("alert: subject %q to %v", msgs[0].Subject, msgs[0].EnvelopeTo)
	}
	importCost("b", "50.00") // 65%: nothing new crossed
	// Its evaluation, and any alert it would send, done:
	storetest.WaitJobsDone(t, st, 30*time.Second, schedule.EvaluateArgs{}.Kind(), schedule.DeliverArgs{}.Kind(), mail.SendArgs{}.Kind())
	if n := len(smtp.Messages()); n != 1 {
		t.Fatalf("%d alert emails after a second import that crossed nothing, want 1", n)
	}
}
