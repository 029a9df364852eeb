package web_test

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/store/storetest"
)

// TestDashboardOfManyModelsShowsTopAndOther imports usage of 5,000
// distinct models: the dashboard's chart lays out the 11 that spent most
// and its models table 25, each with one "Other" that says what it sums,
// in the page, the chart's JSON and the CSVs, and every total stays exact.
func TestDashboardOfManyModelsShowsTopAndOther(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	_, token, err := b.st.CreateAPIToken(ctx(), org.ID, "t", owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	const models = 5000
	today := testNow.UTC()
	var file strings.Builder
	file.WriteString("request_id,spend,startTime,model\n")
	total := decimal.Zero
	for i := range models {
		for j := range 2 {
			spend := decimal.New(int64(i%97+1), -3).Add(decimal.New(int64(i), -7))
			day := today.AddDate(0, 0, -(i+j)%20-1).Format(time.DateOnly)
			fmt.Fprintf(&file, "req-%d-%d,%s,%s 10:00:00+00,model-%04d\n", i, j, spend, day, i)
			total = total.Add(spend)
		}
	}
	rec := httptest.NewRecorder()
	b.srv.ServeHTTP(rec, apiRequest(http.MethodPost, "/api/v1/imports?filename=litellm.csv", token, file.String()))
	wantStatus(t, rec, http.StatusCreated)

	c := b.client(t)
	c.login(owner.Email)
	view := "/dashboard?range=custom&from=" + today.AddDate(0, 0, -25).Format(time.DateOnly) + "&to=" + today.Format(time.DateOnly) + "&group=model"
	const other, otherModels = "Other (4989 more models)", "Other (4975 more models)"

	rec = c.get(view + "&format=json")
	wantStatus(t, rec, http.StatusOK)
	var chart struct {
		Charts []struct {
			Series []struct {
				Name        string
				Data        []string
				OtherGroups int `json:"other_groups"`
			}
			Totals []string
		}
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &chart); err != nil || len(chart.Charts) != 1 {
		t.Fatalf("chart: %v, %.300s", err, rec.Body)
	}
	series := chart.Charts[0].Series
	if len(series) != 12 || series[11].Name != other || series[11].OtherGroups != 4989 {
		t.Fatalf("%d series, the last %q (other_groups %d); want 12, the last %q", len(series), series[len(series)-1].Name, series[len(series)-1].OtherGroups, other)
	}
	sumSeries, sumTotals := decimal.Zero, decimal.Zero
	for _, s := range series {
		for _, v := range s.Data {
			sumSeries = sumSeries.Add(decimal.RequireFromString(v))
		}
	}
	for _, v := range chart.Charts[0].Totals {
		sumTotals = sumTotals.Add(decimal.RequireFromString(v))
	}
	if !sumSeries.Equal(total) || !sumTotals.Equal(total) {
		t.Errorf("chart: series add up to %s, daily totals to %s; want %s", sumSeries, sumTotals, total)
	}

	csvRows := func(table string) [][]string {
		t.Helper()
		rec := c.get(view + "&format=csv&table=" + table)
		wantStatus(t, rec, http.StatusOK)
		rows, err := csv.NewReader(rec.Body).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return rows[1:]
	}
	groups, sum := map[string]bool{}, decimal.Zero
	for _, r := range csvRows("daily") {
		groups[r[2]] = true
		sum = sum.Add(decimal.RequireFromString(r[3]))
	}
	if len(groups) != 12 || !groups[other] || !sum.Equal(total) {
		t.Errorf("daily CSV: %d groups (other: %v), sum %s; want 12 with %q, sum %s", len(groups), groups[other], sum, other, total)
	}
	rows, sum := csvRows("models"), decimal.Zero
	for _, r := range rows {
		sum = sum.Add(decimal.RequireFromString(r[6]))
	}
	if len(rows) != 26 || rows[25][0] != otherModels || !sum.Equal(total) {
		t.Errorf("models CSV: %d rows, the last %q, sum %s; want 26, the last %q, sum %s", len(rows), rows[len(rows)-1][0], sum, otherModels, total)
	}

	d := doc(t, c.get(view))
	if n := d.Find(`[data-testid=model-row]`).Length(); n != 26 {
		t.Errorf("models table: %d rows, want 26", n)
	}
	// The daily table names the chart's groups and the same rest: the
	// day, 11 models, Other and the total.
	head := d.Find(`[data-testid=daily-table] thead th`)
	if got := head.Length(); got != 14 || head.Eq(12).Text() != other {
		t.Errorf("daily table: %d columns, the 13th %q; want 14, the 13th %q", got, head.Eq(12).Text(), other)
	}
}
