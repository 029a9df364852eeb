package web_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/burnrate/burnrate/app"
	"github.com/burnrate/burnrate/budget"
	"github.com/burnrate/burnrate/store/storetest"
	"github.com/burnrate/burnrate/web"
)

// TestDashboardOnAwkwardDays runs the demo org's dashboard, budgets, spend
// API and digest preview on the days where calendar arithmetic goes wrong:
// the 1st (of a month that starts on a Sunday, whose yesterday is last
// month), the last day of a 28-day February, a leap day, the 31st, and 1
// January (whose yesterday is last year). On each, the demo tells its
// story (one budget over, one running out before the month ends), the
// headline names the right yesterday, and every page answers.
func TestDashboardOnAwkwardDays(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, now string }{
		{"FirstOfAMonthStartingOnSunday", "2026-03-01T08:00:00Z"},
		{"LastDayOfFebruary", "2026-02-28T23:30:00Z"},
		{"LeapDay", "2024-02-29T12:00:00Z"},
		{"ThirtyFirst", "2026-03-31T06:00:00Z"},
		{"NewYearsDay", "2027-01-01T00:30:00Z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			now, err := time.Parse(time.RFC3339, tc.now)
			if err != nil {
				t.Fatal(err)
			}
			st := storetest.New(t)
			b := &bundle{st: st, srv: web.NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)), testApp(st, app.Config{}),
				web.Config{Now: func() time.Time { return now }})}
			org, owner, token, _ := demoOrgAt(t, b, now)
			today := budget.Day(now, org.Location())
			yesterday := budget.AddDays(today, -1)
			c := b.client(t)
			c.login(owner.Email)

			rec := c.get("/dashboard")
			wantStatus(t, rec, http.StatusOK)
			d := doc(t, rec)
			statuses := map[string]string{}
			d.Find(`[data-testid=headline-budgets] [data-testid=budget-card]`).Each(func(i int, s *goquery.Selection) {
				st, _ := s.Attr("data-status")
				statuses[strings.TrimSpace(s.Find("a").First().Text())] = st
				if i == 0 && st != "over" {
					t.Errorf("first budget %q is %s, want the over one first", s.Text(), st)
				}
			})
			if statuses["Support bot"] != "over" {
				t.Errorf("the support bot's daily budget is %q, want over (budgets %v)", statuses["Support bot"], statuses)
			}
			if got, want := d.Find(`[data-testid=dod-days]`).Text(), "yesterday ("+yesterday.Format("Mon 2 Jan")+")"; !strings.HasPrefix(got, want) {
				t.Errorf("day over day compares %q, want %q…", got, want)
			}

			// The monthly budget runs out before its month ends (or, on
			// the month's last day, already has).
			for _, path := range []string{"/budgets", "/dashboard?range=this-month", "/dashboard?range=last-month", "/dashboard?range=90d&chart=cumulative"} {
				wantStatus(t, c.get(path), http.StatusOK)
			}
			var monthly []string
			doc(t, c.get("/budgets")).Find(`[data-testid=budget-card]`).Each(func(_ int, s *goquery.Selection) {
				if strings.TrimSpace(s.Find("header a").Text()) == "Support bot LLM" {
					monthly = append(monthly, s.Find(`[data-testid=budget-status]`).Text(), s.Find(`[data-testid=budget-runs-out]`).Text())
				}
			})
			lastDay := budget.DaysInMonth(today) == today.Day()
			switch {
			case len(monthly) != 2:
				t.Errorf("no card of the support bot's monthly budget on /budgets")
			case monthly[0] != "Over budget" && monthly[0] != "Forecast over":
				t.Errorf("the monthly budget is %q, want over or forecast over", monthly[0])
			case lastDay && !strings.Contains(strings.ToLower(monthly[1]), "used up on"):
				t.Errorf("on the month's last day the monthly budget says %q, want it used up", monthly[1])
			case !lastDay && monthly[0] == "Forecast over" && !strings.Contains(monthly[1], "before the period ends"):
				t.Errorf("the monthly budget %q: %q, want it to run out before the month ends", monthly[0], monthly[1])
			}

			// The spend API's month so far and the digest of yesterday.
			month := time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, time.UTC)
			rec = c.do(apiRequest(http.MethodGet, "/api/v1/spend?from="+month.Format(time.DateOnly)+"&to="+today.Format(time.DateOnly), token, ""))
			wantStatus(t, rec, http.StatusOK)
			var got struct {
				Days []struct {
					Date string `json:"date"`
				} `json:"days"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || len(got.Days) == 0 ||
				got.Days[0].Date != month.Format(time.DateOnly) || got.Days[len(got.Days)-1].Date != today.Format(time.DateOnly) {
				t.Errorf("spend of the month so far: %v %.300s", err, rec.Body)
			}
			rec = c.get("/settings/digest/preview")
			wantStatus(t, rec, http.StatusOK)
			if !strings.Contains(rec.Body.String(), yesterday.Format(time.DateOnly)) {
				t.Errorf("the digest preview is not of yesterday, %s", yesterday.Format(time.DateOnly))
			}
		})
	}
}
