package ingest

import (
	"context"
	"testing"
	"time"

	"github.com/burnrate/burnrate/store"
)

// TestImportRecordsHowFarItReaches: an import records, per provider and
// billing account, the days its rows fall on and how far they reach: the
// newest end of a row of at most a day (a month's fee, dated by its start,
// does not claim the month), a request counting as its whole day in the
// org's time zone.
func TestImportRecordsHowFarItReaches(t *testing.T) {
	t.Parallel()
	b := setupImport(t)
	focus := "BilledCost,ChargePeriodStart,ChargePeriodEnd,BillingCurrency,ProviderName,ServiceName,BillingAccountId\n" +
		"10,2026-11-01T00:00:00Z,2026-11-02T00:00:00Z,USD,AWS,Amazon EC2,111\n" +
		"10,2026-11-03T00:00:00Z,2026-11-03T06:00:00Z,USD,AWS,Amazon EC2,111\n" +
		"99,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z,USD,AWS,Support,111\n" +
		"5,2026-11-02T00:00:00Z,2026-11-03T00:00:00Z,USD,AWS,Amazon S3,222\n" +
		"7,2026-11-20T00:00:00Z,2026-12-01T00:00:00Z,USD,Google Cloud,Compute,333\n"
	res, err := b.importFile(t, "focus.csv", []byte(focus))
	if err != nil {
		t.Fatal(err)
	}
	if res.DataThrough == nil || !res.DataThrough.Equal(time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("data_through = %v, want the latest of its extents (Google Cloud's, dated by its start)", res.DataThrough)
	}
	ts, err := b.st.DataThrough(context.Background(), b.org.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"AWS 111": "2026-11-03T06:00:00Z", "AWS 222": "2026-11-03T00:00:00Z", "Google Cloud 333": "2026-11-20T00:00:00Z"}
	if len(ts) != len(want) {
		t.Fatalf("extents %+v, want %v", ts, want)
	}
	for _, x := range ts {
		if got := x.Through.UTC().Format(time.RFC3339); x.Source != "focus" || want[x.Provider+" "+x.BillingAccount] != got {
			t.Errorf("%s %s %s through %s, want %s", x.Source, x.Provider, x.BillingAccount, got, want[x.Provider+" "+x.BillingAccount])
		}
	}

	// A newer file reaches further; removed, it takes its reach with it.
	newer := "BilledCost,ChargePeriodStart,ChargePeriodEnd,BillingCurrency,ProviderName,ServiceName,BillingAccountId\n" +
		"10,2026-11-10T00:00:00Z,2026-11-11T00:00:00Z,USD,AWS,Amazon EC2,111\n"
	res2, err := b.importFile(t, "focus-newer.csv", []byte(newer))
	if err != nil {
		t.Fatal(err)
	}
	reach := func() string {
		t.Helper()
		ts, err := b.st.DataThrough(context.Background(), b.org.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range ts {
			if x.Provider == "AWS" && x.BillingAccount == "111" {
				return x.Through.UTC().Format(time.RFC3339)
			}
		}
		return "none"
	}
	if got := reach(); got != "2026-11-11T00:00:00Z" {
		t.Errorf("AWS 111 reaches %s after the newer file, want 2026-11-11", got)
	}
	if _, err := b.st.RemoveImport(context.Background(), b.org.ID, res2.ID, 0, "cli"); err != nil {
		t.Fatal(err)
	}
	if got := reach(); got != "2026-11-03T06:00:00Z" {
		t.Errorf("AWS 111 reaches %s once the newer file is removed, want the older file's 2026-11-03T06:00", got)
	}

	// A request log: its last request's day, in the org's zone.
	tokyo, err := b.st.UpdateOrg(context.Background(), b.org.ID, store.OrgUpdate{Name: b.org.Name, TimeZone: "Asia/Tokyo",
		Currency: b.org.Currency, TeamTagKey: b.org.TeamTagKey})
	if err != nil {
		t.Fatal(err)
	}
	b.org = tokyo
	log := "request_id,call_type,api_key,spend,total_tokens,prompt_tokens,completion_tokens,startTime,endTime,model,custom_llm_provider,user,team_id\n" +
		"r1,acompletion,k,0.01,20,10,10,2026-11-05 20:00:00+00,2026-11-05 20:00:02+00,gpt-4o,openai,u,t\n"
	if _, err := b.importFile(t, "litellm_spend_logs.csv", []byte(log)); err != nil {
		t.Fatal(err)
	}
	ts, err = b.st.DataThrough(context.Background(), b.org.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range ts {
		if x.Source == string(SourceLiteLLMSpend) && !x.Through.Equal(time.Date(2026, 11, 6, 15, 0, 0, 0, time.UTC)) {
			t.Errorf("the log reaches %s, want the end of 6 Nov in Tokyo", x.Through.UTC())
		}
		if x.Source == string(SourceLiteLLMSpend) {
			return
		}
	}
	t.Errorf("no extent of the log in %+v", ts)
}
