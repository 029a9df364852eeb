package web_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/burnrate/burnrate/store/storetest"
)

// apiImport posts body to /api/v1/imports as name and decodes the answer.
func apiImport(t *testing.T, b *bundle, token, name string, body []byte) map[string]any {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/api/v1/imports?filename="+name, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "text/csv")
	rec := httptest.NewRecorder()
	b.srv.ServeHTTP(rec, req)
	wantStatus(t, rec, http.StatusCreated)
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// apiSpendOf gets /api/v1/spend with query and decodes it.
func apiSpendOf(t *testing.T, b *bundle, token, query string) (groups map[string]bool, totals map[string]string, basis string) {
	t.Helper()
	rec := httptest.NewRecorder()
	b.srv.ServeHTTP(rec, apiRequest(http.MethodGet, "/api/v1/spend"+query, token, ""))
	wantStatus(t, rec, http.StatusOK)
	var body struct {
		Basis string `json:"basis"`
		Days  []struct {
			Groups map[string]string `json:"groups"`
		} `json:"days"`
		Totals map[string]string `json:"totals"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	groups = map[string]bool{}
	for _, d := range body.Days {
		for g := range d.Groups {
			groups[g] = true
		}
	}
	return groups, body.Totals, body.Basis
}

// TestOneProviderOneName: OpenAI's own export says "OpenAI", LiteLLM's log
// says "openai"; the API, the dashboard's filters, drivers and movers show
// one provider, and a filter or a budget typed either way matches it.
func TestOneProviderOneName(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	_, token, _ := b.st.CreateAPIToken(ctx(), org.ID, "ci", owner.ID)
	today := testNow.UTC()
	var usage, daily strings.Builder
	usage.WriteString("start_time_iso,end_time_iso,project_id,num_model_requests,model,input_tokens,output_tokens\n")
	daily.WriteString("date,team_id,api_key,model,custom_llm_provider,prompt_tokens,completion_tokens,spend,api_requests\n")
	for i := 1; i <= 10; i++ {
		d := time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, -i)
		fmt.Fprintf(&usage, "%s,%s,proj_1,3,gpt-4o,%d,1000\n", d.Format(time.RFC3339), d.AddDate(0, 0, 1).Format(time.RFC3339), 100000*i)
		fmt.Fprintf(&daily, "%s,team_1,hash_1,gpt-4o,openai,100,50,%d.5,2\n", d.Format(time.DateOnly), i)
	}
	if res := apiImport(t, b, token, "completions_usage.csv", []byte(usage.String())); res["source"] != "openai-usage" {
		t.Fatalf("usage import = %v", res)
	}
	if res := apiImport(t, b, token, "litellm_daily.csv", []byte(daily.String())); res["source"] != "litellm-daily" {
		t.Fatalf("daily import = %v", res)
	}

	from, to := today.AddDate(0, 0, -10).Format(time.DateOnly), today.Format(time.DateOnly)
	groups, all, _ := apiSpendOf(t, b, token, "?from="+from+"&to="+to+"&group_by=provider")
	if len(groups) != 1 || !groups["OpenAI"] {
		t.Fatalf("/api/v1/spend providers = %v, want OpenAI alone", groups)
	}
	for _, spelling := range []string{"openai", "OpenAI", "open_ai"} {
		if _, got, _ := apiSpendOf(t, b, token, "?from="+from+"&to="+to+"&provider="+spelling); got["USD"] != all["USD"] || got["USD"] == "" {
			t.Errorf("provider=%s: totals %v, want %v", spelling, got, all)
		}
	}

	c := b.client(t)
	c.login(owner.Email)
	rec := c.get("/dashboard?range=30d&group=provider")
	wantStatus(t, rec, http.StatusOK)
	d := doc(t, rec)
	var options []string
	d.Find(`[data-testid=filter-provider] option`).Each(func(_ int, s *goquery.Selection) {
		if v, _ := s.Attr("value"); v != "" {
			options = append(options, v)
		}
	})
	if strings.Join(options, ",") != "OpenAI" {
		t.Errorf("provider filter offers %v, want OpenAI alone", options)
	}
	d.Find(`[data-testid=driver-row]`).Each(func(_ int, s *goquery.Selection) {
		if p := s.Find("td").First().Text(); p != "OpenAI" {
			t.Errorf("driver row provider %q", p)
		}
	})
	movers := d.Find(`[data-testid=mover-row]`)
	if movers.Length() == 0 {
		t.Error("no movers")
	}
	movers.Each(func(_ int, s *goquery.Selection) {
		if p := s.Find("td").First().Text(); p != "OpenAI" {
			t.Errorf("mover row provider %q", p)
		}
	})

	// A budget typed "openai" is stored as, and matches, OpenAI.
	rec = c.post("/budgets", map[string][]string{"name": {"LLM"}, "amount": {"100"}, "period": {"monthly"}, "provider": {"openai"}})
	wantStatus(t, rec, http.StatusSeeOther)
	bs, err := b.st.Budgets(ctx(), org.ID)
	if err != nil || len(bs) != 1 || bs[0].Scope.Provider != "OpenAI" {
		t.Fatalf("budgets = %+v, %v", bs, err)
	}
}

// azureExport is an Azure EA cost details file for November 2025 with rows
// of (ChargeType, PricingModel, cost).
func azureExport(rows ...[3]string) []byte {
	var b strings.Builder
	b.WriteString("BillingAccountId,BillingPeriodStartDate,SubscriptionId,Date,MeterCategory,MeterName,ChargeType,PricingModel,Quantity,UnitOfMeasure,CostInBillingCurrency,BillingCurrencyCode\n")
	for i, r := range rows {
		fmt.Fprintf(&b, "8611537,11/01/2025,sub-1,11/%02d/2025,Virtual Machines,NC24ads A100 v4,%s,%s,24,1 Hour,%s,USD\n", 3+i, r[0], r[1], r[2])
	}
	return []byte(b.String())
}

// TestSpendCostBasis: an Azure month imported as actual cost and as
// amortized cost; the API and the dashboard show billed cost by default
// and the amortized view on ?basis=amortized, never the two added.
func TestSpendCostBasis(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	_, token, _ := b.st.CreateAPIToken(ctx(), org.ID, "ci", owner.ID)
	actual := apiImport(t, b, token, "actual.csv", azureExport(
		[3]string{"Usage", "OnDemand", "10"}, [3]string{"Usage", "Reservation", "0"}, [3]string{"Purchase", "Reservation", "300"}))
	amortized := apiImport(t, b, token, "amortized.csv", azureExport(
		[3]string{"Usage", "OnDemand", "10"}, [3]string{"Usage", "Reservation", "8"}, [3]string{"UnusedReservation", "Reservation", "2"}))
	if actual["cost_basis"] != "billed" || amortized["cost_basis"] != "amortized" || amortized["replaced_rows"] != float64(0) {
		t.Fatalf("imports: %v / %v", actual, amortized)
	}
	q := "?from=2025-11-01&to=2025-11-30"
	for query, want := range map[string][2]string{
		"":                  {"billed", "310"},
		"&basis=billed":     {"billed", "310"},
		"&basis=amortized":  {"amortized", "20"},
		"&cost=effective":   {"amortized", "20"}, // the parameter's older name
		"&group_by=service": {"billed", "310"},
	} {
		_, totals, basis := apiSpendOf(t, b, token, q+query)
		if basis != want[0] || totals["USD"] != want[1] {
			t.Errorf("%q: basis %q, totals %v; want %s %s", query, basis, totals, want[0], want[1])
		}
	}
	rec := httptest.NewRecorder()
	b.srv.ServeHTTP(rec, apiRequest(http.MethodGet, "/api/v1/spend"+q+"&basis=effective", token, ""))
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "basis") {
		t.Errorf("basis=effective: %d %s", rec.Code, rec.Body)
	}

	c := b.client(t)
	c.login(owner.Email)
	for query, want := range map[string]string{"": "billed", "&basis=amortized": "amortized"} {
		rec := c.get("/dashboard?range=custom&from=2025-11-01&to=2025-11-30" + query)
		wantStatus(t, rec, http.StatusOK)
		d := doc(t, rec)
		if got, _ := d.Find(`[data-testid=filter-basis] option[selected]`).Attr("value"); got != want {
			t.Errorf("%q: basis control shows %q, want %q", query, got, want)
		}
		total := "310"
		if want == "amortized" {
			total = "20"
		}
		if text := d.Find(`[data-testid=daily-table]`).Text(); !strings.Contains(text, total) {
			t.Errorf("%q: daily table lacks %s: %s", query, total, strings.Join(strings.Fields(text), " "))
		}
	}
}
