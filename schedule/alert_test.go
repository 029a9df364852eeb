package schedule_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/budget"
	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/pricing"
	"github.com/burnrate/burnrate/schedule"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

var files atomic.Int64

// charge is one line of a FOCUS export: an instant (RFC 3339), a cost in
// USD, and the provider and tags it is charged to.
type charge struct {
	at, cost, provider, tags string
}

// importCharges imports charges through the real import path, as one FOCUS
// file of a billing account of its own (so that it adds to, rather than
// restates, what earlier files imported).
func importCharges(t *testing.T, st *store.Store, org store.Org, charges ...charge) {
	t.Helper()
	n := files.Add(1)
	var f strings.Builder
	f.WriteString("BilledCost,ChargePeriodStart,BillingCurrency,ProviderName,ServiceName,BillingAccountId,Tags\n")
	for _, c := range charges {
		provider := c.provider
		if provider == "" {
			provider = "AWS"
		}
		tags := `"{}"`
		if c.tags != "" {
			tags = `"` + strings.ReplaceAll(c.tags, `"`, `""`) + `"`
		}
		fmt.Fprintf(&f, "%s,%s,USD,%s,Compute,acct-%d,%s\n", c.cost, c.at, provider, n, tags)
	}
	im := ingest.NewImporter(st, ingest.PriceTable(pricing.DefaultLLMPrices()), pricing.DefaultCatalog())
	if _, err := im.Import(context.Background(), ingest.ImportRequest{Org: org, FileName: fmt.Sprintf("f%d.csv", n), Via: "test"},
		strings.NewReader(f.String())); err != nil {
		t.Fatalf("import: %v", err)
	}
}

// orgIn is a new org whose days are days in zone.
func orgIn(t *testing.T, st *store.Store, zone string) store.Org {
	t.Helper()
	org, _ := storetest.Org(t, st, storetest.OrgOpts{})
	org, err := st.UpdateOrg(context.Background(), org.ID, store.OrgUpdate{Name: org.Name, TimeZone: zone, Currency: "USD", TeamTagKey: "team"})
	if err != nil {
		t.Fatal(err)
	}
	return org
}

func newBudget(t *testing.T, st *store.Store, org store.Org, in store.BudgetInput) store.Budget {
	t.Helper()
	if in.Name == "" {
		in.Name = "Everything"
	}
	if in.Currency == "" {
		in.Currency = "USD"
	}
	if in.Period == "" {
		in.Period = string(budget.Monthly)
	}
	if in.Thresholds == nil {
		in.Thresholds = slices.Clone(budget.DefaultThresholds)
	}
	b, err := st.CreateBudget(context.Background(), org.ID, 0, in)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

func evaluate(t *testing.T, st *store.Store, org store.Org, now string) []schedule.Alert {
	t.Helper()
	alerts, err := schedule.BudgetAlerts(context.Background(), st, org, at(now))
	if err != nil {
		t.Fatal(err)
	}
	return alerts
}

// wantAlert checks that alerts is one alert of b for thresholds, in the
// period starting first.
func wantAlert(t *testing.T, alerts []schedule.Alert, b store.Budget, first string, thresholds ...int) schedule.Alert {
	t.Helper()
	if len(alerts) != 1 {
		t.Fatalf("%d alerts, want 1 of %q for %v: %+v", len(alerts), b.Name, thresholds, alerts)
	}
	a := alerts[0]
	if a.Budget().ID != b.ID || !slices.Equal(a.Thresholds, thresholds) || a.Threshold != slices.Max(thresholds) ||
		!a.Status.First.Equal(day(first)) {
		t.Fatalf("alert of %q for %v from %s; want %q for %v from %s", a.Budget().Name, a.Thresholds,
			a.Status.First.Format(time.DateOnly), b.Name, thresholds, first)
	}
	return a
}

func TestEvaluateAlertsEachThresholdOncePerPeriod(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	org := orgIn(t, st, "UTC")
	b := newBudget(t, st, org, store.BudgetInput{Name: "Cloud", Amount: decimal.NewFromInt(1000), Recipients: []string{"lead@example.com"}})

	importCharges(t, st, org, charge{at: "2026-03-02T10:00:00Z", cost: "600", provider: "AWS"})
	a := wantAlert(t, evaluate(t, st, org, "2026-03-03T08:00:00Z"), b, "2026-03-01", 50)
	if !a.Status.Spent.Equal(decimal.NewFromInt(600)) || a.Status.Percent != 60 || !a.DriversFrom.Equal(day("2026-03-01")) ||
		len(a.Drivers) != 1 || a.Drivers[0].Provider != "AWS" || !slices.Equal(a.Recipients(), []string{"lead@example.com"}) {
		t.Fatalf("first alert: spent %s (%d%%), drivers from %s %+v, recipients %v", a.Status.Spent, a.Status.Percent,
			a.DriversFrom.Format(time.DateOnly), a.Drivers, a.Recipients())
	}
	if a.Link != "/dashboard?from=2026-03-01&group=provider&range=custom&to=2026-03-03" {
		t.Errorf("link = %s", a.Link)
	}
	if got := evaluate(t, st, org, "2026-03-03T09:00:00Z"); len(got) != 0 {
		t.Fatalf("the same crossing alerted again: %+v", got)
	}

	// New spend that crosses nothing new alerts nothing.
	importCharges(t, st, org, charge{at: "2026-03-09T10:00:00Z", cost: "100", provider: "Google Cloud"})
	if got := evaluate(t, st, org, "2026-03-10T06:00:00Z"); len(got) != 0 {
		t.Fatalf("70%% alerted again: %+v", got)
	}

	// Crossing 80% alerts 80% only, with what grew since the last alert.
	importCharges(t, st, org, charge{at: "2026-03-10T07:00:00Z", cost: "150", provider: "Microsoft"})
	a = wantAlert(t, evaluate(t, st, org, "2026-03-10T12:00:00Z"), b, "2026-03-01", 80)
	if !a.DriversFrom.Equal(day("2026-03-03")) || len(a.Drivers) != 2 || a.Drivers[0].Provider != "Microsoft Azure" || a.Drivers[1].Provider != "Google Cloud" {
		t.Fatalf("drivers since the last alert (%s): %+v; want Microsoft Azure (the file says Microsoft), Google Cloud since 2026-03-03", a.DriversFrom.Format(time.DateOnly), a.Drivers)
	}
	if got := evaluate(t, st, org, "2026-03-10T13:00:00Z"); len(got) != 0 {
		t.Fatalf("80%% alerted twice: %+v", got)
	}
	importCharges(t, st, org, charge{at: "2026-03-11T07:00:00Z", cost: "500"})
	wantAlert(t, evaluate(t, st, org, "2026-03-11T12:00:00Z"), b, "2026-03-01", 100)

	// A new period starts from nothing and alerts again.
	if got := evaluate(t, st, org, "2026-04-01T00:30:00Z"); len(got) != 0 {
		t.Fatalf("April with no spend alerted: %+v", got)
	}
	importCharges(t, st, org, charge{at: "2026-04-01T05:00:00Z", cost: "820"})
	a = wantAlert(t, evaluate(t, st, org, "2026-04-01T12:00:00Z"), b, "2026-04-01", 50, 80)
	if !a.Status.Spent.Equal(decimal.NewFromInt(820)) {
		t.Fatalf("April spent %s, want 820 (March's spend is March's)", a.Status.Spent)
	}

	// Every claim is recorded, with when and at what spend.
	as, err := st.BudgetAlerts(context.Background(), org.ID, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range as {
		if a.NotifiedAt == nil || !a.Spent.Valid {
			t.Errorf("alert %+v has no claim", a)
			continue
		}
		got = append(got, fmt.Sprintf("%s %d%% %s", a.PeriodStart.Format(time.DateOnly), a.Threshold, a.Spent.Decimal))
	}
	want := []string{"2026-04-01 50% 820", "2026-04-01 80% 820", "2026-03-01 50% 600", "2026-03-01 80% 850", "2026-03-01 100% 1350"}
	if !slices.Equal(got, want) {
		t.Fatalf("budget_alerts = %v, want %v", got, want)
	}
}

// TestEvaluateConcurrentlyAlertsOnce runs many evaluations at once, from two
// pools (two server processes) and each on a connection of its own, some in
// a transaction held open a while: each crossing is alerted exactly once.
func TestEvaluateConcurrentlyAlertsOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.URL(t)
	var stores []*store.Store
	for range 2 {
		st, err := store.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		stores = append(stores, st)
	}
	org := orgIn(t, stores[0], "Europe/Berlin")
	newBudget(t, stores[0], org, store.BudgetInput{Amount: decimal.NewFromInt(1000)})
	newBudget(t, stores[0], org, store.BudgetInput{Name: "Daily", Period: string(budget.Daily), Amount: decimal.NewFromInt(2000), Thresholds: []int{25}})

	race := func(now string) map[string]int {
		t.Helper()
		const n = 12
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			claimed = map[string]int{}
			start   = make(chan struct{})
			errs    = make(chan error, n)
		)
		for i := range n {
			wg.Go(func() {
				st := stores[i%2]
				<-start
				record := func(alerts []schedule.Alert) {
					mu.Lock()
					defer mu.Unlock()
					for _, a := range alerts {
						for _, th := range a.Thresholds {
							claimed[fmt.Sprintf("%s %d", a.Budget().Name, th)]++
						}
					}
				}
				if i%3 == 0 { // on its own, each statement committed at once
					alerts, err := schedule.BudgetAlerts(ctx, st, org, at(now))
					record(alerts)
					errs <- err
					return
				}
				errs <- st.InTx(ctx, func(tx *store.Store) error {
					alerts, err := schedule.BudgetAlerts(ctx, tx, org, at(now))
					time.Sleep(30 * time.Millisecond) // the message being queued
					record(alerts)
					return err
				})
			})
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		return claimed
	}

	importCharges(t, stores[0], org, charge{at: "2026-05-20T10:00:00Z", cost: "850"})
	got := race("2026-05-20T18:00:00Z")
	want := map[string]int{"Everything 50": 1, "Everything 80": 1, "Daily 25": 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("first race claimed %v, want each crossing once: %v", got, want)
	}
	importCharges(t, stores[1], org, charge{at: "2026-05-21T10:00:00Z", cost: "200"})
	got = race("2026-05-21T18:00:00Z")
	want = map[string]int{"Everything 100": 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("second race claimed %v, want %v", got, want)
	}
}

// TestEvaluateRolledBackClaimAlertsAgain checks the contract with the caller
// that queues messages: a claim whose transaction rolls back (the message
// could not be queued) is no claim, and the next evaluation alerts.
func TestEvaluateRolledBackClaimAlertsAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	org := orgIn(t, st, "UTC")
	b := newBudget(t, st, org, store.BudgetInput{Amount: decimal.NewFromInt(100)})
	importCharges(t, st, org, charge{at: "2026-06-03T10:00:00Z", cost: "55"})
	queueDown := errors.New("queue down")
	err := st.InTx(ctx, func(tx *store.Store) error {
		alerts, err := schedule.BudgetAlerts(ctx, tx, org, at("2026-06-03T12:00:00Z"))
		if err != nil {
			return err
		}
		wantAlert(t, alerts, b, "2026-06-01", 50)
		return queueDown
	})
	if !errors.Is(err, queueDown) {
		t.Fatalf("InTx = %v", err)
	}
	wantAlert(t, evaluate(t, st, org, "2026-06-03T12:05:00Z"), b, "2026-06-01", 50)
	if got := evaluate(t, st, org, "2026-06-03T12:10:00Z"); len(got) != 0 {
		t.Fatalf("alerted again after a committed claim: %+v", got)
	}
}

// TestEvaluateClaimsCrossingsRecordedUnsent checks that a crossing an older
// version recorded when a page showed it (no notified_at: nobody was told)
// is alerted by the next evaluation, once.
func TestEvaluateClaimsCrossingsRecordedUnsent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	org := orgIn(t, st, "UTC")
	b := newBudget(t, st, org, store.BudgetInput{Amount: decimal.NewFromInt(100)})
	importCharges(t, st, org, charge{at: "2026-06-03T10:00:00Z", cost: "85"})
	if _, err := st.Pool().Exec(ctx, `INSERT INTO budget_alerts (org_id, budget_id, period_start, threshold) VALUES ($1, $2, '2026-06-01', 50)`,
		org.ID, b.ID); err != nil {
		t.Fatal(err)
	}
	wantAlert(t, evaluate(t, st, org, "2026-06-03T12:00:00Z"), b, "2026-06-01", 50, 80)
	if got := evaluate(t, st, org, "2026-06-03T13:00:00Z"); len(got) != 0 {
		t.Fatalf("alerted twice: %+v", got)
	}
}

// TestEvaluateInOrgTimeZone checks that the current period and day are the
// org's, at instants where they differ from UTC's: around midnight UTC (when
// no org below changes day), at the org's own midnight, and across
// daylight-saving changes. Every case would alert differently if days were
// UTC days or a fixed offset.
func TestEvaluateInOrgTimeZone(t *testing.T) {
	t.Parallel()
	type check struct {
		charges    []charge // imported before now
		now        string
		first      string // the period alerted; "" for no alert
		thresholds []int
		spent      string
	}
	tests := []struct {
		name    string
		zone    string
		period  budget.Period
		charges []charge
		checks  []check
	}{
		{
			// 15:00 UTC is midnight in Tokyo: the charge at 15:10 UTC on
			// 31 March is April's, the one at 14:00 March's.
			name: "TokyoMonthAtLocalMidnight", zone: "Asia/Tokyo", period: budget.Monthly,
			charges: []charge{{at: "2026-03-31T14:00:00Z", cost: "90"}, {at: "2026-03-31T15:10:00Z", cost: "60"}},
			checks: []check{
				{now: "2026-03-31T14:30:00Z", first: "2026-03-01", thresholds: []int{50, 80}, spent: "90"},
				{now: "2026-03-31T15:30:00Z", first: "2026-04-01", thresholds: []int{50}, spent: "60"},
			},
		},
		{
			// Tokyo's 1 April began at 15:00 UTC on 31 March: charges
			// before and after midnight UTC are both its.
			name: "TokyoDayAroundMidnightUTC", zone: "Asia/Tokyo", period: budget.Daily,
			charges: []charge{{at: "2026-03-31T16:00:00Z", cost: "60"}, {at: "2026-04-01T00:10:00Z", cost: "30"}},
			checks:  []check{{now: "2026-04-01T00:20:00Z", first: "2026-04-01", thresholds: []int{50, 80}, spent: "90"}},
		},
		{
			// At midnight UTC it is 5 p.m. the day before in Los Angeles
			// (UTC−7 in summer time): both charges are 31 March's.
			name: "LosAngelesDayAroundMidnightUTC", zone: "America/Los_Angeles", period: budget.Daily,
			charges: []charge{{at: "2026-03-31T22:00:00Z", cost: "60"}},
			checks: []check{
				{now: "2026-03-31T23:50:00Z", first: "2026-03-31", thresholds: []int{50}, spent: "60"},
				{charges: []charge{{at: "2026-04-01T01:00:00Z", cost: "30"}},
					now: "2026-04-01T01:30:00Z", first: "2026-03-31", thresholds: []int{80}, spent: "90"},
			},
		},
		{
			name: "LosAngelesMonthAfterMidnightUTC", zone: "America/Los_Angeles", period: budget.Monthly,
			charges: []charge{{at: "2026-04-01T02:00:00Z", cost: "85"}},
			checks: []check{
				{now: "2026-04-01T05:00:00Z", first: "2026-03-01", thresholds: []int{50, 80}, spent: "85"},
				{now: "2026-04-01T07:30:00Z"}, // 00:30 on 1 April there: a new, empty month
			},
		},
		{
			// Kolkata is UTC+5:30: its days start at 18:30 UTC.
			name: "KolkataHalfHourOffset", zone: "Asia/Kolkata", period: budget.Monthly,
			charges: []charge{{at: "2026-03-31T18:25:00Z", cost: "40"}, {at: "2026-03-31T18:35:00Z", cost: "55"}},
			checks: []check{
				{now: "2026-03-31T18:29:00Z"}, // 23:59 on 31 March there: 40 is under 50%
				{now: "2026-03-31T18:45:00Z", first: "2026-04-01", thresholds: []int{50}, spent: "55"},
			},
		},
		{
			name: "KolkataDayAroundMidnightUTC", zone: "Asia/Kolkata", period: budget.Daily,
			charges: []charge{{at: "2026-03-31T19:00:00Z", cost: "60"}, {at: "2026-04-01T00:10:00Z", cost: "30"}},
			checks:  []check{{now: "2026-04-01T00:20:00Z", first: "2026-04-01", thresholds: []int{50, 80}, spent: "90"}},
		},
		{
			// 8 March 2026 in Los Angeles has 23 hours: it starts at 08:00
			// UTC (PST) and ends at 07:00 UTC on the 9th (PDT).
			name: "LosAngelesSpringForwardDay", zone: "America/Los_Angeles", period: budget.Daily,
			charges: []charge{
				{at: "2026-03-08T07:30:00Z", cost: "70"}, // 7 March, 23:30 PST
				{at: "2026-03-08T08:30:00Z", cost: "50"}, // 8 March, 00:30 PST
				{at: "2026-03-09T06:30:00Z", cost: "40"}, // 8 March, 23:30 PDT
				{at: "2026-03-09T07:30:00Z", cost: "30"}, // 9 March, 00:30 PDT
			},
			checks: []check{
				{now: "2026-03-08T07:45:00Z", first: "2026-03-07", thresholds: []int{50}, spent: "70"},
				{now: "2026-03-09T06:45:00Z", first: "2026-03-08", thresholds: []int{50, 80}, spent: "90"},
				{now: "2026-03-09T07:15:00Z"}, // 9 March: 30 is under 50%
			},
		},
		{
			// 1 November 2026 in Los Angeles has 25 hours: 07:00 UTC to
			// 08:00 UTC on the 2nd.
			name: "LosAngelesFallBackDay", zone: "America/Los_Angeles", period: budget.Daily,
			charges: []charge{
				{at: "2026-11-01T07:30:00Z", cost: "50"}, // 1 November, 00:30 PDT
				{at: "2026-11-02T07:30:00Z", cost: "40"}, // 1 November, 23:30 PST
			},
			checks: []check{{now: "2026-11-02T07:45:00Z", first: "2026-11-01", thresholds: []int{50, 80}, spent: "90"}},
		},
	}
	st := storetest.New(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			org := orgIn(t, st, tt.zone)
			b := newBudget(t, st, org, store.BudgetInput{Amount: decimal.NewFromInt(100), Period: string(tt.period)})
			importCharges(t, st, org, tt.charges...)
			for _, c := range tt.checks {
				if len(c.charges) > 0 {
					importCharges(t, st, org, c.charges...)
				}
				alerts := evaluate(t, st, org, c.now)
				if c.first == "" {
					if len(alerts) != 0 {
						t.Fatalf("at %s: %d alerts, want none: %+v", c.now, len(alerts), alerts)
					}
					continue
				}
				a := wantAlert(t, alerts, b, c.first, c.thresholds...)
				if !a.Status.Spent.Equal(decimal.RequireFromString(c.spent)) {
					t.Fatalf("at %s: spent %s, want %s", c.now, a.Status.Spent, c.spent)
				}
			}
		})
	}
}

// TestAlertMessage evaluates a budget scoped by provider and tag (summed
// from charges) and renders its alert: the subject, text and HTML say what
// crossed and link to the dashboard; names from users stay text; the JSON
// payload keeps amounts as decimal strings.
func TestAlertMessage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	org := orgIn(t, st, "UTC")
	b := newBudget(t, st, org, store.BudgetInput{Name: "<b>Prod</b>\r\nBcc: evil@example.com", Amount: decimal.NewFromInt(1000),
		Scope: store.BudgetScope{Provider: "AWS", Tags: map[string]string{"env": "prod"}}, Recipients: []string{"lead@example.com"}})
	importCharges(t, st, org,
		charge{at: "2026-07-01T10:00:00Z", cost: "850.5", provider: "AWS", tags: `{"env":"prod"}`},
		charge{at: "2026-07-01T11:00:00Z", cost: "500", provider: "AWS", tags: `{"env":"dev"}`},
		charge{at: "2026-07-01T12:00:00Z", cost: "100", provider: "Google Cloud", tags: `{"env":"prod"}`},
	)
	a := wantAlert(t, evaluate(t, st, org, "2026-07-02T08:00:00Z"), b, "2026-07-01", 50, 80)
	if len(a.Drivers) != 1 || a.Drivers[0].Provider != "AWS" || !a.Drivers[0].Amount.Equal(decimal.RequireFromString("850.5")) {
		t.Fatalf("drivers = %+v, want AWS 850.5 only", a.Drivers)
	}
	if !a.Status.Forecast.GreaterThan(a.Status.Budget.Amount) || !a.Status.RunsOutOK {
		t.Fatalf("forecast %s, runs out %v: at 850.50 on 2 July the month runs over", a.Status.Forecast, a.Status.RunsOutOK)
	}
	m, err := a.Message(ctx, "https://burnrate.example/")
	if err != nil {
		t.Fatal(err)
	}
	link := "https://burnrate.example/dashboard?from=2026-07-01&group=service&provider=AWS&range=custom&to=2026-07-02"
	if m.Kind != "budget_alert" || m.OrgID != org.ID || m.Link != link || !slices.Equal(m.Recipients, []string{"lead@example.com"}) {
		t.Fatalf("message %q %d %q %v", m.Kind, m.OrgID, m.Link, m.Recipients)
	}
	if strings.ContainsAny(m.Subject, "\r\n") || !strings.Contains(m.Subject, "crossed 50% and 80%") || !strings.Contains(m.Subject, "850.50 USD of 1,000.00 USD (85%)") {
		t.Errorf("subject = %q", m.Subject)
	}
	for _, want := range []string{"850.50 USD of 1,000.00 USD (85%)", "in July 2026", "runs out on 2026-07-0", "provider=AWS, tag env=prod, in USD",
		"Largest costs since 2026-07-01:\n  850.50 USD  AWS · Compute", link} {
		if !strings.Contains(m.Text, want) {
			t.Errorf("text lacks %q:\n%s", want, m.Text)
		}
	}
	if strings.Contains(m.HTML, "<b>Prod") || !strings.Contains(m.HTML, "&lt;b&gt;Prod&lt;/b&gt;") || !strings.Contains(m.HTML, `href="`+strings.ReplaceAll(link, "&", "&amp;")+`"`) {
		t.Errorf("html = %s", m.HTML)
	}
	raw, err := json.Marshal(m.Payload)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"spent":"850.5"`, `"threshold":80`, `"thresholds":[50,80]`, `"period_start":"2026-07-01"`,
		`"amount":"1000"`, `"scope":{"provider":"AWS","tags":{"env":"prod"}}`, `"link":"` + strings.ReplaceAll(link, "&", `\u0026`) + `"`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("payload lacks %s: %s", want, raw)
		}
	}

	// Spent in full, the budget ran out on a day past: not "runs out".
	importCharges(t, st, org, charge{at: "2026-07-02T10:00:00Z", cost: "200", provider: "AWS", tags: `{"env":"prod"}`})
	a = wantAlert(t, evaluate(t, st, org, "2026-07-03T08:00:00Z"), b, "2026-07-01", 100)
	if m, err = a.Message(ctx, "https://burnrate.example/"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(m.Text, "It ran out on 2026-07-02.") || strings.Contains(m.Text, "runs out") ||
		!strings.Contains(m.HTML, "ran out on 2026-07-02") || strings.Contains(m.HTML, "runs out") {
		t.Errorf("a budget spent in full:\n%s\n%s", m.Text, m.HTML)
	}
}
