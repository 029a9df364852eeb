package budget

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

func d(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func loc(t *testing.T, name string) *time.Location {
	t.Helper()
	l, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestDayInOrgTimeZone(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, zone, instant, want string
	}{
		{"UTCMidnight", "UTC", "2026-03-01T00:00:00Z", "2026-03-01"},
		{"NewYorkEveningIsPreviousDay", "America/New_York", "2026-03-01T04:30:00Z", "2026-02-28"},
		{"NewYorkAfterSpringForward", "America/New_York", "2026-03-08T07:30:00Z", "2026-03-08"},
		{"AucklandMorningIsNextDay", "Pacific/Auckland", "2026-01-31T12:00:00Z", "2026-02-01"},
		{"KolkataHalfHourOffset", "Asia/Kolkata", "2026-05-31T18:29:00Z", "2026-05-31"},
		{"KolkataHalfHourOffsetNextDay", "Asia/Kolkata", "2026-05-31T18:30:00Z", "2026-06-01"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			at, _ := time.Parse(time.RFC3339, tt.instant)
			if got := Day(at, loc(t, tt.zone)); !got.Equal(d(tt.want)) {
				t.Fatalf("Day(%s in %s) = %s, want %s", tt.instant, tt.zone, got.Format(time.DateOnly), tt.want)
			}
		})
	}
}

func TestPeriodBounds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		period      Period
		zone, day   string
		first, last string
		start, end  string // instants, RFC 3339 UTC
		hours       float64
	}{
		{"MonthlyUTC", Monthly, "UTC", "2026-02-14", "2026-02-01", "2026-02-28", "2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z", 672},
		{"MonthlyLeapYear", Monthly, "UTC", "2028-02-29", "2028-02-01", "2028-02-29", "2028-02-01T00:00:00Z", "2028-03-01T00:00:00Z", 696},
		{"MonthlyNewYorkAcrossSpringForward", Monthly, "America/New_York", "2026-03-20", "2026-03-01", "2026-03-31", "2026-03-01T05:00:00Z", "2026-04-01T04:00:00Z", 743},
		{"MonthlyBerlinAcrossFallBack", Monthly, "Europe/Berlin", "2026-10-02", "2026-10-01", "2026-10-31", "2026-09-30T22:00:00Z", "2026-10-31T23:00:00Z", 745},
		{"DailyNewYorkSpringForwardIs23Hours", Daily, "America/New_York", "2026-03-08", "2026-03-08", "2026-03-08", "2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z", 23},
		{"DailyNewYorkFallBackIs25Hours", Daily, "America/New_York", "2026-11-01", "2026-11-01", "2026-11-01", "2026-11-01T04:00:00Z", "2026-11-02T05:00:00Z", 25},
		{"DailyAuckland", Daily, "Pacific/Auckland", "2026-07-01", "2026-07-01", "2026-07-01", "2026-06-30T12:00:00Z", "2026-07-01T12:00:00Z", 24},
		{"MonthlyDecemberEndsInNextYear", Monthly, "UTC", "2026-12-31", "2026-12-01", "2026-12-31", "2026-12-01T00:00:00Z", "2027-01-01T00:00:00Z", 744},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			first, last := Bounds(tt.period, d(tt.day))
			if !first.Equal(d(tt.first)) || !last.Equal(d(tt.last)) {
				t.Fatalf("Bounds = %s..%s, want %s..%s", first.Format(time.DateOnly), last.Format(time.DateOnly), tt.first, tt.last)
			}
			start, end := Instants(tt.period, d(tt.day), loc(t, tt.zone))
			if got := start.UTC().Format(time.RFC3339); got != tt.start {
				t.Errorf("start = %s, want %s", got, tt.start)
			}
			if got := end.UTC().Format(time.RFC3339); got != tt.end {
				t.Errorf("end = %s, want %s", got, tt.end)
			}
			if h := end.Sub(start).Hours(); h != tt.hours {
				t.Errorf("period lasts %v hours, want %v", h, tt.hours)
			}
		})
	}
}

func TestProRating(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		period      Period
		amount, day string
		daily, pace string
	}{
		{"MonthlyThirtyDays", Monthly, "3000", "2026-04-10", "100", "1000"},
		{"MonthlyThirtyOneDaysLastDay", Monthly, "3100", "2026-01-31", "100", "3100"},
		{"MonthlyFebruary", Monthly, "2800", "2026-02-01", "100", "100"},
		{"MonthlyLeapFebruary", Monthly, "2900", "2028-02-15", "100", "1500"},
		{"DailyAddsUpFromTheFirst", Daily, "250", "2026-04-10", "250", "2500"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := DailyAmount(tt.period, dec(tt.amount), d(tt.day)); !got.Equal(dec(tt.daily)) {
				t.Errorf("DailyAmount = %s, want %s", got, tt.daily)
			}
			if got := Pace(tt.period, dec(tt.amount), d(tt.day)); !got.Equal(dec(tt.pace)) {
				t.Errorf("Pace = %s, want %s", got, tt.pace)
			}
		})
	}
	// A month's pro-rated days add back up to the amount (to the cent).
	sum := decimal.Zero
	for day := d("2026-01-01"); day.Month() == time.January; day = AddDays(day, 1) {
		sum = sum.Add(DailyAmount(Monthly, dec("1000"), day))
	}
	if !sum.Round(2).Equal(dec("1000")) {
		t.Fatalf("January's daily amounts sum to %s, want 1000", sum)
	}
}

// series makes a day → spend map of n days ending the day before today,
// each spending per, plus today's partial spend.
func series(today time.Time, n int, per, todaySpend string) map[time.Time]decimal.Decimal {
	m := map[time.Time]decimal.Decimal{}
	for i := 1; i <= n; i++ {
		m[AddDays(today, -i)] = dec(per)
	}
	m[today] = dec(todaySpend)
	return m
}

func TestForecastAndRunsOut(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		period   Period
		today    string
		daily    map[time.Time]decimal.Decimal
		amount   string
		spent    string
		rate     string
		daysLeft int
		total    string
		runsOut  string // "" when it does not
		status   Standing
	}{
		{
			name: "MonthlyOnTrack", period: Monthly, today: "2026-04-11",
			daily: series(d("2026-04-11"), 20, "100", "0"), amount: "4000",
			spent: "1000", rate: "100", daysLeft: 20, total: "3000", status: StatusOK,
		},
		{
			name: "MonthlyRunsOutLater", period: Monthly, today: "2026-04-11",
			daily: series(d("2026-04-11"), 20, "100", "0"), amount: "2500",
			spent: "1000", rate: "100", daysLeft: 20, total: "3000", runsOut: "2026-04-25", status: StatusWarn,
		},
		{
			name: "MonthlyAlreadyOver", period: Monthly, today: "2026-04-11",
			daily: series(d("2026-04-11"), 20, "100", "50"), amount: "500",
			spent: "1050", rate: "100", daysLeft: 20, total: "3000", runsOut: "2026-04-05", status: StatusOver,
		},
		{
			name: "TodayAlreadyAboveRunRate", period: Monthly, today: "2026-04-30",
			daily: series(d("2026-04-30"), 29, "10", "400"), amount: "1000",
			spent: "690", rate: "10", daysLeft: 1, total: "690", status: StatusOK,
		},
		{
			name: "FirstOfMonthUsesLastMonthsRate", period: Monthly, today: "2026-05-01",
			daily: series(d("2026-05-01"), 7, "70", "0"), amount: "3100",
			spent: "0", rate: "70", daysLeft: 31, total: "2170", status: StatusOK,
		},
		{
			name: "ShortHistoryCountsMissingDaysAsZero", period: Monthly, today: "2026-04-11",
			daily: series(d("2026-04-11"), 2, "70", "0"), amount: "1000",
			spent: "140", rate: "20", daysLeft: 20, total: "540", status: StatusOK,
		},
		{
			name: "DailyBudgetToday", period: Daily, today: "2026-04-11",
			daily: series(d("2026-04-11"), 7, "120", "30"), amount: "100",
			spent: "30", rate: "120", daysLeft: 1, total: "120", runsOut: "2026-04-11", status: StatusWarn,
		},
		{
			name: "NoSpendNoRunOut", period: Monthly, today: "2026-04-11",
			daily: map[time.Time]decimal.Decimal{}, amount: "100",
			spent: "0", rate: "0", daysLeft: 20, total: "0", status: StatusOK,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			today := d(tt.today)
			f := ForecastPeriod(tt.period, Today(today), tt.daily)
			if !f.Spent.Equal(dec(tt.spent)) {
				t.Errorf("Spent = %s, want %s", f.Spent, tt.spent)
			}
			if !f.Rate.Equal(dec(tt.rate)) {
				t.Errorf("Rate = %s, want %s", f.Rate, tt.rate)
			}
			if f.DaysLeft != tt.daysLeft {
				t.Errorf("DaysLeft = %d, want %d", f.DaysLeft, tt.daysLeft)
			}
			if !f.Total.Equal(dec(tt.total)) {
				t.Errorf("Total = %s, want %s", f.Total, tt.total)
			}
			day, ok := f.RunsOut(dec(tt.amount))
			got := ""
			if ok {
				got = day.Format(time.DateOnly)
			}
			if got != tt.runsOut {
				t.Errorf("RunsOut = %q, want %q", got, tt.runsOut)
			}
			if s := StatusOf(f.Spent, f.Total, dec(tt.amount)); s != tt.status {
				t.Errorf("StatusOf = %s, want %s", s, tt.status)
			}
			if f.Method("USD") == "" {
				t.Error("no method")
			}
		})
	}
}

func TestPastPeriodForecastIsSpend(t *testing.T) {
	t.Parallel()
	today := d("2026-05-03")
	daily := map[time.Time]decimal.Decimal{d("2026-04-01"): dec("10"), d("2026-04-30"): dec("5"), d("2026-05-01"): dec("99")}
	f := ForecastPeriod(Monthly, Basis{Day: d("2026-04-30"), Complete: today}, daily)
	if !f.Spent.Equal(dec("15")) || !f.Total.Equal(dec("15")) || f.DaysLeft != 0 || !f.Rate.IsZero() {
		t.Fatalf("April seen in May: spent %s total %s days left %d rate %s, want 15/15/0/0", f.Spent, f.Total, f.DaysLeft, f.Rate)
	}
}

func TestThresholds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		spent, amount string
		want          []int
		percent       int
	}{
		{"None", "10", "100", nil, 10},
		{"ExactlyHalf", "50", "100", []int{50}, 50},
		{"JustUnderEighty", "79.99", "100", []int{50}, 79},
		{"AllAtHundred", "100", "100", []int{50, 80, 100}, 100},
		{"Over", "250", "100", []int{50, 80, 100}, 250},
		{"Negative", "-5", "100", nil, -5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Crossed(DefaultThresholds, dec(tt.spent), dec(tt.amount)); !slices.Equal(got, tt.want) {
				t.Errorf("Crossed = %v, want %v", got, tt.want)
			}
			if got := Percent(dec(tt.spent), dec(tt.amount)); got != tt.percent {
				t.Errorf("Percent = %d, want %d", got, tt.percent)
			}
		})
	}
}

// TestForecastMethodShowsMoney: the run-rate in the tooltip is money as
// everywhere else, grouped and with its currency.
func TestForecastMethodShowsMoney(t *testing.T) {
	f := Forecast{Rate: dec("2392.04"), RateDays: 7, DaysLeft: 10}
	got := f.Method("USD")
	if !strings.Contains(got, "(2,392.04 USD a day)") {
		t.Errorf("Method = %q", got)
	}
}
