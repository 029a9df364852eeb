package web_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/budget"
	"github.com/burnrate/burnrate/spend"
	"github.com/burnrate/burnrate/store"
)

// TestDashboardAPIAndSpendDayAgree asks the dashboard's JSON, the spend API
// and spend.Day for the same day of the demo org: each currency's total, and
// each provider's share of it, are the same three times; the day before
// and the month to date that spend.Day reports match the API's.
func TestDashboardAPIAndSpendDayAgree(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner, token, _ := demoOrg(t, b)
	c := b.client(t)
	c.login(owner.Email)
	today := budget.Day(testNow, org.Location())
	day := budget.AddDays(today, -3)
	iso := day.Format(time.DateOnly)

	// The dashboard's chart data for that one day.
	rec := c.get("/dashboard?range=custom&from=" + iso + "&to=" + iso + "&group=provider&format=json")
	wantStatus(t, rec, http.StatusOK)
	var chart struct {
		Charts []struct {
			Currency string
			Days     []string
			Totals   []string
			Series   []struct {
				Name string
				Data []string
			}
		}
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &chart); err != nil {
		t.Fatal(err)
	}
	dash := map[string]map[string]decimal.Decimal{} // currency → provider → amount
	dashTotal := map[string]decimal.Decimal{}
	for _, ch := range chart.Charts {
		if len(ch.Days) != 1 || ch.Days[0] != iso {
			t.Fatalf("dashboard %s days = %v, want [%s]", ch.Currency, ch.Days, iso)
		}
		dashTotal[ch.Currency] = decimal.RequireFromString(ch.Totals[0])
		dash[ch.Currency] = map[string]decimal.Decimal{}
		for _, s := range ch.Series {
			dash[ch.Currency][s.Name] = decimal.RequireFromString(s.Data[0])
		}
	}

	// The API, from the first of the month (for the month to date) to the day.
	monthStart := time.Date(day.Year(), day.Month(), 1, 0, 0, 0, 0, time.UTC)
	if budget.DaysBetween(monthStart, day) < 1 {
		monthStart = budget.AddDays(day, -1) // the day before is still needed
	}
	rec = httptest.NewRecorder()
	b.srv.ServeHTTP(rec, apiRequest(http.MethodGet, "/api/v1/spend?from="+monthStart.Format(time.DateOnly)+"&to="+iso+"&group_by=provider", token, ""))
	wantStatus(t, rec, http.StatusOK)
	var api struct {
		Days []struct {
			Date, Currency string
			Groups         map[string]string
		}
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &api); err != nil {
		t.Fatal(err)
	}
	apiDay := map[string]map[string]decimal.Decimal{}
	apiTotal, apiBefore, apiMonth := map[string]decimal.Decimal{}, map[string]decimal.Decimal{}, map[string]decimal.Decimal{}
	before := budget.AddDays(day, -1).Format(time.DateOnly)
	for _, d := range api.Days {
		for g, v := range d.Groups {
			amount := decimal.RequireFromString(v)
			switch d.Date {
			case iso:
				if apiDay[d.Currency] == nil {
					apiDay[d.Currency] = map[string]decimal.Decimal{}
				}
				apiDay[d.Currency][g] = amount
				apiTotal[d.Currency] = apiTotal[d.Currency].Add(amount)
			case before:
				apiBefore[d.Currency] = apiBefore[d.Currency].Add(amount)
			}
			if d.Date >= time.Date(day.Year(), day.Month(), 1, 0, 0, 0, 0, time.UTC).Format(time.DateOnly) {
				apiMonth[d.Currency] = apiMonth[d.Currency].Add(amount)
			}
		}
	}

	rep, err := spend.Day(ctx(), b.st, org.ID, day, store.DimProvider, budget.EndOf(day))
	if err != nil {
		t.Fatal(err)
	}
	if len(apiTotal) != 2 || len(dashTotal) != 2 {
		t.Fatalf("currencies: api %v, dashboard %v; want USD and EUR", apiTotal, dashTotal)
	}
	seen := 0
	for _, cur := range rep.Currencies {
		if cur.Spent.IsZero() {
			continue
		}
		seen++
		if !cur.Spent.Equal(apiTotal[cur.Currency]) || !cur.Spent.Equal(dashTotal[cur.Currency]) {
			t.Errorf("%s on %s: spend.Day %s, API %s, dashboard %s", cur.Currency, iso, cur.Spent, apiTotal[cur.Currency], dashTotal[cur.Currency])
		}
		if !cur.DayBefore.Equal(apiBefore[cur.Currency]) {
			t.Errorf("%s the day before: spend.Day %s, API %s", cur.Currency, cur.DayBefore, apiBefore[cur.Currency])
		}
		if !cur.Month.MonthToDate.Equal(apiMonth[cur.Currency]) {
			t.Errorf("%s month to date: spend.Day %s, API %s", cur.Currency, cur.Month.MonthToDate, apiMonth[cur.Currency])
		}
		if len(cur.Groups) != len(apiDay[cur.Currency]) {
			t.Errorf("%s providers: spend.Day %v, API %v", cur.Currency, cur.Groups, apiDay[cur.Currency])
		}
		for _, g := range cur.Groups {
			if !g.Amount.Equal(apiDay[cur.Currency][g.Group]) || !g.Amount.Equal(dash[cur.Currency][spend.GroupName(g.Group)]) {
				t.Errorf("%s %s: spend.Day %s, API %s, dashboard %s", cur.Currency, g.Group, g.Amount, apiDay[cur.Currency][g.Group], dash[cur.Currency][g.Group])
			}
		}
	}
	if seen != 2 {
		t.Fatalf("spend.Day has %d currencies with spend on %s, want 2: %+v", seen, iso, rep.Currencies)
	}
}
