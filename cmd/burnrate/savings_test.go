package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/pricing"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestSavingsCommand prints an org's savings from a FOCUS bill with an
// unowned GPU instance running around the clock, as text and as the API's
// JSON; a bad share names the flag.
func TestSavingsCommand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.URL(t)
	st, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	org, _ := storetest.Org(t, st, storetest.OrgOpts{Name: "GPU Co"})
	var f strings.Builder
	f.WriteString("BilledCost,ChargePeriodStart,ChargePeriodEnd,BillingCurrency,ProviderName,ServiceName,ChargeCategory,SkuMeter,ResourceId,ConsumedQuantity,ConsumedUnit,BillingAccountId\n")
	first := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := range 9 {
		d := first.AddDate(0, 0, i)
		fmt.Fprintf(&f, "390.912,%s,%s,USD,AWS,Amazon Elastic Compute Cloud,Usage,USE1-BoxUsage:g5.48xlarge,i-0abc,24,Hours,acct-1\n",
			d.Format(time.RFC3339), d.AddDate(0, 0, 1).Format(time.RFC3339))
	}
	im := ingest.NewImporter(st, ingest.PriceTable(pricing.DefaultLLMPrices()), pricing.DefaultCatalog())
	if _, err := im.Import(ctx, ingest.ImportRequest{Org: org, FileName: "gpu.csv", Via: "test"}, strings.NewReader(f.String())); err != nil {
		t.Fatal(err)
	}
	savingsCmd := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(ctx, append([]string{"savings"}, args...),
			env(map[string]string{"DATABASE_URL": url, "LOG_LEVEL": "error"}), &out, &bytes.Buffer{})
		return out.String(), err
	}

	text, err := savingsCmd("--org", org.Slug)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Bills of 2026-10-11 to 2026-11-09 (9 days with charges)", "Savings found: 11,890.24 USD/month", "[always-on] g5.48xlarge i-0abc running 24/7 for 9 days, 390.91 USD/day, no tags at all",
		"AWS g5.48xlarge i-0abc: 2026-11-01 to 2026-11-09, 216 instance-hours, 9 charges, 3,518.21 USD"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	out, err := savingsCmd("--org", org.Slug, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var js struct {
		Findings []struct {
			Kind    string
			Monthly string `json:"monthly_savings"`
		}
	}
	if err := json.Unmarshal([]byte(out), &js); err != nil || len(js.Findings) != 1 || js.Findings[0].Monthly != "11890.24" {
		t.Errorf("JSON (%v): %s", err, out)
	}
	if _, err := savingsCmd("--org", org.Slug, "--share", "1e999"); err == nil || !strings.Contains(err.Error(), "--share") {
		t.Errorf("bad share: %v", err)
	}
	if _, err := savingsCmd("--org", "nope"); err == nil || !strings.Contains(err.Error(), "no org") {
		t.Errorf("unknown org: %v", err)
	}
}

// TestSavingsCommandShortBill: one day of LLM usage is "1 day", its
// routing saving is for that day only (too few days to scale to a month),
// and the model's evidence shows requests and tokens, not "0 charges".
func TestSavingsCommandShortBill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.URL(t)
	st, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	org, _ := storetest.Org(t, st, storetest.OrgOpts{Name: "Short Co"})
	usage := "start_time_iso,end_time_iso,project_id,num_model_requests,model,input_tokens,output_tokens,input_cached_tokens\n" +
		"2026-11-01T00:00:00Z,2026-11-02T00:00:00Z,proj_1,50000,gpt-4.1,100000000,20000000,0\n"
	im := ingest.NewImporter(st, ingest.PriceTable(pricing.DefaultLLMPrices()), pricing.DefaultCatalog())
	if _, err := im.Import(ctx, ingest.ImportRequest{Org: org, FileName: "usage.csv", Via: "test"}, strings.NewReader(usage)); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(ctx, []string{"savings", "--org", org.Slug},
		env(map[string]string{"DATABASE_URL": url, "LOG_LEVEL": "error"}), &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"(1 day with charges)", "Savings found: none.",
		"115.20 USD over 1 day of bills (too few days to scale to a month: at least 7 needed; counted in no total)",
		"- gpt-4.1: 2026-10-03 to 2026-11-01, 50,000 requests, 120,000,000 tokens, 360.00 USD"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	for _, bad := range []string{"1 days", "0 charges", "/month\n  From your own mix"} {
		if strings.Contains(text, bad) {
			t.Errorf("output has %q:\n%s", bad, text)
		}
	}
}

// TestSavingsRefreshedInTheBackground: an import and the removal of one
// (from the command line) each enqueue the refresh of the org's stored
// savings report, and the jobs of a running process store it.
func TestSavingsRefreshedInTheBackground(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.URL(t)
	st, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	org, _ := storetest.Org(t, st, storetest.OrgOpts{Name: "Refresh Co"})
	cfg, err := loadConfig(env(map[string]string{"DATABASE_URL": url}))
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
	// waitStored waits for a stored report whose bills run through the
	// day through: a refresh is due RefreshDelay after its import, and
	// River's scheduler makes it available within 5 s more.
	waitStored := func(step, through string) {
		t.Helper()
		var saved store.SavingsReport
		for range 600 {
			var ok bool
			if saved, ok, err = st.SavingsReport(ctx, org.ID); err != nil {
				t.Fatal(err)
			}
			if ok && strings.Contains(saved.Inputs, ".."+through+" ") {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("%s: no savings report through %s stored; the last is of %q", step, through, saved.Inputs)
	}

	im := a.Importer
	var ids []int64
	for i, day := range []string{"2026-11-01", "2026-11-02"} { // two accounts: the second bill replaces none of the first
		res, err := im.Import(ctx, ingest.ImportRequest{Org: org, FileName: day + ".csv", Via: "test"}, strings.NewReader(fmt.Sprintf(
			"BilledCost,ChargePeriodStart,ChargePeriodEnd,BillingCurrency,ProviderName,ServiceName,ChargeCategory,BillingAccountId\n"+
				"12.5,%sT00:00:00Z,,USD,AWS,Amazon S3,Usage,acct-%d\n", day, i)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.ID)
	}
	waitStored("after the imports", "2026-11-02")
	var out bytes.Buffer
	if err := run(ctx, []string{"imports", "delete", "--org", org.Slug, fmt.Sprint(ids[1])},
		env(map[string]string{"DATABASE_URL": url, "LOG_LEVEL": "error"}), &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	waitStored("after the removal", "2026-11-01")
}
