package web_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/demo"
	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/pricing"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// demoOrg is an org filled by `burnrate demo`'s generator through the real
// import path up to testNow, with its owner and an API token.
func demoOrg(t *testing.T, b *bundle) (store.Org, store.User, string, demo.Result) {
	t.Helper()
	return demoOrgAt(t, b, testNow)
}

// demoOrgAt is demoOrg seeded up to now.
func demoOrgAt(t *testing.T, b *bundle, now time.Time) (store.Org, store.User, string, demo.Result) {
	t.Helper()
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{Name: "Demo"})
	im := ingest.NewImporter(b.st, ingest.PriceTable(pricing.DefaultLLMPrices()), pricing.DefaultCatalog())
	res, err := demo.Seed(ctx(), b.st, im, org, now)
	if err != nil {
		t.Fatal(err)
	}
	_, token, err := b.st.CreateAPIToken(ctx(), org.ID, "test", owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	return org, owner, token, res
}

func TestDashboardRendersCardsChartsAndTables(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, owner, _, res := demoOrg(t, b)
	c := b.client(t)
	c.login(owner.Email)
	rec := c.get("/dashboard?range=90d")
	wantStatus(t, rec, http.StatusOK)
	d := doc(t, rec)
	if d.Find(`[data-testid=dashboard-empty]`).Length() != 0 {
		t.Fatal("an org with data sees the empty state")
	}
	for sel, min := range map[string]int{
		`[data-testid=mtd-card]`:         2, // USD and EUR, side by side
		`[data-testid=budget-card]`:      6, // every budget, the tag-scoped one too
		`[data-testid=chart]`:            2,
		`[data-testid=daily-table-link]`: 2,
		`[data-testid=driver-row]`:       5,
		`[data-testid=gpu-row]`:          3,
		`[data-testid=model-row]`:        5,
		`[data-testid=mover-row]`:        2,
		`script#chart-data`:              1,
	} {
		if n := d.Find(sel).Length(); n < min {
			t.Errorf("%s: %d, want at least %d", sel, n, min)
		}
	}
	// The forecast's method is text in a disclosure (keyboard and touch
	// reach it), not a hover title.
	if how := d.Find(`[data-testid=forecast-explain]`).First(); how.Find("summary").Length() != 1 || !strings.Contains(how.Text(), "Run-rate") {
		t.Errorf("forecast's method = %q", how.Text())
	}
	// With two currencies, each daily table is closed and its rows come
	// when it is opened (htmx), or on a page of its own (its link).
	if n := d.Find(`[data-testid=daily-table]`).Length(); n != 0 {
		t.Errorf("%d daily tables in a page of two currencies, want them fetched when opened", n)
	}
	var tables []*goquery.Selection
	d.Find(`[data-testid=daily-table-details]`).Each(func(_ int, det *goquery.Selection) {
		get, _ := det.Attr("hx-get")
		href, _ := det.Find(`[data-testid=daily-table-link]`).Attr("href")
		if get == "" || get != href {
			t.Errorf("a closed daily table fetches %q, its link is %q", get, href)
			return
		}
		frag := doc(t, c.htmx(get))
		page := doc(t, c.get(href))
		if frag.Find(`[data-testid=daily-table]`).Length() != 1 || frag.Find("nav").Length() != 0 ||
			page.Find(`[data-testid=daily-table]`).Length() != 1 || page.Find(`[data-testid=back-to-dashboard]`).Length() != 1 {
			t.Errorf("%s: not one table as a fragment and as a page", get)
		}
		cur, _ := frag.Find(`[data-testid=daily-table]`).Attr("data-currency")
		if !strings.HasSuffix(get, "&currency="+cur) || !strings.Contains(det.Find("summary").Text(), cur) {
			t.Errorf("%s fetched the %s table under %q", get, cur, det.Find("summary").Text())
		}
		tables = append(tables, frag.Selection)
	})
	if len(tables) != 2 {
		t.Fatalf("%d daily tables, want 2", len(tables))
	}
	if rec := c.htmx("/dashboard/daily?range=90d&currency=JPY"); rec.Code != http.StatusNotFound {
		t.Errorf("a currency without spend: %d, want 404", rec.Code)
	}
	if rec := c.htmx("/dashboard/daily?range=90d"); rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "currency") {
		t.Errorf("no currency: %d %q, want 422 naming the parameter", rec.Code, rec.Body)
	}
	// The page without JavaScript says which view the table is of.
	page := doc(t, c.get("/dashboard/daily?range=30d&basis=amortized&provider=AWS&currency=usd"))
	if view := page.Find(`[data-testid=daily-view]`).Text(); !strings.Contains(view, " to ") ||
		!strings.Contains(view, "amortized") || !strings.Contains(view, "provider: AWS") {
		t.Errorf("the daily page of 30 amortized days of AWS says %q", view)
	}
	// The demo's planted spike is among the anomalies (its random days
	// may make others), driven by AWS.
	var planted []string
	tables[0].AddSelection(tables[1]).Find(`[data-testid=anomaly-day]`).Each(func(_ int, row *goquery.Selection) {
		if title, _ := row.Attr("title"); strings.Contains(row.Find("td").First().Text(), res.Anomaly.Format(time.DateOnly)) {
			planted = append(planted, title)
		}
	})
	if len(planted) != 1 || !strings.Contains(planted[0], "AWS") {
		t.Errorf("anomaly rows of %s: %q, want one driven by AWS", res.Anomaly.Format(time.DateOnly), planted)
	}
	statuses := d.Find(`[data-testid=budget-status]`).Text()
	if !strings.Contains(statuses, "Over budget") {
		t.Errorf("no budget over: %q", statuses)
	}
	if !strings.Contains(d.Find(`[data-testid=mtd-card]`).Text(), "EUR") || !strings.Contains(d.Find(`[data-testid=mtd-card]`).Text(), "USD") {
		t.Error("currencies not side by side")
	}
	// The comparisons say which complete days they compare: yesterday, as
	// the headline.
	yesterday := testNow.UTC().AddDate(0, 0, -1)
	if got, want := d.Find(`[data-testid=dod-days]`).Text(), "yesterday ("+yesterday.Format("Mon 2 Jan")+")"; !strings.HasPrefix(got, want) {
		t.Errorf("day over day compares %q, want %q…", got, want)
	}
	if got, want := d.Find(`[data-testid=wow-days]`).Text(), yesterday.AddDate(0, 0, -6).Format("2 Jan")+"–"+yesterday.Format("2 Jan")+" vs "; !strings.HasPrefix(got, want) {
		t.Errorf("week over week compares %q, want %q…", got, want)
	}
	// Filters and the view live in the URL: the form shows them back.
	rec = c.get("/dashboard?range=custom&from=2020-01-01&to=2020-01-31&group=team&provider=AWS")
	wantStatus(t, rec, http.StatusOK)
	d = doc(t, rec)
	if v, _ := d.Find(`[data-testid=filter-group] option[selected]`).Attr("value"); v != "team" {
		t.Errorf("group shown = %q", v)
	}
	if v, _ := d.Find(`[data-testid=filter-provider] option[selected]`).Attr("value"); v != "AWS" {
		t.Errorf("provider shown = %q", v)
	}
}

func TestDashboardEmptyOrgSeesHowToGetDataIn(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	c := b.client(t)
	c.login(owner.Email)
	rec := c.get("/dashboard")
	wantStatus(t, rec, http.StatusOK)
	if doc(t, rec).Find(`[data-testid=dashboard-empty]`).Length() != 1 {
		t.Fatal("empty org does not see the empty state")
	}
}

func TestDashboardHTMXFilterGetsFragmentAndJSON(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, owner, _, _ := demoOrg(t, b)
	c := b.client(t)
	c.login(owner.Email)
	// The form sends the custom range's days along with the preset chosen
	// after it; the address pushed is the view, without them.
	req := httptest.NewRequest(http.MethodGet, "/dashboard?range=30d&from=2020-01-01&to=2020-01-31&group=model&chart=cumulative", nil)
	req.Header.Set("HX-Request", "true")
	rec := c.do(req)
	wantStatus(t, rec, http.StatusOK)
	if got := rec.Header().Get("HX-Push-Url"); got != "/dashboard?chart=cumulative&group=model&range=30d" {
		t.Errorf("HX-Push-Url %q, want the view without the custom days", got)
	}
	if strings.Contains(rec.Body.String(), "<html") {
		t.Fatal("htmx filter request got a whole page")
	}
	d := doc(t, rec)
	if d.Find(`#dashboard`).Length() != 1 || d.Find(`[data-testid=chart]`).Length() == 0 {
		t.Fatalf("fragment lacks the dashboard: %.500s", rec.Body)
	}
	var chart struct {
		Group, View string
		Charts      []struct {
			Currency   string
			Days       []string
			Series     []struct{ Name string }
			Cumulative []string
			Budgets    []struct {
				Name        string
				Daily, Pace []string
				DailyName   string `json:"daily_name"`
				PaceName    string `json:"pace_name"`
			}
		}
	}
	if err := json.Unmarshal([]byte(d.Find(`script#chart-data`).Text()), &chart); err != nil {
		t.Fatal(err)
	}
	if chart.Group != "model" || chart.View != "cumulative" || len(chart.Charts) != 2 {
		t.Fatalf("chart = %+v", chart)
	}
	usd := chart.Charts[0] // the org's own currency first
	// The whole org's chart draws the all-spend budget only: the team's
	// budgets measure a team's spend, not the bars.
	if usd.Currency != "USD" || len(usd.Days) != 30 || len(usd.Cumulative) != 30 || len(usd.Budgets) != 1 {
		t.Fatalf("USD chart: %s, %d days, %d cumulative, %d budgets", usd.Currency, len(usd.Days), len(usd.Cumulative), len(usd.Budgets))
	}
	// Each budget's lines name it once, with its real period; a team's
	// budgets are drawn on that team's view.
	labels := map[string]bool{}
	for _, b := range usd.Budgets {
		labels[b.DailyName], labels[b.PaceName] = true, true
	}
	if err := json.Unmarshal([]byte(doc(t, c.get("/dashboard?range=30d&group=model&chart=cumulative&team=support-bot")).Find(`script#chart-data`).Text()), &chart); err != nil {
		t.Fatal(err)
	}
	for _, b := range chart.Charts[0].Budgets {
		labels[b.DailyName], labels[b.PaceName] = true, true
	}
	for _, want := range []string{"Budget: Support bot (daily)", "Budget: Support bot (daily, cumulative)",
		"Budget: Support bot LLM (monthly, per day)", "Budget: Support bot LLM (monthly, pace)",
		"Budget: All cloud and LLM spend (monthly, per day)", "Budget: All cloud and LLM spend (monthly, pace)"} {
		if !labels[want] {
			t.Errorf("no budget line %q in %v", want, labels)
		}
	}
	if len(labels) != 6 {
		t.Errorf("budget lines %v: want the all-spend budget's on the org's chart, the support bot's two on its team's", labels)
	}
	for l := range labels {
		if strings.Count(l, "per day") > 1 || strings.Contains(l, "daily (") {
			t.Errorf("budget line %q names its period twice", l)
		}
	}
	names := ""
	for _, s := range usd.Series {
		names += s.Name + ","
	}
	if !strings.Contains(names, "gpt-4o") {
		t.Errorf("series by model = %s", names)
	}

	// The same data as JSON from the same handler.
	rec = c.get("/dashboard?range=30d&group=team&format=json")
	wantStatus(t, rec, http.StatusOK)
	if !strings.Contains(rec.Body.String(), `"group":"team"`) || !strings.Contains(rec.Body.String(), "support-bot") {
		t.Fatalf("json = %.300s", rec.Body)
	}
}

func TestDashboardCSVMatchesAPI(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, owner, token, _ := demoOrg(t, b)
	c := b.client(t)
	c.login(owner.Email)
	from := testNow.UTC().AddDate(0, 0, -40).Format(time.DateOnly)
	to := testNow.UTC().AddDate(0, 0, -5).Format(time.DateOnly)
	rec := c.get("/dashboard?range=custom&from=" + from + "&to=" + to + "&group=service&format=csv&table=daily")
	wantStatus(t, rec, http.StatusOK)
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") {
		t.Fatalf("content type %q", ct)
	}
	rows, err := csv.NewReader(rec.Body).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rows[0], ",") != "date,currency,service,amount" {
		t.Fatalf("header = %v", rows[0])
	}
	csvTotals := map[string]decimal.Decimal{}
	for _, r := range rows[1:] {
		csvTotals[r[1]] = csvTotals[r[1]].Add(decimal.RequireFromString(r[3]))
	}

	rec = httptest.NewRecorder()
	b.srv.ServeHTTP(rec, apiRequest(http.MethodGet, "/api/v1/spend?from="+from+"&to="+to+"&group_by=service", token, ""))
	wantStatus(t, rec, http.StatusOK)
	var api struct {
		Days []struct {
			Date, Currency string
			Groups         map[string]string
		}
		Totals map[string]string
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &api); err != nil {
		t.Fatal(err)
	}
	if len(api.Days) != 2*36 {
		t.Errorf("api days = %d, want 72 (36 days × 2 currencies)", len(api.Days))
	}
	sums := map[string]decimal.Decimal{}
	for _, d := range api.Days {
		for _, v := range d.Groups {
			sums[d.Currency] = sums[d.Currency].Add(decimal.RequireFromString(v))
		}
	}
	for cur, total := range api.Totals {
		if !sums[cur].Equal(decimal.RequireFromString(total)) || !csvTotals[cur].Equal(sums[cur]) {
			t.Errorf("%s: api total %s, sum of days %s, csv %s", cur, total, sums[cur], csvTotals[cur])
		}
	}
	if len(api.Totals) != 2 {
		t.Errorf("totals = %v, want USD and EUR apart", api.Totals)
	}

	for _, table := range []string{"drivers", "dod", "wow", "gpus", "models", "anomalies"} {
		rec := c.get("/dashboard?range=90d&format=csv&table=" + table)
		wantStatus(t, rec, http.StatusOK)
		if rows, err := csv.NewReader(rec.Body).ReadAll(); err != nil || len(rows) < 2 {
			t.Errorf("table %s: %d rows, %v", table, len(rows), err)
		}
	}
	wantStatus(t, c.get("/dashboard?format=csv&table=nope"), http.StatusUnprocessableEntity)
}

func TestAPISpendRefusesBadQueries(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	_, token, _ := b.st.CreateAPIToken(ctx(), org.ID, "t", owner.ID)
	for query, want := range map[string]string{
		"":                               "from and to are required",
		"?from=2026-01-01":               "from and to are required",
		"?from=2026-13-01&to=2026-01-31": "from: \"2026-13-01\" is not a date",
		"?from=2026-01-01&to=31.01.2026": "to: \"31.01.2026\" is not a date",
		"?from=2026-02-01&to=2026-01-31": "is after to",
		"?from=2026-01-01&to=2026-01-31&group_by=colour":         "group_by: \"colour\" is not one of",
		"?from=2020-01-01&to=2026-01-31":                         "longer than",
		"?from=2026-01-01&to=2026-01-31&group_by=team&cost=list": "cost:",
	} {
		rec := httptest.NewRecorder()
		b.srv.ServeHTTP(rec, apiRequest(http.MethodGet, "/api/v1/spend"+query, token, ""))
		var body struct{ Error string }
		_ = json.Unmarshal(rec.Body.Bytes(), &body)
		if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(body.Error, want) {
			t.Errorf("%q: %d %s, want 422 with %q", query, rec.Code, rec.Body, want)
		}
	}
	// An empty range is an empty answer, not an error.
	rec := httptest.NewRecorder()
	b.srv.ServeHTTP(rec, apiRequest(http.MethodGet, "/api/v1/spend?from=2026-01-01&to=2026-01-31&group_by=model", token, ""))
	wantStatus(t, rec, http.StatusOK)
	if strings.TrimSpace(rec.Body.String()) != `{"basis":"billed","days":[],"totals":{},"data_through":[]}` {
		t.Fatalf("empty = %s", rec.Body)
	}
}

// TestDashboardCacheFollowsData checks that a cached dashboard is never
// served after the data under it changed: a new budget and a new import
// both show at once.
func TestDashboardCacheFollowsData(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner, token, _ := demoOrg(t, b)
	c := b.client(t)
	c.login(owner.Email)
	cards := func() (int, string) {
		d := doc(t, c.get("/dashboard?range=7d"))
		return d.Find(`[data-testid=budget-card]`).Length(), d.Find(`[data-currency=USD] [data-testid=mtd]`).Text()
	}
	n, mtd := cards()
	if n2, mtd2 := cards(); n2 != n || mtd2 != mtd {
		t.Fatalf("the same view twice differs: %d/%s then %d/%s", n, mtd, n2, mtd2)
	}
	if _, err := b.st.CreateBudget(ctx(), org.ID, owner.ID, store.BudgetInput{Name: "New", Amount: decimal.NewFromInt(5), Currency: "USD", Period: "daily", Thresholds: []int{100}}); err != nil {
		t.Fatal(err)
	}
	if n2, _ := cards(); n2 != n+1 {
		t.Fatalf("budget cards after a new budget = %d, want %d", n2, n+1)
	}
	today := testNow.UTC().Format(time.DateOnly)
	rec := httptest.NewRecorder()
	b.srv.ServeHTTP(rec, apiRequest(http.MethodPost, "/api/v1/imports?filename=extra.csv", token,
		"BilledCost,ChargePeriodStart,BillingCurrency,ProviderName\n1000000,"+today+" 01:00:00,USD,Extra\n"))
	wantStatus(t, rec, http.StatusCreated)
	if _, mtd2 := cards(); mtd2 == mtd {
		t.Fatalf("month to date unchanged (%s) after importing a million", mtd)
	}
}

// TestDashboardHeadlineFollowsDataAcrossViews checks the headline every
// view of an org shares: a view not seen before reuses it, but never after
// the data under it changed. A new budget and a new import show at once on
// views asked for the first time after them.
func TestDashboardHeadlineFollowsDataAcrossViews(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner, token, _ := demoOrg(t, b)
	c := b.client(t)
	c.login(owner.Email)
	views := 0
	cards := func() (int, string) {
		views++ // a range of its own each time: never a cached view
		to := testNow.UTC()
		from := to.AddDate(0, 0, -views)
		d := doc(t, c.get("/dashboard?range=custom&from="+from.Format(time.DateOnly)+"&to="+to.Format(time.DateOnly)))
		return d.Find(`[data-testid=budget-card]`).Length(), d.Find(`[data-currency=USD] [data-testid=mtd]`).Text()
	}
	n, mtd := cards()
	if n2, mtd2 := cards(); n2 != n || mtd2 != mtd {
		t.Fatalf("two views' headlines differ: %d/%s then %d/%s", n, mtd, n2, mtd2)
	}
	if _, err := b.st.CreateBudget(ctx(), org.ID, owner.ID, store.BudgetInput{Name: "New", Amount: decimal.NewFromInt(5), Currency: "USD", Period: "daily", Thresholds: []int{100}}); err != nil {
		t.Fatal(err)
	}
	if n2, _ := cards(); n2 != n+1 {
		t.Fatalf("budget cards on a new view after a new budget = %d, want %d", n2, n+1)
	}
	today := testNow.UTC().Format(time.DateOnly)
	rec := httptest.NewRecorder()
	b.srv.ServeHTTP(rec, apiRequest(http.MethodPost, "/api/v1/imports?filename=extra.csv", token,
		"BilledCost,ChargePeriodStart,BillingCurrency,ProviderName\n1000000,"+today+" 01:00:00,USD,Extra\n"))
	wantStatus(t, rec, http.StatusCreated)
	if _, mtd2 := cards(); mtd2 == mtd {
		t.Fatalf("month to date on a new view unchanged (%s) after importing a million", mtd)
	}
}

// TestDashboardBreakdownFollowsDataAcrossGroups checks the breakdown views
// of one range share whatever their group: switching the group after an
// import shows the import's provider among the drivers and filter choices.
func TestDashboardBreakdownFollowsDataAcrossGroups(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, owner, token, _ := demoOrg(t, b)
	c := b.client(t)
	c.login(owner.Email)
	to := testNow.UTC()
	view := func(group string) string {
		return c.get("/dashboard?range=custom&from=" + to.AddDate(0, 0, -20).Format(time.DateOnly) + "&to=" + to.Format(time.DateOnly) + "&group=" + group).Body.String()
	}
	if body := view("provider"); strings.Contains(body, "Extraprov") {
		t.Fatal("fixture: the provider is there before its import")
	}
	if body := view("service"); strings.Contains(body, "Extraprov") {
		t.Fatal("fixture: the provider is there before its import")
	}
	rec := httptest.NewRecorder()
	b.srv.ServeHTTP(rec, apiRequest(http.MethodPost, "/api/v1/imports?filename=extra.csv", token,
		"BilledCost,ChargePeriodStart,BillingCurrency,ProviderName\n1000000,"+to.Format(time.DateOnly)+" 01:00:00,USD,Extraprov\n"))
	wantStatus(t, rec, http.StatusCreated)
	d := doc(t, c.get("/dashboard?range=custom&from="+to.AddDate(0, 0, -20).Format(time.DateOnly)+"&to="+to.Format(time.DateOnly)+"&group=model"))
	if !strings.Contains(d.Find(`[data-testid=drivers]`).Text(), "Extraprov") {
		t.Errorf("drivers after the import, on a view of another group, lack the new provider: %q", d.Find(`[data-testid=drivers]`).Text())
	}
	if d.Find(`select[name=provider] option[value=Extraprov]`).Length() != 1 {
		t.Error("the provider filter after the import does not offer the new provider")
	}
}

// TestDashboardUnderConcurrency sends more simultaneous dashboard requests
// than the pool has connections: each request must finish on its own
// fenced connection, never wait for a second one (which deadlocked).
func TestDashboardUnderConcurrency(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, owner, _, _ := demoOrg(t, b)
	c := b.client(t)
	c.login(owner.Email)
	n := int(b.st.Pool().Config().MaxConns) * 3
	done := make(chan int, n)
	// A deadline on each request, so that a deadlock fails the test
	// rather than hanging it (blocked acquires give up).
	deadline, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := range n {
		go func() {
			req := httptest.NewRequestWithContext(deadline, http.MethodGet, "/dashboard?range=custom&from=2026-01-01&to=2026-01-"+fmt.Sprintf("%02d", i%28+1), nil)
			for _, ck := range c.jar.Cookies(base) {
				req.AddCookie(ck)
			}
			rec := httptest.NewRecorder()
			b.srv.ServeHTTP(rec, req)
			done <- rec.Code
		}()
	}
	for range n {
		if code := <-done; code != http.StatusOK {
			t.Fatalf("one of %d concurrent dashboards on a pool of %d: status %d (a deadlock times out as 500)", n, b.st.Pool().Config().MaxConns, code)
		}
	}
}
