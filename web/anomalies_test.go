package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/quantity"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestUnusualDaysAreTheFewThatMatter: a range with a dozen unusual days
// lists the seven that cost most beyond the usual, costliest first, and
// links to a page of all of them; the CSV keeps them all.
func TestUnusualDaysAreTheFewThatMatter(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	_, token, _ := b.st.CreateAPIToken(ctx(), org.ID, "ci", owner.ID)
	var csv strings.Builder
	csv.WriteString("BilledCost,ChargePeriodStart,ChargePeriodEnd,BillingCurrency,ProviderName,ServiceName,BillingAccountId\n")
	end := time.Date(testNow.Year(), testNow.Month(), testNow.Day(), 0, 0, 0, 0, time.UTC)
	spikes := 0
	for i := 89; i >= 1; i-- {
		d := end.AddDate(0, 0, -i)
		cost := 100
		if i%7 == 3 && i < 80 { // a dozen spikes after a week of bills, each larger than the one before
			spikes++
			cost = 300 + 40*spikes
		}
		fmt.Fprintf(&csv, "%d,%s,%s,USD,AWS,Amazon EC2,1\n", cost, d.Format(time.RFC3339), d.AddDate(0, 0, 1).Format(time.RFC3339))
	}
	apiImport(t, b, token, "spiky.csv", []byte(csv.String()))
	c := b.client(t)
	c.login(owner.Email)
	d := doc(t, c.get("/dashboard?range=90d"))
	rows := d.Find(`[data-testid=anomalies] [data-testid=anomaly-row]`)
	if rows.Length() != 7 {
		t.Fatalf("%d unusual days listed, want the 7 that matter", rows.Length())
	}
	var impacts []decimal.Decimal
	rows.Find(`[data-testid=anomaly-impact]`).Each(func(_ int, s *goquery.Selection) {
		v, err := quantity.Money.ParseHuman("impact", strings.TrimSuffix(strings.TrimSpace(s.Text()), " USD"))
		if err != nil {
			t.Fatal(err)
		}
		impacts = append(impacts, v)
	})
	for i := 1; i < len(impacts); i++ {
		if impacts[i].GreaterThan(impacts[i-1]) {
			t.Fatalf("unusual days not costliest first: %v", impacts)
		}
	}
	if want := decimal.NewFromInt(int64(300 + 40*spikes - 100)); !impacts[0].Equal(want) {
		t.Errorf("the first costs %s beyond the usual, want the largest spike's %s", impacts[0], want)
	}
	link := d.Find(`[data-testid=all-anomalies]`)
	href, _ := link.Attr("href")
	if !strings.Contains(link.Text(), fmt.Sprintf("Show all %d", spikes)) || !strings.HasPrefix(href, "/dashboard/anomalies?") {
		t.Fatalf("show all = %q (%s)", link.Text(), href)
	}
	rec := c.get(href)
	wantStatus(t, rec, http.StatusOK)
	if n := doc(t, rec).Find(`[data-testid=anomaly-row]`).Length(); n != spikes {
		t.Errorf("the page of all lists %d, want %d", n, spikes)
	}
	rec = c.get("/dashboard?range=90d&format=csv&table=anomalies")
	if n := strings.Count(strings.TrimSpace(rec.Body.String()), "\n"); n != spikes {
		t.Errorf("the CSV has %d unusual days, want all %d", n, spikes)
	}
}
