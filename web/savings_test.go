package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/chromedp/chromedp"

	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/pricing"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
	"github.com/burnrate/burnrate/web/browsertest"
)

// hostileResource is a resource id a bill could carry; pages must show it
// as text.
const hostileResource = `i-0abc<img src=x onerror=alert(1)>`

// savingsOrg is an org whose bills hold two savings: an unowned g5.48xlarge
// running around the clock for 9 days (FOCUS, from AWS) and 10 days of
// gpt-4.1 usage (an OpenAI usage export), both imported through the real
// import path. It returns the org, its owner and an API token.
func savingsOrg(t *testing.T, b *bundle, name string) (store.Org, store.User, string) {
	t.Helper()
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{Name: name})
	var focus strings.Builder
	focus.WriteString("BilledCost,EffectiveCost,ChargePeriodStart,ChargePeriodEnd,BillingCurrency,ProviderName,ServiceName," +
		"ServiceCategory,ChargeCategory,SkuMeter,ResourceId,ConsumedQuantity,ConsumedUnit,BillingAccountId\n")
	var usage strings.Builder
	usage.WriteString("start_time_iso,end_time_iso,project_id,num_model_requests,model,input_tokens,output_tokens,input_cached_tokens\n")
	first := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := range 10 {
		d := first.AddDate(0, 0, i)
		if i < 9 {
			fmt.Fprintf(&focus, "390.912,390.912,%s,%s,USD,AWS,Amazon Elastic Compute Cloud,Compute,Usage,USE1-BoxUsage:g5.48xlarge,\"%s\",24,Hours,acct-1\n",
				d.Format(time.RFC3339), d.AddDate(0, 0, 1).Format(time.RFC3339), hostileResource)
		}
		fmt.Fprintf(&usage, "%s,%s,proj_1,50000,gpt-4.1,100000000,20000000,0\n", d.Format(time.RFC3339), d.AddDate(0, 0, 1).Format(time.RFC3339))
	}
	im := ingest.NewImporter(b.st, ingest.PriceTable(pricing.DefaultLLMPrices()), pricing.DefaultCatalog())
	for i, f := range []string{focus.String(), usage.String()} {
		if _, err := im.Import(ctx(), ingest.ImportRequest{Org: org, FileName: fmt.Sprintf("bill-%d.csv", i), Via: "test"},
			strings.NewReader(f)); err != nil {
			t.Fatal(err)
		}
	}
	_, token, err := b.st.CreateAPIToken(ctx(), org.ID, "test", owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	return org, owner, token
}

func TestSavingsPage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, owner, _ := savingsOrg(t, b, "Spendy")
	c := b.client(t)
	c.login(owner.Email)

	rec := c.get("/savings")
	wantStatus(t, rec, http.StatusOK)
	if strings.Contains(rec.Body.String(), "<img src=x") {
		t.Fatal("a resource id from a bill reached the page as HTML")
	}
	d := doc(t, rec)
	if cur, _ := d.Find(`nav a[href="/savings"]`).Attr("aria-current"); cur != "page" {
		t.Errorf("nav entry Savings is not current: %q", cur)
	}
	kinds := map[string]string{}
	d.Find(`[data-testid=finding]`).Each(func(_ int, s *goquery.Selection) {
		k, _ := s.Attr("data-kind")
		kinds[k] = strings.TrimSpace(s.Find(`[data-testid=finding-monthly]`).Text())
	})
	if len(kinds) != 2 || kinds["always-on"] != "11,890.24 USD/month" || kinds["model-routing"] != "3,504.00 USD/month" {
		t.Fatalf("findings = %v", kinds)
	}
	// The two findings are on different spend: the total adds them.
	if got := strings.TrimSpace(d.Find(`[data-testid=savings-total]`).Text()); got != "15,394.24 USD/month" {
		t.Errorf("total = %q", got)
	}
	// The bills end on 2026-11-10: the window shows that day, not the day
	// after (the report's exclusive end).
	if got := d.Find(`[data-testid=savings-window]`).Text(); !strings.Contains(got, "2026-10-12 to 2026-11-10 (") {
		t.Errorf("window = %q, want it to end on the last day of the bills, 2026-11-10", got)
	}
	if v, _ := d.Find(`[data-testid=share-input]`).Attr("value"); v != "40" {
		t.Errorf("share input = %q, want the default 40", v)
	}
	if !strings.Contains(d.Find(`[data-testid=evidence]`).First().Text(), hostileResource) {
		t.Error("the evidence does not name the resource")
	}

	// htmx asks for the results with another share: a fragment, the server's
	// own arithmetic.
	req := httptest.NewRequest(http.MethodGet, "/savings?share=25", nil)
	req.Header.Set("HX-Request", "true")
	rec = c.do(req)
	wantStatus(t, rec, http.StatusOK)
	if strings.Contains(rec.Body.String(), "<html") {
		t.Fatal("htmx got a whole page")
	}
	d = doc(t, rec)
	if got := strings.TrimSpace(d.Find(`[data-kind=model-routing] [data-testid=finding-monthly]`).Text()); got != "2,190.00 USD/month" {
		t.Errorf("routing at 25%% = %q", got)
	}
	if got := d.Find(`[data-kind=model-routing] h4`).Text(); !strings.Contains(got, "Moving 25% of gpt-4.1 requests to gpt-4.1-mini") {
		t.Errorf("routing title = %q", got)
	}

	// Bad input is a message naming the field, not a 500.
	for _, q := range []string{"share=abc", "share=150", "share=1e999999", "commit_discount=100"} {
		rec = c.get("/savings?" + q)
		if rec.Code != http.StatusUnprocessableEntity {
			t.Errorf("%s: status %d", q, rec.Code)
			continue
		}
		field, _, _ := strings.Cut(q, "=")
		if msg := doc(t, rec).Find(`[data-testid=savings-errors]`).Text(); !strings.Contains(msg, field) {
			t.Errorf("%s: message %q does not name the field", q, msg)
		}
	}
}

func TestSavingsPageEmptyOrg(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, owner := storetest.Org(t, b.st, storetest.OrgOpts{Name: "New"})
	c := b.client(t)
	c.login(owner.Email)
	rec := c.get("/savings")
	wantStatus(t, rec, http.StatusOK)
	if doc(t, rec).Find(`[data-testid=savings-empty]`).Length() != 1 {
		t.Fatalf("no empty state:\n%s", rec.Body)
	}
}

func TestAPISavings(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, _, tokenA := savingsOrg(t, b, "Org A")
	orgB, ownerB := storetest.Org(t, b.st, storetest.OrgOpts{Name: "Org B"})
	_, tokenB, err := b.st.CreateAPIToken(ctx(), orgB.ID, "b", ownerB.ID)
	if err != nil {
		t.Fatal(err)
	}

	rec := httptest.NewRecorder()
	b.srv.ServeHTTP(rec, apiRequest(http.MethodGet, "/api/v1/savings?commit_discount=30", tokenA, ""))
	wantStatus(t, rec, http.StatusOK)
	var got struct {
		From, To       string
		CoveredDays    json.RawMessage `json:"covered_days"`
		RoutingShare   json.RawMessage `json:"routing_share"`
		CommitDiscount json.RawMessage `json:"commit_discount"`
		Findings       []struct {
			Kind     string
			Title    string
			Currency string
			Monthly  json.RawMessage `json:"monthly_savings"`
			Priced   bool
			Evidence []struct {
				Resource string
				Model    string
				From, To string
				Amount   json.RawMessage
				Charges  int64
			}
		}
		Totals []struct {
			Currency string
			Amount   json.RawMessage
		}
		Sources []string
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, rec.Body)
	}
	if string(got.RoutingShare) != `"0.4"` || string(got.CommitDiscount) != `"0.3"` || string(got.CoveredDays) != `"10"` {
		t.Errorf("inputs echoed as %s %s %s", got.RoutingShare, got.CommitDiscount, got.CoveredDays)
	}
	if len(got.Findings) != 2 {
		t.Fatalf("findings: %s", rec.Body)
	}
	f := got.Findings[0]
	if f.Kind != "always-on" || string(f.Monthly) != `"11890.24"` || !f.Priced || f.Currency != "USD" {
		t.Errorf("first finding = %+v", f)
	}
	if len(f.Evidence) != 1 || f.Evidence[0].Resource != hostileResource || f.Evidence[0].From != "2026-11-01" ||
		f.Evidence[0].To != "2026-11-09" || string(f.Evidence[0].Amount) != `"3518.21"` || f.Evidence[0].Charges != 9 {
		t.Errorf("evidence = %+v", f.Evidence)
	}
	if r := got.Findings[1]; r.Kind != "model-routing" || string(r.Monthly) != `"3504"` || r.Evidence[0].Model != "gpt-4.1" {
		t.Errorf("routing finding = %+v", r)
	}
	if len(got.Totals) != 1 || got.Totals[0].Currency != "USD" || string(got.Totals[0].Amount) != `"15394.24"` {
		t.Errorf("totals = %+v", got.Totals)
	}
	if len(got.Sources) == 0 {
		t.Error("no price sources")
	}

	// Org B's token sees only org B: nothing.
	rec = httptest.NewRecorder()
	b.srv.ServeHTTP(rec, apiRequest(http.MethodGet, "/api/v1/savings", tokenB, ""))
	wantStatus(t, rec, http.StatusOK)
	if !strings.Contains(rec.Body.String(), `"findings":[]`) || !strings.Contains(rec.Body.String(), `"totals":[]`) ||
		strings.Contains(rec.Body.String(), "gpt-4.1") {
		t.Errorf("org B sees: %s", rec.Body)
	}

	for _, q := range []string{"share=-1", "share=x", "commit_discount=100"} {
		rec = httptest.NewRecorder()
		b.srv.ServeHTTP(rec, apiRequest(http.MethodGet, "/api/v1/savings?"+q, tokenA, ""))
		field, _, _ := strings.Cut(q, "=")
		if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), field) {
			t.Errorf("%s: %d %s", q, rec.Code, rec.Body)
		}
	}
	rec = httptest.NewRecorder()
	b.srv.ServeHTTP(rec, apiRequest(http.MethodGet, "/api/v1/savings", "", ""))
	wantStatus(t, rec, http.StatusUnauthorized)
}

// TestBrowserSavingsShare changes the share in a real browser and sees htmx
// swap in the server's new figure, without leaving the page.
func TestBrowserSavingsShare(t *testing.T) {
	t.Parallel()
	b, url := liveServer(t)
	_, owner, _ := savingsOrg(t, b, "Browser Co")
	bctx := browsertest.New(t, 90*time.Second)
	routing := `[data-kind=model-routing] [data-testid=finding-monthly]`
	err := chromedp.Do(bctx,
		chromedp.Navigate(url+"/login"),
		chromedp.WaitVisible(`input[name=email]`),
		chromedp.SendKeys(`input[name=email]`, owner.Email),
		chromedp.SendKeys(`input[name=password]`, storetest.Password),
		chromedp.Submit(`input[name=password]`),
		chromedp.WaitVisible(`[data-testid=org-switcher]`),
		chromedp.Navigate(url+"/savings"),
		chromedp.WaitVisible(routing),
	)
	if err != nil {
		t.Fatal(err)
	}
	before, err := chromedp.Run(bctx, chromedp.Text(routing))
	if err != nil || before != "3,504.00 USD/month" {
		t.Fatalf("routing at 40%% = %q (%v)", before, err)
	}
	_, err = chromedp.Run(bctx, chromedp.Evaluate[bool](`(() => {
		const el = document.querySelector("[data-testid=share-input]");
		el.value = "25";
		el.dispatchEvent(new Event("change", {bubbles: true}));
		return true;
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	waitCtx, cancel := context.WithTimeout(bctx, 20*time.Second)
	defer cancel()
	for {
		// Read in one step: htmx may swap the node between a query and
		// a read of its text.
		after, err := chromedp.Run(waitCtx, chromedp.Evaluate[string](
			`(document.querySelector(`+quote(routing)+`) || {}).textContent || ""`))
		after = strings.TrimSpace(after)
		if err != nil {
			t.Fatalf("waiting for the new figure: %v", err)
		}
		if after == "2,190.00 USD/month" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	loc, _ := chromedp.Run(bctx, chromedp.Location())
	if !strings.HasSuffix(loc, "/savings") {
		t.Fatalf("the page navigated to %s instead of updating in place", loc)
	}
}

// TestSavingsPageShortBill: one day of bills is too few to scale to a
// month (docs/savings.md): the page says "1 day", shows what that day
// saved with its period and no monthly total; model evidence shows its
// requests and tokens, not a charge count of 0.
func TestSavingsPageShortBill(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{Name: "Short"})
	usage := "start_time_iso,end_time_iso,project_id,num_model_requests,model,input_tokens,output_tokens,input_cached_tokens\n" +
		"2026-11-01T00:00:00Z,2026-11-02T00:00:00Z,proj_1,50000,gpt-4.1,100000000,20000000,0\n"
	im := ingest.NewImporter(b.st, ingest.PriceTable(pricing.DefaultLLMPrices()), pricing.DefaultCatalog())
	if _, err := im.Import(ctx(), ingest.ImportRequest{Org: org, FileName: "usage.csv", Via: "test"}, strings.NewReader(usage)); err != nil {
		t.Fatal(err)
	}
	c := b.client(t)
	c.login(owner.Email)
	rec := c.get("/savings")
	wantStatus(t, rec, http.StatusOK)
	d := doc(t, rec)
	if got := d.Find(`[data-testid=savings-window]`).Text(); !strings.Contains(got, "(1 day with charges)") {
		t.Errorf("window = %q, want \"1 day\"", got)
	}
	if n := d.Find(`[data-testid=savings-total]`).Length(); n != 0 {
		t.Errorf("a monthly total from one day of bills: %q", d.Find(`[data-testid=savings-total]`).Text())
	}
	if d.Find(`[data-testid=savings-none]`).Length() != 0 || d.Find(`[data-testid=savings-none-priced]`).Length() != 1 {
		t.Error("the page says nothing was found above a finding over the observed day")
	}
	f := d.Find(`[data-kind=model-routing]`)
	if got := strings.TrimSpace(f.Find(`[data-testid=finding-observed]`).Text()); got != "115.20 USD over 1 day of bills" {
		t.Errorf("observed saving = %q", got)
	}
	if n := f.Find(`[data-testid=finding-monthly]`).Length(); n != 0 {
		t.Error("the one-day routing finding shows a figure per month")
	}
	var cells []string
	f.Find(`[data-testid=evidence] tbody tr`).First().Find("td").Each(func(_ int, s *goquery.Selection) {
		cells = append(cells, strings.TrimSpace(s.Text()))
	})
	// Resource / model, Type, From, To, Instance-hours, Requests, Tokens, Charges, Amount, note.
	if len(cells) < 9 || cells[0] != "gpt-4.1" || cells[5] != "50k" || cells[6] != "120M" || cells[7] != "—" {
		t.Errorf("model evidence row = %q", cells)
	}
}
