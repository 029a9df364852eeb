package digest_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/access"
	"github.com/burnrate/burnrate/budget"
	"github.com/burnrate/burnrate/digest"
	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/mail"
	"github.com/burnrate/burnrate/notify"
	"github.com/burnrate/burnrate/pricing"
	"github.com/burnrate/burnrate/spend"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

var files atomic.Int64

// charge is one line of a FOCUS export: the day (in the org's zone, at
// noon), a cost in USD, and the provider.
type charge struct {
	day, cost, provider string
}

// importCharges imports charges through the real import path, as one FOCUS
// file of a billing account of its own.
func importCharges(t testing.TB, st *store.Store, org store.Org, charges ...charge) {
	t.Helper()
	n := files.Add(1)
	var f strings.Builder
	f.WriteString("BilledCost,ChargePeriodStart,BillingCurrency,ProviderName,ServiceName,BillingAccountId\n")
	loc := org.Location()
	for _, c := range charges {
		d, err := time.ParseInLocation(time.DateOnly, c.day, loc)
		if err != nil {
			t.Fatal(err)
		}
		provider := strings.ReplaceAll(c.provider, `"`, `""`)
		fmt.Fprintf(&f, "%s,%s,USD,\"%s\",Compute,acct-%d\n", c.cost, d.Add(12*time.Hour).UTC().Format(time.RFC3339), provider, n)
	}
	im := ingest.NewImporter(st, ingest.PriceTable(pricing.DefaultLLMPrices()), pricing.DefaultCatalog())
	if _, err := im.Import(context.Background(), ingest.ImportRequest{Org: org, FileName: fmt.Sprintf("f%d.csv", n), Via: "test"},
		strings.NewReader(f.String())); err != nil {
		t.Fatalf("import: %v", err)
	}
}

func newBudget(t testing.TB, st *store.Store, org store.Org, name, period, amount string) store.Budget {
	t.Helper()
	b, err := st.CreateBudget(context.Background(), org.ID, 0, store.BudgetInput{Name: name, Amount: decimal.RequireFromString(amount),
		Currency: "USD", Period: period, Thresholds: slices.Clone(budget.DefaultThresholds)})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// morningAfter is 07:00 UTC on the day after day: when the daily job
// sends day's digest, which then calls day "yesterday".
func morningAfter(day time.Time) time.Time { return day.AddDate(0, 0, 1).Add(7 * time.Hour) }

func date(s string) time.Time {
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return d
}

// fixture is an org with two weeks of spend up to 2026-03-10: 80 a day on
// AWS, and on the 10th 150 more on a provider with a hostile name; a daily
// budget of 100 (over on the 10th, not on the 9th) and a monthly one of
// 10,000 (on track).
type fixture struct {
	st            *store.Store
	org           store.Org
	owner         store.User
	daily, month  store.Budget
	day, dayUnder time.Time
}

const hostile = `<img src=x onerror=alert(1)>`

func setup(t testing.TB) fixture {
	t.Helper()
	st := storetest.New(t)
	org, owner := storetest.Org(t, st, storetest.OrgOpts{Name: "Acme ML"})
	var cs []charge
	for d := date("2026-02-25"); !d.After(date("2026-03-10")); d = d.AddDate(0, 0, 1) {
		cs = append(cs, charge{d.Format(time.DateOnly), "80.00", "AWS"})
	}
	cs = append(cs, charge{"2026-03-10", "150.00", hostile})
	importCharges(t, st, org, cs...)
	return fixture{st: st, org: org, owner: owner,
		daily: newBudget(t, st, org, "Daily cap", "daily", "100"),
		month: newBudget(t, st, org, "Whole month", "monthly", "10000"),
		day:   date("2026-03-10"), dayUnder: date("2026-03-09")}
}

// TestBuildAgreesWithSpendAndBudgets: the digest's numbers are spend.Day's
// and the budgets' status for the same day, and a day over a daily budget
// is Over and says so by name.
func TestBuildAgreesWithSpendAndBudgets(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	d, err := digest.Build(ctx, f.st, f.org, f.day, morningAfter(f.day))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := spend.Day(ctx, f.st, f.org.ID, f.day, store.DimProvider, budget.EndOf(f.day))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Currencies) != len(rep.Currencies) || len(d.Currencies) != 1 {
		t.Fatalf("%d currencies, spend.Day has %d", len(d.Currencies), len(rep.Currencies))
	}
	for i, c := range d.Currencies {
		r := rep.Currencies[i]
		if c.Currency != r.Currency || !c.Spent.Equal(r.Spent) || !c.DayBefore.Equal(r.DayBefore) ||
			!c.MonthToDate.Equal(r.Month.MonthToDate) || c.Forecast == nil || !c.Forecast.Equal(r.Month.Forecast) || !c.GPUHours.Equal(r.GPUHours) ||
			len(c.Providers) != len(r.Groups) || len(c.Movers) != len(r.Movers) || len(c.Drivers) != len(r.Drivers) {
			t.Errorf("digest %+v\nspend.Day %+v", c, r)
		}
	}
	if c := d.Currencies[0]; !c.Spent.Equal(decimal.RequireFromString("230")) || !c.DayBefore.Equal(decimal.RequireFromString("80")) ||
		c.Providers[0].Name != hostile || !c.MonthToDate.Equal(decimal.RequireFromString("950")) {
		t.Errorf("spent %s (before %s, month %s), providers %+v; want 230 after 80, 950 in March, %s first",
			c.Spent, c.DayBefore, c.MonthToDate, c.Providers, hostile)
	}

	statuses, err := spend.BudgetStatuses(ctx, f.st, f.org, []store.Budget{f.daily, f.month},
		func(store.Budget) budget.Basis { return budget.EndOf(f.day) })
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Budgets) != 2 {
		t.Fatalf("%d budgets, want 2", len(d.Budgets))
	}
	for i, s := range statuses {
		b := d.Budgets[i]
		if b.ID != s.Budget.ID || !b.Spent.Equal(s.Spent) || b.Forecast == nil || !b.Forecast.Equal(s.Forecast) || b.Percent != s.Percent ||
			!slices.Equal(b.Crossed, s.Crossed) {
			t.Errorf("budget %+v, status %+v", b, s)
		}
	}
	// One forecast: the month's in the digest is the all-spend monthly
	// budget's, to the digit (they were two numbers once).
	if m := d.Budgets[1]; !m.Forecast.Equal(*d.Currencies[0].Forecast) {
		t.Errorf("the month's forecast is %s, the whole-month budget's %s", d.Currencies[0].Forecast, m.Forecast)
	}
	if !d.Budgets[0].Over || d.Budgets[1].Over || d.Budgets[1].ForecastOver || !d.Over() {
		t.Errorf("budgets %+v: want the daily one over, the monthly one on track, the digest over", d.Budgets)
	}
	if !slices.Equal(d.Budgets[0].Crossed, []int{50, 80, 100}) {
		t.Errorf("daily budget crossed %v, want 50, 80 and 100", d.Budgets[0].Crossed)
	}
	if len(d.Chart.Days) != digest.ChartDays || !d.Chart.Amounts[digest.ChartDays-1].Equal(decimal.RequireFromString("230")) ||
		!d.Chart.Line.Equal(decimal.NewFromInt(100)) {
		t.Errorf("chart %d days, last %s, line %s; want 14 days ending at 230 against 100",
			len(d.Chart.Days), d.Chart.Amounts[len(d.Chart.Amounts)-1], d.Chart.Line)
	}
	if d.Hint != nil {
		t.Errorf("hint %+v without any LLM spend", d.Hint)
	}

	text := digest.Text(d, "https://burnrate.example.com")
	for _, want := range []string{"OVER  “Daily cap” (daily): 230.00 USD of 100.00 USD (230%)", "Spent 230.00 USD", "+188% on the day before (80.00 USD)",
		"https://burnrate.example.com/dashboard?range=custom&from=2026-03-10&to=2026-03-10"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if s := digest.Subject(d); s != "Acme ML: 230.00 USD yesterday (Mar 10) — 1 budget over" {
		t.Errorf("subject %q", s)
	}
	// Read a week later (a preview of a past day), the day is named.
	later, err := digest.Build(ctx, f.st, f.org, f.day, morningAfter(f.day).AddDate(0, 0, 7))
	if err != nil {
		t.Fatal(err)
	}
	if s := digest.Subject(later); s != "Acme ML: 230.00 USD on Mar 10 — 1 budget over" {
		t.Errorf("subject a week later %q", s)
	}

	under, err := digest.Build(ctx, f.st, f.org, f.dayUnder, morningAfter(f.dayUnder))
	if err != nil {
		t.Fatal(err)
	}
	if under.Over() {
		t.Errorf("the 9th is over: %+v", under.Budgets)
	}
}

// TestRenderIsSafeMail: the HTML has no script, escapes a hostile provider
// name, shows the chart by cid, and the chart is a PNG of a sane size; the
// unsubscribe headers are RFC 8058's.
func TestRenderIsSafeMail(t *testing.T) {
	t.Parallel()
	f := setup(t)
	d, err := digest.Build(context.Background(), f.st, f.org, f.day, morningAfter(f.day))
	if err != nil {
		t.Fatal(err)
	}
	unsub := digest.UnsubscribeURL("https://burnrate.example.com", digest.UnsubscribeToken([]byte("k"), f.org.ID, f.owner.ID))
	nt, err := digest.Render(d, "https://burnrate.example.com", unsub)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.ToLower(nt.HTML), "<script") || strings.Contains(nt.HTML, "<img src=x") {
		t.Errorf("HTML has a script or the hostile tag:\n%s", nt.HTML)
	}
	if !strings.Contains(nt.HTML, "&lt;img src=x onerror=alert(1)&gt;") || !strings.Contains(nt.HTML, `src="cid:chart"`) {
		t.Errorf("HTML lacks the escaped name or the cid chart:\n%s", nt.HTML)
	}
	if nt.Kind != notify.KindDigest || nt.Key != "digest:2026-03-10" || nt.OrgID != f.org.ID {
		t.Errorf("kind %s, key %s, org %d", nt.Kind, nt.Key, nt.OrgID)
	}
	if nt.Headers["List-Unsubscribe"] != "<"+unsub+">" || nt.Headers["List-Unsubscribe-Post"] != "List-Unsubscribe=One-Click" {
		t.Errorf("headers %v", nt.Headers)
	}
	if len(nt.Inline) != 1 || nt.Inline[0].ContentID != "chart" || nt.Inline[0].ContentType != "image/png" {
		t.Fatalf("inline parts %+v", nt.Inline)
	}
	if ct := http.DetectContentType(nt.Inline[0].Data); ct != "image/png" {
		t.Errorf("chart sniffs as %s", ct)
	}
	img, err := png.Decode(bytes.NewReader(nt.Inline[0].Data))
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b != image.Rect(0, 0, 720, 300) {
		t.Errorf("chart is %v, want 720×300", b)
	}
	if len(nt.Inline[0].Data) > 200_000 {
		t.Errorf("chart is %d bytes", len(nt.Inline[0].Data))
	}
}

// TestBuildListsTheOrgCurrencyFirst: the digest lists currencies as the
// dashboard does, the org's own first, though another sorts before it.
func TestBuildListsTheOrgCurrencyFirst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	org, _ := storetest.Org(t, st, storetest.OrgOpts{Name: "Two currencies"})
	if org.Currency != "USD" {
		t.Fatalf("a new org's currency is %s", org.Currency)
	}
	file := "BilledCost,ChargePeriodStart,BillingCurrency,ProviderName,ServiceName,BillingAccountId\n" +
		"10,2026-03-10T12:00:00Z,USD,AWS,Compute,acct\n20,2026-03-10T12:00:00Z,AUD,AWS,Compute,acct\n"
	im := ingest.NewImporter(st, ingest.PriceTable(pricing.DefaultLLMPrices()), pricing.DefaultCatalog())
	if _, err := im.Import(ctx, ingest.ImportRequest{Org: org, FileName: "two.csv", Via: "test"}, strings.NewReader(file)); err != nil {
		t.Fatal(err)
	}
	d, err := digest.Build(ctx, st, org, time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC), morningAfter(time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range d.Currencies {
		got = append(got, c.Currency)
	}
	if !slices.Equal(got, []string{"USD", "AUD"}) {
		t.Errorf("currencies %v, want USD (the org's) then AUD", got)
	}
}

// TestRenderSaysWhenABudgetRanOut checks the budget lines' words: a
// monthly budget spent in full ran out on a day past; one on its way
// runs out on a day to come.
func TestRenderSaysWhenABudgetRanOut(t *testing.T) {
	t.Parallel()
	f := setup(t)
	d, err := digest.Build(context.Background(), f.st, f.org, f.day, morningAfter(f.day))
	if err != nil {
		t.Fatal(err)
	}
	amount := decimal.NewFromInt(1000)
	d.Budgets = []digest.Budget{
		{Name: "Spent", Period: "monthly", Currency: "USD", Amount: amount, Spent: decimal.NewFromInt(1200), Percent: 120,
			Forecast: ptr(decimal.NewFromInt(2500)), RunsOut: "2026-03-07", Over: true},
		{Name: "On its way", Period: "monthly", Currency: "USD", Amount: amount, Spent: decimal.NewFromInt(600), Percent: 60,
			Forecast: ptr(decimal.NewFromInt(1500)), RunsOut: "2026-03-20", ForecastOver: true},
	}
	nt, err := digest.Render(d, "https://burnrate.example.com", "https://burnrate.example.com/u")
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{nt.Text, nt.HTML} {
		if !strings.Contains(body, "ran out on 2026-03-07") || strings.Contains(body, "runs out on 2026-03-07") ||
			!strings.Contains(body, "runs out on 2026-03-20") {
			t.Errorf("budget lines:\n%s", body)
		}
	}
}

func TestUnsubscribeToken(t *testing.T) {
	t.Parallel()
	key := []byte("0123456789abcdef0123456789abcdef")
	tok := digest.UnsubscribeToken(key, 12, 34)
	if o, u, ok := digest.VerifyUnsubscribe(key, tok); !ok || o != 12 || u != 34 {
		t.Fatalf("verify %q = %d, %d, %v", tok, o, u, ok)
	}
	for _, bad := range []string{"", "12.34", "12.35" + tok[5:], "13" + tok[2:], tok + "x", tok[:len(tok)-1]} {
		if _, _, ok := digest.VerifyUnsubscribe(key, bad); ok {
			t.Errorf("%q verifies", bad)
		}
	}
	if _, _, ok := digest.VerifyUnsubscribe([]byte("another key of thirty-two bytes!"), tok); ok {
		t.Error("a token verifies under another key")
	}
}

// TestYesterday: just after midnight UTC, and on daylight-saving changes,
// each zone's yesterday is the day before its own today.
func TestYesterday(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		now, zone, want string
	}{
		{"2026-11-30T00:05:00Z", "Asia/Tokyo", "2026-11-29"},          // 09:05 on the 30th there
		{"2026-11-30T00:05:00Z", "America/Los_Angeles", "2026-11-28"}, // 16:05 on the 29th there
		{"2026-11-30T00:05:00Z", "Asia/Kolkata", "2026-11-29"},        // 05:35 on the 30th there
		{"2026-11-30T00:05:00Z", "UTC", "2026-11-29"},
		// Los Angeles springs forward at 02:00 on 8 March 2026 (10:00Z):
		// at 08:00 local (15:00Z) yesterday is the 7th; just before local
		// midnight of the 8th (06:59Z on the 9th) it still is.
		{"2026-03-08T15:00:00Z", "America/Los_Angeles", "2026-03-07"},
		{"2026-03-09T06:59:00Z", "America/Los_Angeles", "2026-03-07"},
		{"2026-03-09T07:00:00Z", "America/Los_Angeles", "2026-03-08"},
		// It falls back on 1 November 2026 (a 25-hour day): midnight of the
		// 2nd is 08:00Z.
		{"2026-11-02T07:59:00Z", "America/Los_Angeles", "2026-10-31"},
		{"2026-11-02T08:00:00Z", "America/Los_Angeles", "2026-11-01"},
	} {
		loc, err := time.LoadLocation(tc.zone)
		if err != nil {
			t.Fatal(err)
		}
		now, _ := time.Parse(time.RFC3339, tc.now)
		if got := digest.Yesterday(now, loc).Format(time.DateOnly); got != tc.want {
			t.Errorf("Yesterday(%s in %s) = %s, want %s", tc.now, tc.zone, got, tc.want)
		}
	}
}

// outbox is a mail.Sender that keeps what it is given.
type outbox struct {
	mu   sync.Mutex
	sent []mail.Message
}

func (o *outbox) Send(_ context.Context, m mail.Message) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.sent = append(o.sent, m)
	return nil
}

// TestSend: a day under budget sends nothing when only "over" days are
// sent, and goes out when every day is; a day over goes out once however
// often Send runs, each recipient's email with a working unsubscribe link;
// an unsubscribed member gets none.
func TestSend(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	admin := storetest.Member(t, f.st, f.org, access.Admin)
	storetest.Member(t, f.st, f.org, access.Member) // not a recipient by default
	var box outbox
	n := notify.New(f.st, &box, notify.Config{BaseURL: "https://burnrate.example.com"})

	out, err := digest.Send(ctx, f.st, n, f.org, f.dayUnder, morningAfter(f.dayUnder), digest.Plan{When: store.DigestWhenOver})
	if err != nil || out.Sent || len(box.sent) != 0 {
		t.Fatalf("under budget, over mode: sent %v (%s), %d emails, %v", out.Sent, out.Reason, len(box.sent), err)
	}
	out, err = digest.Send(ctx, f.st, n, f.org, f.dayUnder, morningAfter(f.dayUnder), digest.Plan{When: store.DigestWhenAlways})
	if err != nil || !out.Sent || len(box.sent) != 2 {
		t.Fatalf("under budget, always: sent %v (%s), %d emails, %v", out.Sent, out.Reason, len(box.sent), err)
	}

	for range 2 {
		if _, err := digest.Send(ctx, f.st, n, f.org, f.day, morningAfter(f.day), digest.Plan{When: store.DigestWhenOver}); err != nil {
			t.Fatal(err)
		}
	}
	over := box.sent[2:]
	if len(over) != 2 {
		t.Fatalf("%d emails for the day over after two sends, want one each for the owner and the admin", len(over))
	}
	key, err := digest.UnsubscribeKey(ctx, f.st)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, m := range over {
		got[m.To[0]] = true
		lu := m.Headers["List-Unsubscribe"]
		_, tok, ok := strings.Cut(strings.Trim(lu, "<>"), "token=")
		if !ok || m.Headers["List-Unsubscribe-Post"] != "List-Unsubscribe=One-Click" {
			t.Fatalf("headers %v", m.Headers)
		}
		tok = strings.ReplaceAll(tok, "%2E", ".")
		if o, _, ok := digest.VerifyUnsubscribe(key, tok); !ok || o != f.org.ID {
			t.Errorf("token %q does not verify", tok)
		}
		if !strings.Contains(m.Subject, "1 budget over") || !strings.Contains(m.Text, "Daily cap") || len(m.Inline) != 1 {
			t.Errorf("email %q:\n%s", m.Subject, m.Text)
		}
	}
	if !got[f.owner.Email] || !got[admin.Email] {
		t.Errorf("emails to %v, want the owner and the admin", got)
	}

	// An unsubscribed admin gets the next day's digest no more.
	if err := f.st.UnsubscribeDigest(ctx, f.org.ID, admin.ID); err != nil {
		t.Fatal(err)
	}
	importCharges(t, f.st, f.org, charge{"2026-03-11", "500", "AWS"})
	if _, err := digest.Send(ctx, f.st, n, f.org, date("2026-03-11"), morningAfter(date("2026-03-11")), digest.Plan{When: store.DigestWhenOver}); err != nil {
		t.Fatal(err)
	}
	if len(box.sent) != 5 || box.sent[4].To[0] != f.owner.Email {
		t.Errorf("%d emails; the last to %v, want only the owner", len(box.sent), box.sent[len(box.sent)-1].To)
	}

	// Turned off, nothing goes out.
	set := store.DefaultDigestSettings(f.org.ID)
	set.Enabled = false
	if err := f.st.SaveDigestSettings(ctx, set, f.owner.ID); err != nil {
		t.Fatal(err)
	}
	importCharges(t, f.st, f.org, charge{"2026-03-12", "500", "AWS"})
	if out, err := digest.Send(ctx, f.st, n, f.org, date("2026-03-12"), morningAfter(date("2026-03-12")), digest.Plan{When: store.DigestWhenAlways}); err != nil || out.Sent {
		t.Errorf("digest off: sent %v, %v", out.Sent, err)
	}
}

// BenchmarkRenderDigest renders a built digest (chart, HTML and text): the
// work done per recipient and per preview.
func BenchmarkRenderDigest(b *testing.B) {
	f := setup(b)
	d, err := digest.Build(context.Background(), f.st, f.org, f.day, morningAfter(f.day))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := digest.Render(d, "https://burnrate.example.com", "https://burnrate.example.com/digest/unsubscribe?token=x"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestBuildInOrgTimeZones: just after midnight UTC, an org in Tokyo,
// Kolkata or Los Angeles gets the digest of its own yesterday, with the
// spend its bills put on that local day.
func TestBuildInOrgTimeZones(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	now, _ := time.Parse(time.RFC3339, "2026-03-11T00:05:00Z")
	for zone, want := range map[string]string{"Asia/Tokyo": "2026-03-10", "Asia/Kolkata": "2026-03-10", "America/Los_Angeles": "2026-03-09"} {
		org, _ := storetest.Org(t, st, storetest.OrgOpts{})
		org, err := st.UpdateOrg(ctx, org.ID, store.OrgUpdate{Name: org.Name, TimeZone: zone, Currency: "USD", TeamTagKey: "team"})
		if err != nil {
			t.Fatal(err)
		}
		importCharges(t, st, org, charge{"2026-03-09", "9", "AWS"}, charge{"2026-03-10", "10", "AWS"})
		d, err := digest.Build(ctx, st, org, digest.Yesterday(now, org.Location()), now)
		if err != nil {
			t.Fatal(err)
		}
		spent := map[string]string{"2026-03-10": "10", "2026-03-09": "9"}[want]
		if d.Date() != want || len(d.Currencies) != 1 || !d.Currencies[0].Spent.Equal(decimal.RequireFromString(spent)) {
			t.Errorf("%s: digest of %s spent %+v; want %s with %s", zone, d.Date(), d.Spent(), want, spent)
		}
	}
}

func ptr[T any](v T) *T { return &v }
