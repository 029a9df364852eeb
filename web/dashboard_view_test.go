package web_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/budget"
	"github.com/burnrate/burnrate/quantity"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestDashboardDefaultsToLast30DaysAndRemembersTheView checks that a first
// visit shows the last 30 days, that /dashboard then shows the view last
// looked at (per person: another member still gets the default), and that
// a remembered range without spend says which days the data covers and
// links to them.
func TestDashboardDefaultsToLast30DaysAndRemembersTheView(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner, _, _ := demoOrg(t, b)
	c := b.client(t)
	c.login(owner.Email)

	d := doc(t, c.get("/dashboard"))
	if v, _ := d.Find(`[data-testid=filter-range] option[selected]`).Attr("value"); v != "30d" {
		t.Fatalf("first visit range = %q, want 30d", v)
	}
	today := budget.Day(testNow, org.Location())
	from, _ := d.Find(`[data-testid=filter-from]`).Attr("value")
	if from != budget.AddDays(today, -29).Format(time.DateOnly) {
		t.Errorf("from = %s", from)
	}

	wantStatus(t, c.get("/dashboard?range=custom&from=2020-01-01&to=2020-01-31&group=team&provider=AWS"), http.StatusOK)
	d = doc(t, c.get("/dashboard"))
	if v, _ := d.Find(`[data-testid=filter-from]`).Attr("value"); v != "2020-01-01" {
		t.Fatalf("remembered from = %q", v)
	}
	if v, _ := d.Find(`[data-testid=filter-group] option[selected]`).Attr("value"); v != "team" {
		t.Errorf("remembered group = %q", v)
	}
	// The filter in force is a chip that drops it.
	chip := d.Find(`[data-testid=filter-chip]`)
	href, _ := chip.Attr("href")
	if chip.Length() != 1 || !strings.Contains(chip.Text(), "Provider: AWS") || strings.Contains(href, "provider=") || !strings.Contains(href, "group=team") {
		t.Errorf("chip = %q → %q", chip.Text(), href)
	}
	// Nothing in 2020: the page says where the data is, and links there.
	empty := d.Find(`[data-testid=empty-range]`)
	link, _ := empty.Find(`[data-testid=show-data-range]`).Attr("href")
	first := budget.AddDays(today, -89).Format(time.DateOnly)
	if !strings.Contains(empty.Text(), "with these filters") || !strings.Contains(link, "from="+first) || !strings.Contains(link, "to="+today.Format(time.DateOnly)) {
		t.Errorf("empty range = %q, link %q", empty.Text(), link)
	}
	q, _ := url.ParseQuery(strings.TrimPrefix(link, "/dashboard?"))
	if q.Get("range") != "custom" || q.Get("provider") != "AWS" {
		t.Errorf("link keeps the view? %v", q)
	}

	// Another member of the org has a view of their own.
	other := storetest.Member(t, b.st, org, "viewer")
	c2 := b.client(t)
	c2.login(other.Email)
	if v, _ := doc(t, c2.get("/dashboard")).Find(`[data-testid=filter-range] option[selected]`).Attr("value"); v != "30d" {
		t.Errorf("another member sees range %q, want the default", v)
	}
}

// TestDashboardHeadline checks the first screen's numbers against the
// digest's computation of yesterday, the budgets worst first, and "Cloud
// (not LLM)" for spend without a model.
func TestDashboardHeadline(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, owner, _, _ := demoOrg(t, b)
	c := b.client(t)
	c.login(owner.Email)
	d := doc(t, c.get("/dashboard?range=30d&group=model"))
	main := d.Find(`[data-testid=headline-currency]`).First()
	if cur, _ := main.Attr("data-currency"); cur != "USD" {
		t.Errorf("first currency = %q, want the org's own (USD)", cur)
	}
	if s := main.Find(`[data-testid=yesterday-spend]`).Text(); !strings.HasSuffix(s, " USD") || !strings.Contains(s, ",") {
		t.Errorf("yesterday = %q", s)
	}
	var standings []string
	d.Find(`[data-testid=headline-budgets] [data-testid=budget-card]`).Each(func(_ int, s *goquery.Selection) {
		st, _ := s.Attr("data-status")
		standings = append(standings, st)
	})
	rank := map[string]int{"over": 0, "warn": 1, "ok": 2}
	for i := 1; i < len(standings); i++ {
		if rank[standings[i]] < rank[standings[i-1]] {
			t.Fatalf("budgets not worst first: %v", standings)
		}
	}
	if len(standings) != 6 || standings[0] != "over" || d.Find(`[data-testid=more-budgets]`).Length() != 1 {
		t.Errorf("budgets %v, and the rest folded into \"N more\"", standings)
	}
	if !strings.Contains(d.Find(`script#chart-data`).Text(), "Cloud (not LLM)") || strings.Contains(d.Find(`script#chart-data`).Text(), "(none)") {
		t.Error("spend without a model is not \"Cloud (not LLM)\"")
	}
	if title := d.Find(`[data-testid=chart-title]`).Text(); !strings.HasPrefix(title, "Daily spend by model") {
		t.Errorf("chart title = %q", title)
	}
	d = doc(t, c.get("/dashboard?range=90d&chart=cumulative"))
	if title := d.Find(`[data-testid=chart-title]`).Text(); !strings.HasPrefix(title, "Cumulative spend by month") {
		t.Errorf("cumulative chart title = %q", title)
	}
}

// TestBudgetPageBurnDownAndHistoryFromTheData checks a monthly budget's
// page: a burn-down chart of the period's days, and past periods only from
// the first with data (the demo has 90 days: no period before them).
func TestBudgetPageBurnDownAndHistoryFromTheData(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner, _, res := demoOrg(t, b)
	c := b.client(t)
	c.login(owner.Email)
	d := doc(t, c.get("/budgets/"+itoa(res.Budgets[0].ID)))
	chart := d.Find(`script#burn-chart`).Text()
	today := budget.Day(testNow, org.Location())
	if !strings.Contains(chart, `"Spent"`) || !strings.Contains(chart, `"Budget, spread over the month"`) ||
		strings.Count(chart, ` `+today.Format("Jan")+`"`) != budget.DaysInMonth(today) {
		t.Errorf("burn-down = %.300s", chart)
	}
	first := budget.AddDays(today, -89)
	d.Find(`[data-testid=history-row] td:first-child`).Each(func(_ int, s *goquery.Selection) {
		end, err := time.Parse(time.DateOnly, strings.TrimSpace(strings.SplitN(s.Text(), "–", 2)[1]))
		if err != nil || end.Before(first) {
			t.Errorf("past period %q ends before the data (%s)", s.Text(), first.Format(time.DateOnly))
		}
	})
	if d.Find(`[data-testid=history-row]`).Length() < 2 {
		t.Error("past periods with data are missing")
	}
	if text := d.Find(`[data-testid=budget-runs-out]`).Text(); !strings.Contains(text, "At this pace") && !strings.Contains(text, "Used up on") {
		t.Errorf("runs out = %q", text)
	}
}

// TestEmptyRangeOffersAtMostARange: data spanning more than a range may
// (two rows eight years apart) is offered as its last 732 days, and the
// button says which days it shows, not the whole span.
func TestEmptyRangeOffersAtMostARange(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	_, token, _ := b.st.CreateAPIToken(ctx(), org.ID, "ci", owner.ID)
	apiImport(t, b, token, "old.csv", []byte("BilledCost,ChargePeriodStart,ChargePeriodEnd,BillingCurrency,ProviderName,BillingAccountId\n"+
		"5,2018-06-01T00:00:00Z,2018-06-02T00:00:00Z,USD,AWS,acct-1\n"+
		"7,2026-10-09T00:00:00Z,2026-10-10T00:00:00Z,USD,AWS,acct-2\n"))
	c := b.client(t)
	c.login(owner.Email)
	d := doc(t, c.get("/dashboard?range=custom&from=2026-11-01&to=2026-11-30"))
	empty := d.Find(`[data-testid=empty-range]`)
	button := empty.Find(`[data-testid=show-data-range]`)
	link, _ := button.Attr("href")
	if !strings.Contains(empty.Text(), "1 Jun 2018") || strings.TrimSpace(button.Text()) != "Show 2024-10-08 to 2026-10-09" ||
		!strings.Contains(link, "from=2024-10-08") || !strings.Contains(empty.Text(), "at most 732 days") {
		t.Errorf("empty range says %q; button %q → %q", empty.Text(), button.Text(), link)
	}
	wantStatus(t, c.get(link), http.StatusOK)
}

// TestEmptyRangeAfterTheLastBill: a range just after the last bill, whose
// days before it (the anomaly baseline) have spend, is as empty as one
// with none anywhere near: the message, and no chart or daily table of
// zeros.
func TestEmptyRangeAfterTheLastBill(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	_, token, _ := b.st.CreateAPIToken(ctx(), org.ID, "ci", owner.ID)
	apiImport(t, b, token, "oct.csv", []byte("BilledCost,ChargePeriodStart,ChargePeriodEnd,BillingCurrency,ProviderName,BillingAccountId\n"+
		"5,2026-10-09T00:00:00Z,2026-10-10T00:00:00Z,USD,AWS,acct-1\n"+
		"7,2026-10-10T00:00:00Z,2026-10-11T00:00:00Z,EUR,AWS,acct-1\n"))
	c := b.client(t)
	c.login(owner.Email)
	for _, view := range []string{"range=custom&from=2026-10-11&to=2026-10-31", "range=custom&from=2030-01-01&to=2030-01-31"} {
		d := doc(t, c.get("/dashboard?"+view))
		if d.Find(`[data-testid=empty-range]`).Length() != 1 || d.Find(`[data-testid=daily-table], [data-testid=daily-table-details]`).Length() != 0 {
			t.Errorf("%s: empty message %d, daily tables %d; want the message and no table", view,
				d.Find(`[data-testid=empty-range]`).Length(), d.Find(`[data-testid=daily-table], [data-testid=daily-table-details]`).Length())
		}
		rec := c.get("/dashboard?" + view + "&format=json")
		wantStatus(t, rec, http.StatusOK)
		var got struct{ Charts []json.RawMessage }
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || len(got.Charts) != 0 {
			t.Errorf("%s: charts %s (%v), want none", view, rec.Body, err)
		}
	}
	// The day after the last bill, with spend on the day before it: still
	// a chart, of that one day.
	rec := c.get("/dashboard?range=custom&from=2026-10-10&to=2026-10-12&format=json")
	var got struct{ Charts []json.RawMessage }
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || len(got.Charts) != 1 {
		t.Errorf("a range with EUR spend: charts %s (%v), want EUR's", rec.Body, err)
	}
}

// TestOnePaceEverywhere: a monthly budget's pace is the same line on the
// dashboard's cumulative chart and on the budget's burn-down (one
// function, budget.PaceLine), and its forecast the same number on the
// budget's page and in the API.
func TestOnePaceEverywhere(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, owner, token, res := demoOrg(t, b)
	c := b.client(t)
	c.login(owner.Email)
	all := res.Budgets[0] // "All cloud and LLM spend": monthly, every spend
	var chart struct {
		Charts []struct {
			Currency string
			Days     []string
			Budgets  []struct {
				Name string
				Pace []string
			}
		}
	}
	rec := c.get("/dashboard?range=this-month&chart=cumulative&format=json")
	wantStatus(t, rec, http.StatusOK)
	if err := json.Unmarshal(rec.Body.Bytes(), &chart); err != nil {
		t.Fatal(err)
	}
	var dash []string
	for _, ch := range chart.Charts {
		for _, bl := range ch.Budgets {
			if bl.Name == "Budget: "+all.Name {
				dash = bl.Pace
			}
		}
	}
	var burn struct {
		Series []struct {
			Name string
			Data []json.Number
		}
	}
	page := doc(t, c.get("/budgets/"+itoa(all.ID)))
	if err := json.Unmarshal([]byte(page.Find(`script#burn-chart`).Text()), &burn); err != nil {
		t.Fatal(err)
	}
	var down []string
	for _, s := range burn.Series {
		if s.Name == "Budget, spread over the month" {
			for _, v := range s.Data {
				down = append(down, v.String())
			}
		}
	}
	if len(dash) == 0 || len(dash) > len(down) {
		t.Fatalf("pace on the dashboard %v, on the burn-down %v", dash, down)
	}
	for i := range dash {
		if dash[i] != down[i] {
			t.Fatalf("day %d: the dashboard's pace %s, the burn-down's %s", i+1, dash[i], down[i])
		}
	}

	card := strings.TrimSpace(page.Find(`[data-testid=budget-forecast]`).Text())
	rec = httptest.NewRecorder()
	b.srv.ServeHTTP(rec, apiRequest(http.MethodGet, "/api/v1/budgets/"+itoa(all.ID), token, ""))
	var api struct {
		Status struct{ Forecast *decimal.Decimal }
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &api); err != nil || api.Status.Forecast == nil {
		t.Fatalf("API budget %s (%v)", rec.Body, err)
	}
	if want := quantity.FormatMoney(*api.Status.Forecast, all.Currency); card != want {
		t.Errorf("the budget page's forecast %q, the API's %q", card, want)
	}
}
