package ingest

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

// testNow is the clock the date-bound tests run at: a year after it is
// 2027-06-15T12:00:00Z.
func testNow() time.Time { return time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC) }

// TestDatesOutOfRange puts a date before 2000 or more than a year after the
// clock in each way a source reads dates: each fails with line and column.
func TestDatesOutOfRange(t *testing.T) {
	t.Parallel()
	gcp := "usage_start_time,usage_end_time,cost,service.description,invoice.month\n" +
		"2026-01-01 00:00:00+00:00,2026-01-01 01:00:00+00:00,1,Compute Engine,202601\n"
	cur := "testdata/exports/aws/test_cur.csv"
	tests := []struct {
		name   string
		in     []byte
		opts   Options
		msg    string // exact message; "" = check line and column
		line   int
		column string
	}{
		{name: "GCPBefore2000", in: []byte(gcp + "1970-01-01 00:00:00+00:00,1970-01-01 01:00:00+00:00,1,Compute Engine,202601\n"),
			msg: `f.csv: line 3, column usage_start_time: "1970-01-01 00:00:00+00:00" is before 2000: dates from 2000-01-01 to 2027-06-15 are accepted`},
		{name: "GCPEndYearsAhead", in: []byte(gcp + "2026-01-01 00:00:00+00:00,2999-01-01 00:00:00+00:00,1,Compute Engine,202601\n"),
			msg: `f.csv: line 3, column usage_end_time: "2999-01-01 00:00:00+00:00" is more than a year from today: dates from 2000-01-01 to 2027-06-15 are accepted`},
		{name: "GCPInvoiceMonth", in: []byte(gcp + "2026-01-01 00:00:00+00:00,2026-01-01 01:00:00+00:00,1,Compute Engine,199912\n"),
			line: 3, column: "invoice.month"},
		{name: "OneSecondBefore2000", in: []byte(gcp + "1999-12-31 23:59:59+00:00,2000-01-01 00:00:00+00:00,1,Compute Engine,202601\n"),
			line: 3, column: "usage_start_time"},
		{name: "JustOverAYear", in: []byte(gcp + "2027-06-15 12:00:01+00:00,2027-06-15 13:00:00+00:00,1,Compute Engine,202601\n"),
			line: 3, column: "usage_start_time"},
		{name: "CURUsageStart", in: withLine(t, cur, 3, func(l string) string {
			return strings.Replace(l, "2018-06-01 00:00:00,2018-07-01", "1970-01-01 00:00:00,2018-07-01", 1)
		}), line: 3, column: "lineItem/UsageStartDate"},
		{name: "CURBillingPeriod", in: withLine(t, cur, 6, func(l string) string {
			return strings.Replace(l, "2018-06-01T00:00:00Z,2018-07-01T00:00:00Z", "1999-06-01T00:00:00Z,2018-07-01T00:00:00Z", 1)
		}), line: 6, column: "bill/BillingPeriodStartDate"},
		{name: "CURTimeInterval", in: []byte("identity/TimeInterval,lineItem/UsageStartDate,lineItem/UnblendedCost\n" +
			"1990-01-01T00:00:00Z/1990-01-01T01:00:00Z,,1\n"), line: 2, column: "identity/TimeInterval"},
		{name: "FOCUSChargePeriodEnd", in: []byte("BilledCost,ChargePeriodStart,ChargePeriodEnd\n1,2024-01-01,2124-01-01\n"),
			line: 2, column: "ChargePeriodEnd"},
		{name: "FOCUSBillingPeriod", in: []byte("BilledCost,ChargePeriodStart,BillingPeriodStart\n1,2024-01-01,1900-01-01\n"),
			line: 2, column: "BillingPeriodStart"},
		{name: "AzureSlashDate", in: []byte("Date,CostInBillingCurrency,BillingCurrencyCode\n09/21/2023,1,EUR\n01/01/1990,1,EUR\n"),
			line: 3, column: "Date"},
		// A count in the date column, read as Unix seconds, lands in 1973.
		{name: "OpenAIUnixSeconds", in: []byte("start_time,end_time,model,input_tokens,output_tokens\n100000000,100086400,gpt-4o,1,1\n"),
			opts: Options{Pricer: testPrices}, line: 2, column: "start_time"},
		{name: "AnthropicUsage", in: []byte("starting_at,ending_at,model,uncached_input_tokens,output_tokens\n2099-01-01T00:00:00Z,2099-01-02T00:00:00Z,claude-sonnet-4-5-20250929,1,1\n"),
			opts: Options{Pricer: testPrices}, line: 2, column: "starting_at"},
		{name: "LiteLLMDaily", in: []byte("date,spend,api_requests,model\n1999-12-31,1,1,gpt-4o\n"), line: 2, column: "date"},
		{name: "OpenRouter", in: []byte("generation_id,created_at,cost_total,model_permaslug\ngen-1,1980-06-28 03:46:57.713,0.1,openai/gpt-4o\n"),
			line: 2, column: "created_at"},
		{name: "GenericLayout", in: []byte("Day,Amount,Curr,Service,Account,Vendor,Team\n01.01.1970,1,EUR,s,a,v,t\n"),
			opts: Options{Mapping: genericMapping}, line: 2, column: "Day"},
		{name: "GenericAutoDetect", in: []byte("Day,Amount,Curr\n2999-01-01,1,EUR\n"),
			opts: Options{Mapping: &Mapping{Date: "Day", Cost: "Amount", Currency: "Curr"}}, line: 2, column: "Day"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.opts.FileName, tt.opts.Now = "f.csv", testNow
			_, _, err := readAll(t, bytes.NewReader(tt.in), tt.opts)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrDateRange) {
				t.Errorf("error %q does not wrap ErrDateRange", err)
			}
			if tt.msg != "" && err.Error() != tt.msg {
				t.Errorf("message\n got: %s\nwant: %s", err, tt.msg)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *ParseError", err)
			}
			if tt.line != 0 && (pe.Line != tt.line || pe.Column != tt.column) {
				t.Errorf("at line %d column %q, want line %d column %q (%v)", pe.Line, pe.Column, tt.line, tt.column, err)
			}
		})
	}
}

// TestDatesAtTheBounds accepts the first instant of 2000 and the last one
// within a year of the clock, and follows the clock it is given.
func TestDatesAtTheBounds(t *testing.T) {
	t.Parallel()
	in := "BilledCost,ChargePeriodStart,ChargePeriodEnd\n" +
		"1,2000-01-01T00:00:00Z,2000-01-02T00:00:00Z\n" +
		"1,2027-06-15T11:00:00Z,2027-06-15T12:00:00Z\n"
	rows, _, err := readAll(t, strings.NewReader(in), Options{FileName: "f.csv", Now: testNow})
	if err != nil || len(rows) != 2 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	// A day earlier, the second row is more than a year ahead.
	dayBefore := func() time.Time { return testNow().AddDate(0, 0, -1) }
	_, _, err = readAll(t, strings.NewReader(in), Options{FileName: "f.csv", Now: dayBefore})
	var pe *ParseError
	if !errors.Is(err, ErrDateRange) || !errors.As(err, &pe) || pe.Line != 3 || pe.Column != "ChargePeriodStart" {
		t.Fatalf("with the clock a day earlier: %v", err)
	}
}

// TestRowDatesBackstop covers the Reader's own check on a row's dates,
// which holds whichever way a parser produced them.
func TestRowDatesBackstop(t *testing.T) {
	t.Parallel()
	r := &Reader{file: "f.csv", line: 7, ctx: rowCtx{date: boundsAt(testNow())}}
	row := &Row{ChargePeriodStart: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), BillingPeriodStart: time.Date(1999, 12, 1, 0, 0, 0, 0, time.UTC)}
	err := r.checkDates(row)
	const want = "f.csv: line 7: the billing period start 1999-12-01 is before 2000: dates from 2000-01-01 to 2027-06-15 are accepted"
	if !errors.Is(err, ErrDateRange) || err.Error() != want {
		t.Fatalf("error %v, want %s", err, want)
	}
	row.BillingPeriodStart = time.Time{} // unset: nothing to check
	if err := r.checkDates(row); err != nil {
		t.Fatal(err)
	}
}
