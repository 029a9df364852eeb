package savings_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/ingest/curgen"
	"github.com/burnrate/burnrate/pricing"
	"github.com/burnrate/burnrate/savings"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

var files atomic.Int64

// gpuLine is one day of one GPU instance on a FOCUS bill from AWS: hours
// of instance time starting at midnight UTC, at price per hour.
type gpuLine struct {
	day      string // YYYY-MM-DD
	resource string
	usage    string // AWS usage type: USE1-BoxUsage:p4d.24xlarge, USE1-SpotUsage:…
	hours    int
	price    string // per instance-hour
	tags     string // JSON object, or ""
	// effective is the per-hour effective cost when it is not price (a
	// savings plan or reservation covered the hours).
	effective string
}

// days repeats l over n days from the first.
func days(first string, n int, l gpuLine) []gpuLine {
	d, err := time.Parse(time.DateOnly, first)
	if err != nil {
		panic(err)
	}
	out := make([]gpuLine, n)
	for i := range n {
		l.day = d.AddDate(0, 0, i).Format(time.DateOnly)
		out[i] = l
	}
	return out
}

// importFOCUS imports GPU lines (and one storage line, which no finder
// should care about) as one FOCUS file, through the real import path.
func importFOCUS(t testing.TB, st *store.Store, org store.Org, lines []gpuLine) {
	t.Helper()
	n := files.Add(1)
	var f strings.Builder
	f.WriteString("BilledCost,EffectiveCost,ChargePeriodStart,ChargePeriodEnd,BillingCurrency,ProviderName,ServiceName," +
		"ServiceCategory,ChargeCategory,SkuMeter,ResourceId,ConsumedQuantity,ConsumedUnit,Tags,BillingAccountId\n")
	for _, l := range lines {
		start, err := time.Parse(time.DateOnly, l.day)
		if err != nil {
			t.Fatal(err)
		}
		end := start.Add(time.Duration(l.hours) * time.Hour)
		cost := decimal.RequireFromString(l.price).Mul(decimal.NewFromInt(int64(l.hours)))
		effective := cost
		if l.effective != "" {
			effective = decimal.RequireFromString(l.effective).Mul(decimal.NewFromInt(int64(l.hours)))
		}
		fmt.Fprintf(&f, "%s,%s,%s,%s,USD,AWS,Amazon Elastic Compute Cloud,Compute,Usage,%s,%s,%d,Hours,%s,acct-%d\n",
			cost, effective, start.Format(time.RFC3339), end.Format(time.RFC3339), l.usage, l.resource, l.hours,
			csvCell(l.tags), n)
	}
	if len(lines) > 0 {
		fmt.Fprintf(&f, "12.50,12.50,%sT00:00:00Z,,USD,AWS,Amazon Simple Storage Service,Storage,Usage,TimedStorage-ByteHrs,bucket-1,100,GB-Mo,,acct-%d\n",
			lines[0].day, n)
	}
	doImport(t, st, org, f.String())
}

func csvCell(s string) string {
	if s == "" {
		return ""
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// importOpenAI imports daily OpenAI usage buckets of one model; the
// importer prices them with the shipped table.
func importOpenAI(t testing.TB, st *store.Store, org store.Org, model, first string, n int, input, output, requests int64) {
	t.Helper()
	d, err := time.Parse(time.DateOnly, first)
	if err != nil {
		t.Fatal(err)
	}
	var f strings.Builder
	f.WriteString("start_time_iso,end_time_iso,project_id,num_model_requests,model,input_tokens,output_tokens,input_cached_tokens\n")
	for i := range n {
		s := d.AddDate(0, 0, i)
		fmt.Fprintf(&f, "%s,%s,proj_1,%d,%s,%d,%d,0\n", s.Format(time.RFC3339), s.AddDate(0, 0, 1).Format(time.RFC3339),
			requests, model, input, output)
	}
	doImport(t, st, org, f.String())
}

func doImport(t testing.TB, st *store.Store, org store.Org, body string) {
	t.Helper()
	im := ingest.NewImporter(st, ingest.PriceTable(pricing.DefaultLLMPrices()), pricing.DefaultCatalog())
	if _, err := im.Import(context.Background(), ingest.ImportRequest{Org: org, FileName: fmt.Sprintf("bill-%d.csv", files.Add(1)), Via: "test"},
		strings.NewReader(body)); err != nil {
		t.Fatalf("import: %v\n%s", err, body)
	}
}

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func newOrg(t *testing.T, st *store.Store, name string) store.Org {
	t.Helper()
	o, _ := storetest.Org(t, st, storetest.OrgOpts{Name: name})
	return o
}

func find(t *testing.T, st *store.Store, org store.Org, opts savings.Options) savings.Report {
	t.Helper()
	opts.Now = now
	rep, err := savings.Find(context.Background(), st, org, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// only returns the report's one finding, failing unless it has exactly one
// and of kind k.
func only(t *testing.T, rep savings.Report, k savings.Kind) savings.Finding {
	t.Helper()
	if len(rep.Findings) != 1 {
		for _, f := range rep.Findings {
			t.Logf("%s: %s (%s)", f.Kind, f.Title, f.Monthly)
		}
		t.Fatalf("want exactly one finding (%s), got %d", k, len(rep.Findings))
	}
	f := rep.Findings[0]
	if f.Kind != k {
		t.Fatalf("finding is %s, want %s: %s", f.Kind, k, f.Title)
	}
	return f
}

func wantMoney(t *testing.T, what string, got decimal.Decimal, want string) {
	t.Helper()
	if !got.Equal(decimal.RequireFromString(want)) {
		t.Errorf("%s = %s, want %s", what, got, want)
	}
}

// g548 is the catalog's g5.48xlarge (8× A10G) on-demand price: no other
// provider in the catalog sells 8× A10G, so no cheaper offer applies.
const (
	g548      = "USE1-BoxUsage:g5.48xlarge"
	g548Price = "16.288"
)

func TestAlwaysOnInstanceWithoutTeam(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	org := newOrg(t, st, "acme")
	// 9 days around the clock, no tags.
	importFOCUS(t, st, org, days("2026-11-01", 9, gpuLine{resource: "i-0abc", usage: g548, hours: 24, price: g548Price}))

	rep := find(t, st, org, savings.DefaultOptions())
	// The window ends on the last day of the bills, 2026-11-09: To is the
	// day after (exclusive), Through the day shown.
	if rep.Through != "2026-11-09" || rep.To.Format(time.DateOnly) != "2026-11-10" || rep.From.Format(time.DateOnly) != "2026-10-11" {
		t.Errorf("window: from %s, through %s, to %s", rep.From, rep.Through, rep.To)
	}
	f := only(t, rep, savings.KindAlwaysOn)
	// 24 × 16.288 = 390.912 a day; × 730/24 a month.
	wantMoney(t, "monthly", f.Monthly, "11890.24")
	if want := "g5.48xlarge i-0abc running 24/7 for 9 days, 390.91 USD/day, no tags at all"; f.Title != want {
		t.Errorf("title = %q, want %q", f.Title, want)
	}
	if len(f.Evidence) != 1 {
		t.Fatalf("evidence: %+v", f.Evidence)
	}
	ev := f.Evidence[0]
	if ev.Resource != "i-0abc" || ev.From != "2026-11-01" || ev.To != "2026-11-09" || ev.Days != 9 || ev.Charges != 9 {
		t.Errorf("evidence = %+v", ev)
	}
	wantMoney(t, "evidence amount", ev.Amount, "3518.21")
	wantMoney(t, "instance-hours", ev.Hours, "216")
	wantMoney(t, "GPU-hours", ev.GPUHours, "1728")
}

func TestAlwaysOnNotFlaggedWhenOwnedOrStopped(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	org := newOrg(t, st, "acme")
	var lines []gpuLine
	// Owned: the team tag claims it.
	lines = append(lines, days("2026-11-01", 9, gpuLine{resource: "i-owned", usage: g548, hours: 24,
		price: g548Price, tags: `{"team": "research"}`})...)
	// Stopped: ran 24/7 for 7 days, then nothing for the last two.
	lines = append(lines, days("2026-11-01", 7, gpuLine{resource: "i-stopped", usage: g548, hours: 24,
		price: g548Price})...)
	importFOCUS(t, st, org, lines)
	for _, f := range find(t, st, org, savings.DefaultOptions()).Findings {
		if f.Kind == savings.KindAlwaysOn {
			t.Errorf("unexpected: %s", f.Title)
		}
	}
}

func TestSpotCandidate(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	org := newOrg(t, st, "acme")
	// A batch job: 8 hours a day for 10 days on demand, owned.
	importFOCUS(t, st, org, days("2026-11-01", 10, gpuLine{resource: "i-batch", usage: "USE2-BoxUsage:g5.12xlarge", hours: 8,
		price: "5.672", tags: `{"team": "ml"}`}))

	f := only(t, find(t, st, org, savings.DefaultOptions()), savings.KindSpot)
	// 80 h × 5.672 = 453.76 paid; on spot 80 h × 2.0199 × the advisor's
	// interruption overhead; over the 10 days of bills, × 730/240.
	ov := decimal.NewFromFloat(pricing.DefaultAssumptions().SpotOverhead()).Round(4)
	spotCost := decimal.NewFromInt(80).Mul(decimal.RequireFromString("2.0199")).Mul(ov)
	want := decimal.RequireFromString("453.76").Sub(spotCost).Mul(decimal.NewFromInt(730)).Div(decimal.NewFromInt(240)).Round(2)
	wantMoney(t, "monthly", f.Monthly, want.String())
	if f.Monthly.LessThan(decimal.NewFromInt(800)) || f.Monthly.GreaterThan(decimal.NewFromInt(1000)) {
		t.Errorf("monthly %s is not about (453.76 − 80 × 2.02) × 3.26", f.Monthly)
	}
	if len(f.Evidence) != 1 || f.Evidence[0].Resource != "i-batch" || !f.Evidence[0].Hours.Equal(decimal.NewFromInt(80)) {
		t.Errorf("evidence = %+v", f.Evidence)
	}
	if !strings.Contains(f.Title, "2.02 USD/h in the catalog against 5.67 USD/h paid") {
		t.Errorf("title = %q", f.Title)
	}
}

// cheaperOf returns the report's cheaper-GPU finding, if any.
func cheaperOf(rep savings.Report) (savings.Finding, bool) {
	for _, f := range rep.Findings {
		if f.Kind == savings.KindCheaperGPU {
			return f, true
		}
	}
	return savings.Finding{}, false
}

func TestCheaperGPU(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	org := newOrg(t, st, "acme")
	// A serving node, owned, around the clock for the 30 days of the
	// window, at the old us-east-1 p4d price.
	importFOCUS(t, st, org, days("2026-11-01", 30, gpuLine{resource: "i-serve", usage: "USE1-BoxUsage:p4d.24xlarge", hours: 24,
		price: "32.7726", tags: `{"team": "serving"}`}))

	f, ok := cheaperOf(find(t, st, org, savings.DefaultOptions()))
	if !ok {
		t.Fatal("no cheaper-GPU finding on 30 steady days")
	}
	// 192 GPU-hours a day at 32.7726/8 = 4.096575 against Lambda's
	// gpu_8x_a100 at 15.92/8 = 1.99: 404.4624 a day, 12,133.872 over the
	// 30 days, × 730/720.
	wantMoney(t, "monthly", f.Monthly, "12302.40")
	if !strings.Contains(f.Title, "lambda gpu_8x_a100") || !strings.Contains(f.Title, "1.99 USD/GPU-hour") {
		t.Errorf("title = %q", f.Title)
	}
	if w := f.Window; w == nil || *w != (savings.Window{From: "2026-11-01", To: "2026-11-30", Days: 30, UsageDays: 30}) {
		t.Errorf("evidence window = %+v", f.Window)
	}
	if !strings.Contains(f.Detail, "Used on 30 of the 30 days of GPU bills from 2026-11-01 to 2026-11-30") {
		t.Errorf("detail = %q", f.Detail)
	}
}

// TestCheaperGPUIgnoresBurst: a one-day burst on a dear instance type is no
// saving per month, whether it is the whole bill or one day of a month of
// other GPU usage; a week of it is (docs/savings.md, "Cheaper GPU").
func TestCheaperGPUIgnoresBurst(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	burst := gpuLine{resource: "i-burst", usage: "USE1-BoxUsage:p4d.24xlarge", hours: 24, price: "32.7726", tags: `{"team": "research"}`}

	alone := newOrg(t, st, "alone")
	importFOCUS(t, st, alone, days("2026-11-20", 1, burst))
	if f, ok := cheaperOf(find(t, st, alone, savings.DefaultOptions())); ok {
		t.Errorf("a 1-day bill's burst is priced per month: %s (%s)", f.Title, f.Monthly)
	}

	// A month of steady g5.48xlarge (no cheaper offer in the catalog) and
	// the same one-day p4d burst.
	month := newOrg(t, st, "month")
	importFOCUS(t, st, month, append(days("2026-11-01", 30, gpuLine{resource: "i-steady", usage: g548, hours: 24,
		price: g548Price, tags: `{"team": "serving"}`}), days("2026-11-20", 1, burst)...))
	if f, ok := cheaperOf(find(t, st, month, savings.DefaultOptions())); ok {
		t.Errorf("a 1-day burst in a month of bills is priced per month: %s (%s)", f.Title, f.Monthly)
	}

	// Seven days of it in that month is sustained: the saving of those 7
	// days, 7 × 404.4624, scaled from the 30 days of bills (× 730/720).
	week := newOrg(t, st, "week")
	importFOCUS(t, st, week, append(days("2026-11-01", 30, gpuLine{resource: "i-steady", usage: g548, hours: 24,
		price: g548Price, tags: `{"team": "serving"}`}), days("2026-11-10", savings.CheaperMinDays, burst)...))
	f, ok := cheaperOf(find(t, st, week, savings.DefaultOptions()))
	if !ok {
		t.Fatal("7 days of usage found nothing")
	}
	wantMoney(t, "monthly", f.Monthly, "2870.56")
	if w := f.Window; w == nil || w.Days != 30 || w.UsageDays != 7 {
		t.Errorf("evidence window = %+v", f.Window)
	}
}

func TestModelRouting(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	org := newOrg(t, st, "acme")
	// gpt-4.1: 100M input and 20M output tokens a day for 10 days, priced
	// by the table at 2 USD / 8 USD: 360 USD a day.
	importOpenAI(t, st, org, "gpt-4.1", "2026-11-01", 10, 100_000_000, 20_000_000, 50_000)

	rep := find(t, st, org, savings.DefaultOptions())
	f := only(t, rep, savings.KindRouting)
	// 40% of 3,600 USD is 1,440 USD; on gpt-4.1-mini (0.40 USD / 1.60 USD) the same
	// tokens cost 40% of 720 USD = 288 USD: 1,152 USD over 10 days, × 73/24.
	wantMoney(t, "monthly", f.Monthly, "3504.00")
	if want := "Moving 40% of gpt-4.1 requests to gpt-4.1-mini saves 3,504.00 USD/month"; f.Title != want {
		t.Errorf("title = %q, want %q", f.Title, want)
	}
	ev := f.Evidence[0]
	if ev.Model != "gpt-4.1" || ev.Requests != 500_000 || ev.Tokens != 1_200_000_000 {
		t.Errorf("evidence = %+v", ev)
	}
	wantMoney(t, "evidence billed", ev.Amount, "3600")

	// The share moves the figure: a quarter of the requests.
	opts := savings.DefaultOptions()
	opts.RoutingShare = decimal.RequireFromString("0.25")
	f = only(t, find(t, st, org, opts), savings.KindRouting)
	wantMoney(t, "monthly at 25%", f.Monthly, "2190.00")
	opts.RoutingShare = decimal.Zero
	if rep := find(t, st, org, opts); len(rep.Findings) != 0 {
		t.Errorf("share 0 still finds %d", len(rep.Findings))
	}
}

func TestCommitment(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	org := newOrg(t, st, "acme")
	// An owned g5.48xlarge at the catalog's price every hour for 20 days.
	importFOCUS(t, st, org, days("2026-11-01", 20, gpuLine{resource: "i-steady", usage: g548, hours: 24,
		price: g548Price, tags: `{"team": "serving"}`}))

	// Without a discount the catalog knows, it is listed but not priced.
	f := only(t, find(t, st, org, savings.DefaultOptions()), savings.KindCommitment)
	if f.Priced || !f.Monthly.IsZero() || !strings.Contains(f.Detail, "no 1-year") {
		t.Errorf("unpriced commitment = %+v", f)
	}
	wantMoney(t, "steady spend", f.Spend, "11890.24")
	rep := find(t, st, org, savings.DefaultOptions())
	if len(rep.Totals) != 0 {
		t.Errorf("an unpriced finding counts in the totals: %+v", rep.Totals)
	}

	opts := savings.DefaultOptions()
	opts.CommitDiscount = decimal.RequireFromString("0.3")
	f = only(t, find(t, st, org, opts), savings.KindCommitment)
	// 1 instance × 730 h × 16.288 = 11,890.24 a month; 30% of it.
	wantMoney(t, "monthly", f.Monthly, "3567.07")
	if want := "1× g5.48xlarge ran on demand every hour of 20 days: 11,890.24 USD/month of steady spend"; f.Title != want {
		t.Errorf("title = %q, want %q", f.Title, want)
	}
}

// TestCleanBill: GPU time on spot, owned and bursty; an LLM model with no
// cheaper sibling; storage. Nothing to find.
func TestCleanBill(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	org := newOrg(t, st, "acme")
	importFOCUS(t, st, org, days("2026-11-01", 20, gpuLine{resource: "i-spot", usage: "USE2-SpotUsage:p4d.24xlarge", hours: 10,
		price: "6.0374", tags: `{"team": "research"}`}))
	importOpenAI(t, st, org, "gpt-4o-mini", "2026-11-01", 20, 10_000_000, 1_000_000, 1_000)
	opts := savings.DefaultOptions()
	opts.CommitDiscount = decimal.RequireFromString("0.3")
	rep := find(t, st, org, opts)
	for _, f := range rep.Findings {
		t.Errorf("clean bill finds %s: %s", f.Kind, f.Title)
	}
	if len(rep.Totals) != 0 {
		t.Errorf("totals = %+v", rep.Totals)
	}
}

func TestEmptyOrg(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	org := newOrg(t, st, "acme")
	rep := find(t, st, org, savings.DefaultOptions())
	if len(rep.Findings) != 0 || len(rep.Totals) != 0 {
		t.Errorf("empty org: %+v", rep)
	}
}

// TestOrgIsolation: org B, fenced to itself, never sees org A's findings,
// and A's are unchanged by B's bills.
func TestOrgIsolation(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	a := newOrg(t, st, "org-a")
	b := newOrg(t, st, "org-b")
	importFOCUS(t, st, a, days("2026-11-01", 9, gpuLine{resource: "i-0abc", usage: g548, hours: 24, price: g548Price}))
	importOpenAI(t, st, b, "gpt-4o-mini", "2026-11-01", 3, 1000, 1000, 1)

	if rep := find(t, st, b, savings.DefaultOptions()); len(rep.Findings) != 0 {
		t.Errorf("org B sees %d findings: %+v", len(rep.Findings), rep.Findings)
	}
	err := st.Fenced(context.Background(), b.ID, 0, func(fenced *store.Store) error {
		rep, err := savings.Find(context.Background(), fenced, b, savings.Options{Now: now, RoutingShare: decimal.RequireFromString("0.4")})
		if err != nil {
			return err
		}
		if len(rep.Findings) != 0 {
			t.Errorf("fenced org B sees %d findings", len(rep.Findings))
		}
		// Asking about A on B's fenced connection sees no rows at all.
		rep, err = savings.Find(context.Background(), fenced, a, savings.Options{Now: now})
		if err != nil {
			return err
		}
		if len(rep.Findings) != 0 {
			t.Errorf("B's connection sees A's findings")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	only(t, find(t, st, a, savings.DefaultOptions()), savings.KindAlwaysOn)
}

func TestTotalCountsOverlapOnce(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	org := newOrg(t, st, "acme")
	// Two findings on the same p4d spend (unowned and always on; dearer
	// than OCI), and a routing finding on its own.
	importFOCUS(t, st, org, days("2026-11-01", 9, gpuLine{resource: "i-0abc", usage: "USE1-BoxUsage:p4d.24xlarge", hours: 24, price: "32.7726"}))
	importOpenAI(t, st, org, "gpt-4.1", "2026-11-01", 9, 100_000_000, 20_000_000, 50_000)
	rep := find(t, st, org, savings.DefaultOptions())
	byKind := map[savings.Kind]decimal.Decimal{}
	for _, f := range rep.Findings {
		byKind[f.Kind] = f.Monthly
	}
	if len(byKind) != 3 {
		t.Fatalf("findings: %+v", rep.Findings)
	}
	want := byKind[savings.KindAlwaysOn].Add(byKind[savings.KindRouting])
	if byKind[savings.KindCheaperGPU].GreaterThan(byKind[savings.KindAlwaysOn]) {
		t.Fatalf("cheaper %s > always-on %s", byKind[savings.KindCheaperGPU], byKind[savings.KindAlwaysOn])
	}
	wantMoney(t, "total", rep.Total("USD"), want.String())
}

func TestParsePercent(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"40": "0.4", "40%": "0.4", " 12.5 ": "0.125", "0": "0", "100": "1"} {
		got, err := savings.ParsePercent("share", in)
		if err != nil || !got.Equal(decimal.RequireFromString(want)) {
			t.Errorf("ParsePercent(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{"", "abc", "-5", "101", "1e400", strings.Repeat("9", 200)} {
		if _, err := savings.ParsePercent("share", in); err == nil || !strings.Contains(err.Error(), "share") {
			t.Errorf("ParsePercent(%q) = %v, want an error naming share", in, err)
		}
	}
}

// TestEvidenceIsCapped: a finding over many resources lists the costliest
// MaxEvidence and counts the rest.
func TestEvidenceIsCapped(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	org := newOrg(t, st, "acme")
	var lines []gpuLine
	for i := range savings.MaxEvidence + 10 {
		lines = append(lines, days("2026-11-01", 3, gpuLine{resource: fmt.Sprintf("i-batch-%03d", i), usage: "USE2-BoxUsage:g5.12xlarge",
			hours: 1 + i%8, price: "5.672", tags: `{"team": "ml"}`})...)
	}
	importFOCUS(t, st, org, lines)
	f := only(t, find(t, st, org, savings.DefaultOptions()), savings.KindSpot)
	if len(f.Evidence) != savings.MaxEvidence || f.MoreEvidence != 10 {
		t.Fatalf("evidence %d, more %d", len(f.Evidence), f.MoreEvidence)
	}
	for i := 1; i < len(f.Evidence); i++ {
		if f.Evidence[i].Amount.GreaterThan(f.Evidence[i-1].Amount) {
			t.Fatalf("evidence not costliest first at %d", i)
		}
	}
}

// TestShortBillIsNotScaledToAMonth: the benchmark CUR of `curgen -rows
// 3000` holds two hours of one day (p4d, p5 and g5 instances, each for one
// hour). Scaled to a month, that hour became hundreds of thousands of
// dollars of spot savings; a figure per month needs MonthlyMinDays days
// of bills (docs/savings.md), so the findings carry only what those days
// saved, unpriced, and the total is empty.
func TestShortBillIsNotScaledToAMonth(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	org := newOrg(t, st, "acme")
	var cur strings.Builder
	if err := curgen.Generate(&cur, 3000, 1); err != nil {
		t.Fatal(err)
	}
	doImport(t, st, org, cur.String())
	// And one day of LLM usage: the routing finder scales by the same window.
	importOpenAI(t, st, org, "gpt-4.1", "2026-01-01", 1, 100_000_000, 20_000_000, 50_000)

	rep := find(t, st, org, savings.DefaultOptions())
	if !rep.CoveredDays.Equal(decimal.NewFromInt(1)) {
		t.Fatalf("covered days = %s, want 1", rep.CoveredDays)
	}
	if len(rep.Totals) != 0 {
		t.Errorf("totals = %+v from one day of bills, want none", rep.Totals)
	}
	kinds := map[savings.Kind]int{}
	for _, f := range rep.Findings {
		kinds[f.Kind]++
		if f.Priced || !f.Monthly.IsZero() || !f.Spend.IsZero() || strings.Contains(f.Title, "/month") {
			t.Errorf("%s finding priced per month from one day: %s (%s)", f.Kind, f.Title, f.Monthly)
		}
		if f.Observed == nil || f.Observed.Days != 1 || f.Observed.Savings.LessThan(savings.MinMonthly) {
			t.Errorf("%s finding without its observed day: %+v", f.Kind, f.Observed)
		}
	}
	if kinds[savings.KindSpot] == 0 || kinds[savings.KindRouting] != 1 {
		t.Fatalf("findings by kind = %v, want spot candidates and one routing finding over the observed day", kinds)
	}
	for _, f := range rep.Findings {
		if f.Kind != savings.KindRouting {
			continue
		}
		// 40% of 360 USD billed, less the same tokens on gpt-4.1-mini (40%
		// of 72 USD): 115.20 USD over the one day, not × 730/24.
		wantMoney(t, "observed routing", f.Observed.Savings, "115.20")
		if want := "Moving 40% of gpt-4.1 requests to gpt-4.1-mini saves 115.20 USD over 1 day of bills"; f.Title != want {
			t.Errorf("title = %q, want %q", f.Title, want)
		}
		// Model evidence has no charge rows to count: no misleading 0.
		b, err := json.Marshal(f.Evidence[0])
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), `"charges"`) || !strings.Contains(string(b), `"tokens":120000000`) {
			t.Errorf("model evidence JSON = %s", b)
		}
	}
}

// TestMonthlyNeedsEnoughDays: the same spot job is priced per month from 7
// days of bills and only for the observed days from 6.
func TestMonthlyNeedsEnoughDays(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	short, long := newOrg(t, st, "short"), newOrg(t, st, "long")
	job := gpuLine{resource: "i-batch", usage: "USE2-BoxUsage:g5.12xlarge", hours: 8, price: "5.672", tags: `{"team": "ml"}`}
	importFOCUS(t, st, short, days("2026-11-01", savings.MonthlyMinDays-1, job))
	importFOCUS(t, st, long, days("2026-11-01", savings.MonthlyMinDays, job))
	if f := only(t, find(t, st, short, savings.DefaultOptions()), savings.KindSpot); f.Priced || f.Observed == nil ||
		f.Observed.Days != savings.MonthlyMinDays-1 {
		t.Errorf("6 days: priced %v, observed %+v", f.Priced, f.Observed)
	}
	if f := only(t, find(t, st, long, savings.DefaultOptions()), savings.KindSpot); !f.Priced || f.Observed != nil || !f.Monthly.IsPositive() {
		t.Errorf("7 days: priced %v %s, observed %+v", f.Priced, f.Monthly, f.Observed)
	}
}

func TestDays(t *testing.T) {
	for n, want := range map[int]string{0: "0 days", 1: "1 day", 2: "2 days", 30: "30 days"} {
		if got := savings.Days(n); got != want {
			t.Errorf("Days(%d) = %q, want %q", n, got, want)
		}
	}
}
