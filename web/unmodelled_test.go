package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/burnrate/burnrate/store/storetest"
)

// TestOpenAISpendWithoutAModelIsNotCloud: an OpenAI costs export grouped by
// project alone (no line item, so no model) shows in the by-model view as
// "OpenAI — model not billed", apart from cloud spend ("Cloud (not LLM)"),
// and so in the chart's JSON, the CSV and the spend API, with the sums
// unchanged.
func TestOpenAISpendWithoutAModelIsNotCloud(t *testing.T) {
	t.Parallel()
	b := setup(t)
	o, user := storetest.Org(t, b.st, storetest.OrgOpts{})
	_, token, _ := b.st.CreateAPIToken(ctx(), o.ID, "ci", user.ID)
	day := time.Date(testNow.Year(), testNow.Month(), testNow.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, -3)
	costs := "start_time,end_time,amount_value,amount_currency,line_item,project_id,organization_id\n" +
		fmt.Sprintf("%d,%d,12.5,usd,,proj_ml,org-1\n", day.Unix(), day.AddDate(0, 0, 1).Unix()) +
		fmt.Sprintf("%d,%d,2.25,usd,\"gpt-4o-2024-08-06, input\",proj_ml,org-1\n", day.Unix(), day.AddDate(0, 0, 1).Unix())
	apiImport(t, b, token, "openai_costs.csv", []byte(costs))
	cloud := "BilledCost,ChargePeriodStart,ChargePeriodEnd,BillingCurrency,ProviderName,ServiceName,BillingAccountId\n" +
		fmt.Sprintf("40,%s,%s,USD,AWS,Amazon EC2,111\n", day.Format(time.RFC3339), day.AddDate(0, 0, 1).Format(time.RFC3339))
	apiImport(t, b, token, "focus.csv", []byte(cloud))

	c := b.client(t)
	c.login(user.Email)
	var chart struct {
		Charts []struct {
			Series []struct {
				Name string
				Data []string
			}
		}
	}
	rec := c.get("/dashboard?range=7d&group=model&format=json")
	wantStatus(t, rec, http.StatusOK)
	if err := json.Unmarshal(rec.Body.Bytes(), &chart); err != nil || len(chart.Charts) != 1 {
		t.Fatalf("chart %s (%v)", rec.Body, err)
	}
	got := map[string]string{}
	for _, s := range chart.Charts[0].Series {
		for _, v := range s.Data {
			if v != "0" {
				got[s.Name] = v
			}
		}
	}
	want := map[string]string{"OpenAI — model not billed": "12.5", "gpt-4o-2024-08-06": "2.25", "Cloud (not LLM)": "40"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("series %v, want %v", got, want)
	}
	csv := c.get("/dashboard?range=7d&group=model&format=csv&table=daily").Body.String()
	if !strings.Contains(csv, "USD,OpenAI — model not billed,12.5") || !strings.Contains(csv, "USD,Cloud (not LLM),40") {
		t.Errorf("CSV:\n%s", csv)
	}
	rec = httptest.NewRecorder()
	b.srv.ServeHTTP(rec, apiRequest(http.MethodGet, "/api/v1/spend?from="+day.Format(time.DateOnly)+"&to="+day.Format(time.DateOnly)+"&group_by=model", token, ""))
	wantStatus(t, rec, http.StatusOK)
	var api struct {
		Days []struct {
			Groups map[string]string
		}
		Totals map[string]string
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &api); err != nil || len(api.Days) != 1 {
		t.Fatalf("API %s (%v)", rec.Body, err)
	}
	if fmt.Sprint(api.Days[0].Groups) != fmt.Sprint(want) || api.Totals["USD"] != "54.75" {
		t.Errorf("API groups %v, total %v; want %v and 54.75", api.Days[0].Groups, api.Totals, want)
	}
	// Filtered to OpenAI, the view by model has no cloud at all.
	rec = c.get("/dashboard?range=7d&group=model&provider=OpenAI&format=json")
	if strings.Contains(rec.Body.String(), "Cloud (not LLM)") || !strings.Contains(rec.Body.String(), "OpenAI — model not billed") {
		t.Errorf("OpenAI by model: %s", rec.Body)
	}
}
