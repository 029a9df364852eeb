package web_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/app"
	"github.com/burnrate/burnrate/digest"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
	"github.com/burnrate/burnrate/web"
)

// TestWeeksOldDataIsSaid: an org whose only bill is October's CUR-like
// export, looked at on 16 December, is told so everywhere instead of
// zeros and "on track": the dashboard names the newest day and gives no
// forecast, the spend API says how far the source reaches and that it is
// late, the budgets API withholds the forecast, and the digest of
// yesterday says its spend is not known.
func TestWeeksOldDataIsSaid(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, time.December, 16, 9, 30, 0, 0, time.UTC)
	st := storetest.New(t)
	srv := web.NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)), testApp(st, app.Config{}),
		web.Config{Now: func() time.Time { return now }})
	b := &bundle{st: st, srv: srv}
	org, owner := storetest.Org(t, st, storetest.OrgOpts{Name: "Acme ML"})
	_, token, err := st.CreateAPIToken(ctx(), org.ID, "ci", owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	var csv strings.Builder
	csv.WriteString("BilledCost,ChargePeriodStart,ChargePeriodEnd,BillingCurrency,ProviderName,ServiceName,BillingAccountId\n")
	for d := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC); d.Month() == time.October; d = d.AddDate(0, 0, 1) {
		fmt.Fprintf(&csv, "100,%s,%s,USD,AWS,Amazon EC2,111122223333\n", d.Format(time.RFC3339), d.AddDate(0, 0, 1).Format(time.RFC3339))
	}
	res := apiImport(t, b, token, "october.csv", []byte(csv.String()))
	if res["data_through"] != "2026-11-01T00:00:00Z" {
		t.Errorf("the import's data_through = %v, want 2026-11-01T00:00:00Z", res["data_through"])
	}
	if _, err := st.CreateBudget(ctx(), org.ID, owner.ID, store.BudgetInput{Name: "Cloud", Amount: decimal.NewFromInt(5000),
		Currency: "USD", Period: "monthly", Thresholds: []int{50, 80, 100}}); err != nil {
		t.Fatal(err)
	}

	c := b.client(t)
	c.login(owner.Email)
	d := doc(t, c.get("/dashboard"))
	head := d.Find(`[data-testid=headline]`)
	if got := strings.TrimSpace(head.Find(`[data-testid=yesterday-spend]`).Text()); got != "No data yet" {
		t.Errorf("yesterday = %q, want no number", got)
	}
	if got := head.Find(`[data-testid=yesterday-missing]`).Text(); got != "No data for yesterday yet — newest: AWS through Sat 31 Oct" {
		t.Errorf("yesterday's note = %q", got)
	}
	if got := head.Find(`[data-testid=forecast]`).Text(); got != "No forecast" {
		t.Errorf("forecast = %q, want none", got)
	}
	if got := head.Find(`[data-testid=forecast-withheld]`).Text(); !strings.Contains(got, "No data since Sat 31 Oct 2026") {
		t.Errorf("forecast note = %q", got)
	}
	if strings.Contains(strings.ToLower(head.Text()), "on track") {
		t.Errorf("the headline says on track on data seven weeks old:\n%s", head.Text())
	}
	if st, _ := head.Find(`[data-testid=budget-card]`).Attr("data-status"); st != "stale" {
		t.Errorf("the budget's standing = %q, want stale", st)
	}
	if got := d.Find(`[data-testid=source-late]`).Length(); got != 1 {
		t.Errorf("%d late sources listed, want AWS", got)
	}

	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, apiRequest(http.MethodGet, "/api/v1/spend?from=2026-10-01&to=2026-12-15", token, ""))
	wantStatus(t, rec, http.StatusOK)
	var spendBody struct {
		Totals      map[string]string
		DataThrough []struct {
			Provider    string    `json:"provider"`
			Source      string    `json:"source"`
			DataThrough time.Time `json:"data_through"`
			LastDay     string    `json:"last_day"`
			Late        bool      `json:"late"`
			Accounts    []struct {
				ID string `json:"billing_account"`
			} `json:"accounts"`
		} `json:"data_through"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &spendBody); err != nil {
		t.Fatal(err)
	}
	if len(spendBody.DataThrough) != 1 {
		t.Fatalf("data_through = %s", rec.Body)
	}
	if s := spendBody.DataThrough[0]; s.Provider != "AWS" || s.Source != "focus" || !s.DataThrough.Equal(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)) ||
		s.LastDay != "2026-10-31" || !s.Late || len(s.Accounts) != 1 || s.Accounts[0].ID != "111122223333" {
		t.Errorf("data_through = %+v", s)
	}

	rec = httptest.NewRecorder()
	srv.ServeHTTP(rec, apiRequest(http.MethodGet, "/api/v1/budgets", token, ""))
	wantStatus(t, rec, http.StatusOK)
	var budgets struct {
		Budgets []struct {
			Status struct {
				Forecast  *string `json:"forecast"`
				RunsOutOn *string `json:"runs_out_on"`
				Standing  string  `json:"standing"`
				DataNote  string  `json:"data_note"`
			} `json:"status"`
		} `json:"budgets"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &budgets); err != nil || len(budgets.Budgets) != 1 {
		t.Fatalf("budgets = %s (%v)", rec.Body, err)
	}
	if s := budgets.Budgets[0].Status; s.Forecast != nil || s.RunsOutOn != nil || s.Standing != "stale" || !strings.Contains(s.DataNote, "No data since") {
		t.Errorf("budget status = %+v, want no forecast, stale, and why", s)
	}

	dg, err := digest.Build(ctx(), st, org, digest.Yesterday(now, org.Location()), now)
	if err != nil {
		t.Fatal(err)
	}
	text := digest.Text(dg, "http://burnrate.test")
	if !dg.Data.NoData || !strings.Contains(digest.Subject(dg), "no data yet for yesterday") ||
		!strings.Contains(text, "No data for Tue 15 Dec yet: newest AWS through Sat 31 Oct") ||
		!strings.Contains(text, "AWS (focus) is late: through Sat 31 Oct") || strings.Contains(text, "Spent 0.00") {
		t.Errorf("digest %q:\n%s", digest.Subject(dg), text)
	}
}
