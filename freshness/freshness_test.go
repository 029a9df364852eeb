package freshness_test

import (
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/budget"
	"github.com/burnrate/burnrate/freshness"
	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/store"
)

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// mapOf is per spent on each day from from to to.
func mapOf(from, to, per string) map[time.Time]decimal.Decimal {
	m := map[time.Time]decimal.Decimal{}
	for d := day(from); !d.After(day(to)); d = d.AddDate(0, 0, 1) {
		m[d] = dec(per)
	}
	return m
}

// through is a source as store.DataThrough lists it.
func through(source, provider, instant string) store.SourceThrough {
	return store.SourceThrough{Source: source, Provider: provider, BillingAccount: "acct", Through: at(instant), LastImport: at(instant)}
}

// TestBasis: what a forecast on today, or a report of a day, may rest on.
func TestBasis(t *testing.T) {
	t.Parallel()
	org := store.Org{ID: 1, TimeZone: "UTC"}
	now := at("2026-12-16T09:30:00Z")
	today := day("2026-12-16")
	tests := []struct {
		name     string
		sources  []store.SourceThrough
		scope    freshness.Scope
		complete string // the first incomplete day of the basis on today
		withheld string // a substring, "" for none
		late     string // a substring, "" for none
	}{
		{name: "NoSourcesNothingToSay", complete: "2026-12-16"},
		{name: "EveryoneCurrent", sources: []store.SourceThrough{
			through("aws-cur", "AWS", "2026-12-16T00:00:00Z"), through("openai-costs", "OpenAI", "2026-12-16T06:00:00Z")},
			complete: "2026-12-16"},
		{name: "CURADayBehindIsNormal", sources: []store.SourceThrough{
			through("aws-cur", "AWS", "2026-12-15T00:00:00Z"), through("openai-costs", "OpenAI", "2026-12-16T06:00:00Z")},
			complete: "2026-12-15"},
		{name: "CURThreeDaysBehindIsLate", sources: []store.SourceThrough{
			through("aws-cur", "AWS", "2026-12-13T00:00:00Z"), through("openai-costs", "OpenAI", "2026-12-16T06:00:00Z")},
			complete: "2026-12-13", late: "AWS through Sat 12 Dec"},
		{name: "LateButOutOfScope", sources: []store.SourceThrough{
			through("aws-cur", "AWS", "2026-12-13T00:00:00Z"), through("openai-costs", "OpenAI", "2026-12-16T06:00:00Z")},
			scope: freshness.Scope{Provider: "OpenAI"}, complete: "2026-12-16"},
		{name: "GoneSourceIsNamedNotWaitedFor", sources: []store.SourceThrough{
			through("aws-cur", "AWS", "2026-10-01T00:00:00Z"), through("openai-costs", "OpenAI", "2026-12-16T06:00:00Z")},
			complete: "2026-12-16", late: "AWS through Wed 30 Sep"},
		{name: "WeeksOldIsWithheld", sources: []store.SourceThrough{through("aws-cur", "AWS", "2026-11-01T00:00:00Z")},
			complete: "2026-12-16", withheld: "No data since Sat 31 Oct 2026"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := freshness.Build(org, now, tt.sources, nil)
			b := r.Current(tt.scope)
			if !b.Day.Equal(today) || b.Complete.Format(time.DateOnly) != tt.complete {
				t.Errorf("basis %s, first incomplete %s; want %s, %s", b.Day.Format(time.DateOnly), b.Complete.Format(time.DateOnly),
					today.Format(time.DateOnly), tt.complete)
			}
			if (tt.withheld == "") != (b.Withheld == "") || !strings.Contains(b.Withheld, tt.withheld) {
				t.Errorf("withheld %q, want %q", b.Withheld, tt.withheld)
			}
			if (tt.late == "") != (b.Late == "") || !strings.Contains(b.Late, tt.late) {
				t.Errorf("late %q, want %q", b.Late, tt.late)
			}
		})
	}
}

// TestForecastRestsOnCompleteDays: with one source a day behind, the
// run-rate is of the seven days before its last, and the days after count
// at the run-rate or what they spent, whichever is more, not as zeros.
func TestForecastRestsOnCompleteDays(t *testing.T) {
	t.Parallel()
	org := store.Org{ID: 1, TimeZone: "UTC"}
	r := freshness.Build(org, at("2026-12-16T09:30:00Z"), []store.SourceThrough{through("aws-cur", "AWS", "2026-12-15T00:00:00Z")}, nil)
	spend := mapOf("2026-12-01", "2026-12-14", "100")
	spend[day("2026-12-15")] = dec("30") // what arrived of yesterday so far
	naive := budget.ForecastPeriod(budget.Monthly, budget.Today(day("2026-12-16")), spend)
	fc := budget.ForecastPeriod(budget.Monthly, r.Current(freshness.Scope{}), spend)
	if !fc.Rate.Equal(dec("100")) || !fc.Total.Equal(dec("3100")) || fc.Actual != 14 {
		t.Errorf("forecast %s at %s a day (%d actual days), want 3,100 at 100", fc.Total, fc.Rate, fc.Actual)
	}
	if !naive.Total.LessThan(fc.Total) {
		t.Errorf("the forecast counting yesterday's partial spend as a day (%s) is not below the one that waits (%s)", naive.Total, fc.Total)
	}
	if !strings.Contains(fc.Method("USD"), "to Mon 14 Dec") {
		t.Errorf("method %q does not name the last complete day", fc.Method("USD"))
	}
}

// TestDayNote: whether a day's spend is in.
func TestDayNote(t *testing.T) {
	t.Parallel()
	org := store.Org{ID: 1, TimeZone: "America/New_York"}
	r := freshness.Build(org, at("2026-12-16T14:00:00Z"), []store.SourceThrough{
		through("aws-cur", "AWS", "2026-12-15T05:00:00Z"),         // the end of 14 Dec in New York
		through("openai-costs", "OpenAI", "2026-12-16T05:00:00Z"), // the end of 15 Dec
	}, nil)
	n := r.Day(freshness.Scope{}, day("2026-12-15"))
	if n.NoData || len(n.Missing) != 1 || n.Missing[0].Provider != "AWS" || n.Missing[0].LastDay(r.Loc).Format(time.DateOnly) != "2026-12-14" {
		t.Errorf("15 Dec: %+v, want AWS missing, through 14 Dec", n)
	}
	n = r.Day(freshness.Scope{Provider: "AWS"}, day("2026-12-15"))
	if !n.NoData {
		t.Errorf("15 Dec of AWS: %+v, want no data", n)
	}
	if n := r.Day(freshness.Scope{Provider: "OpenAI"}, day("2026-12-15")); n.NoData || len(n.Missing) != 0 {
		t.Errorf("15 Dec of OpenAI: %+v, want complete", n)
	}
}

// TestConnectionHealth: a connection fails, stalls, or is fine.
func TestConnectionHealth(t *testing.T) {
	t.Parallel()
	now := at("2026-12-16T12:00:00Z")
	ran := now.Add(-time.Hour)
	since := now.Add(-5 * time.Hour)
	tests := []struct {
		name    string
		c       store.Connection
		through time.Time
		want    freshness.Health
	}{
		{"Fine", store.Connection{Kind: "openai", LastStatus: "ok", LastRunAt: &ran}, now.Add(-3 * time.Hour), freshness.HealthOK},
		{"Failing", store.Connection{Kind: "openai", LastStatus: "failed", LastRunAt: &ran, FailingSince: &since, LastFix: "paste a key"},
			now.Add(-3 * time.Hour), freshness.HealthFailing},
		{"Stalled", store.Connection{Kind: "openai", LastStatus: "ok", LastRunAt: &ran}, now.Add(-48 * time.Hour), freshness.HealthStalled},
		{"PausedIsNotAProblem", store.Connection{Kind: "openai", Paused: true, LastStatus: "failed"}, time.Time{}, freshness.HealthPaused},
		{"NewIsNotLateYet", store.Connection{Kind: "aws-s3", CreatedAt: now.Add(-time.Hour), LastStatus: "ok", LastRunAt: &ran},
			time.Time{}, freshness.HealthNew},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			j := freshness.Judge(tt.c, tt.through, nil, now)
			if j.Health != tt.want {
				t.Errorf("health %s, want %s", j.Health, tt.want)
			}
			if tt.want == freshness.HealthFailing && (!j.Since.Equal(since) || !j.NeedsPerson) {
				t.Errorf("failing since %s (needs a person: %v)", j.Since, j.NeedsPerson)
			}
		})
	}
}

// TestEveryFormatHasALag: the table of expected lags has a row for every
// format the importer reads.
func TestEveryFormatHasALag(t *testing.T) {
	t.Parallel()
	for _, src := range ingest.Sources() {
		found := false
		for _, k := range freshness.Kinds {
			found = found || k.Source == string(src)
		}
		if !found {
			t.Errorf("no expected lag for %s", src)
		}
	}
}
