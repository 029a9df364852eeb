package ingest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// focusRows is a small FOCUS file with n data rows (lines 2 … n+1).
func focusRows(n int) string {
	var b strings.Builder
	b.WriteString("BilledCost,ChargePeriodStart,ServiceName,BillingCurrency\n")
	for i := range n {
		fmt.Fprintf(&b, "%d,2024-01-%02d,Compute,USD\n", i+1, i%28+1)
	}
	return b.String()
}

// focusCostLast is focusRows with its cost column last.
func focusCostLast(n int) string {
	var b strings.Builder
	b.WriteString("ServiceName,BillingCurrency,ChargePeriodStart,BilledCost\n")
	for i := range n {
		fmt.Fprintf(&b, "Compute,USD,2024-01-%02d,%d\n", i%28+1, i+1)
	}
	return b.String()
}

// withFileLine returns s with line n (1-based) replaced by edit(line).
func withFileLine(s string, n int, edit func(string) string) []byte {
	lines := strings.Split(s, "\n")
	lines[n-1] = edit(lines[n-1])
	return []byte(strings.Join(lines, "\n"))
}

// TestRecordsMustFitTheHeader: a record with more or fewer fields than the
// header fails with its line, in every source; only the two shapes real
// exports write on purpose get through.
func TestRecordsMustFitTheHeader(t *testing.T) {
	t.Parallel()
	cur := "testdata/exports/aws/test_cur.csv"
	usage := "start_time,end_time,start_time_iso,end_time_iso,project_id,num_model_requests,model,input_tokens,output_tokens\n" +
		"1761523200,1761609600,2025-10-27T00:00:00+00:00,2025-10-28T00:00:00+00:00,proj,1.0,gpt-4o,10,1\n"
	tests := []struct {
		name string
		in   []byte
		opts Options
		msg  string // exact message
		line int
	}{
		// A short record is read only when what it lacks is optional.
		{name: "ShortRowLacksRequired", in: withFileLine(focusCostLast(20), 17, func(l string) string { return l[:strings.LastIndex(l, ",")] }),
			msg: "f.csv: line 17: 3 fields, the header has 4: it stops before column BilledCost, which focus needs; check for a line cut short or a missing comma", line: 17},
		{name: "LongRow", in: withFileLine(focusRows(5), 3, func(l string) string { return strings.Replace(l, "Compute", "Compute, Inc.", 1) }),
			msg: "f.csv: line 3: 5 fields, the header has 4: check for a value with a comma in it that is not in quotes", line: 3},
		// A trailing comma on data rows only is an extra (empty) field:
		// no real export writes one, and a row shifted one to the right by
		// a stray comma looks just the same.
		{name: "TrailingCommaOnRowsOnly", in: withFileLine(focusRows(3), 2, func(l string) string { return l + "," }),
			msg: "f.csv: line 2: 5 fields, the header has 4: check for a value with a comma in it that is not in quotes", line: 2},
		// The koku CUR sample's rows are one field short of its header; a
		// row cut shorter still, before its cost, is caught.
		{name: "CURRowCutShort", in: withLine(t, cur, 12, func(l string) string { return strings.Join(strings.Split(l, ",")[:20], ",") }),
			msg: "f.csv: line 12: 20 fields, the rows above it have 130 (the header has 131): it stops before column lineItem/UnblendedCost, which aws-cur needs; check for a line cut short or a missing comma", line: 12},
		{name: "CURRowLonger", in: withLine(t, cur, 5, func(l string) string { return l + ",x" }),
			msg: "f.csv: line 5: 131 fields, the rows above it have 130 (the header has 131): check for a value with a comma in it that is not in quotes", line: 5},
		// OpenAI empty buckets are the four time columns; anything else
		// short of its tokens is not.
		{name: "OpenAIShortBucket", in: []byte(usage + "1761609600,1761696000,2025-10-28T00:00:00+00:00,2025-10-29T00:00:00+00:00,proj\n"),
			opts: Options{Pricer: testPrices},
			msg:  "f.csv: line 3: 5 fields, the header has 9: it stops before column input_tokens, which openai-usage needs; check for a line cut short or a missing comma", line: 3},
		{name: "OpenAIFourFieldsOtherHeader", in: []byte("project_id,num_model_requests,model,input_tokens,output_tokens,start_time\nproj,1.0,gpt-4o,10\n"),
			opts: Options{Pricer: testPrices},
			msg:  "f.csv: line 2: 4 fields, the header has 6: it stops before column output_tokens, which openai-usage needs; check for a line cut short or a missing comma", line: 2},
		{name: "GenericShortOfCost", in: []byte("Day,Service,Account,Amount\n01.02.2026,s,a\n"),
			opts: Options{Mapping: &Mapping{Date: "Day", Cost: "Amount", Service: "Service", Account: "Account", DefaultCurrency: "EUR", DateFormat: "02.01.2006"}},
			msg:  "f.csv: line 2: 3 fields, the header has 4: it stops before column Amount, which generic needs; check for a line cut short or a missing comma", line: 2},
		{name: "Gzipped", in: gzipBytes(t, withFileLine(focusRows(4), 4, func(l string) string { return l + ",x,y" })),
			msg: "f.csv: line 4: 6 fields, the header has 4: check for a value with a comma in it that is not in quotes", line: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.opts.FileName = "f.csv"
			_, _, err := readAll(t, bytes.NewReader(tt.in), tt.opts)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrFieldCount) {
				t.Errorf("error %q does not wrap ErrFieldCount", err)
			}
			if err.Error() != tt.msg {
				t.Errorf("message\n got: %s\nwant: %s", err, tt.msg)
			}
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line != tt.line {
				t.Errorf("error %#v, want a *ParseError at line %d", err, tt.line)
			}
		})
	}
}

// TestRecordShapesRealExportsWrite keeps the shapes that are not errors.
func TestRecordShapesRealExportsWrite(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		in    string
		opts  Options
		rows  int
		short int
	}{
		// Spreadsheet tools that end every line with a comma end the
		// header with one too: an unnamed empty last column, widths equal.
		{name: "TrailingCommaEverywhere", in: "BilledCost,ChargePeriodStart,BillingCurrency,\n1,2024-01-01,USD,\n2,2024-01-02,USD,\n", rows: 2},
		// OpenAI usage: an empty bucket is its four time columns alone.
		{name: "OpenAIEmptyBucket", in: "start_time,end_time,start_time_iso,end_time_iso,project_id,num_model_requests,model,input_tokens,output_tokens\n" +
			"1761609600,1761696000,2025-10-28T00:00:00+00:00,2025-10-29T00:00:00+00:00\n" +
			"1761523200,1761609600,2025-10-27T00:00:00+00:00,2025-10-28T00:00:00+00:00,proj,1.0,gpt-4o,10,1\n",
			opts: Options{Pricer: testPrices}, rows: 1},
		// Legacy CUR: header names past every row, all tags or cost categories.
		{name: "CURHeaderEndsInTagColumns", in: "lineItem/UsageStartDate,lineItem/UnblendedCost,resourceTags/user:team,costCategory/CostCenter\n" +
			"2026-01-01T00:00:00Z,1\n2026-01-01T00:00:00Z,2\n", rows: 2},
		// A trailing comma on the header alone names no column.
		{name: "TrailingCommaOnHeaderOnly", in: "BilledCost,ChargePeriodStart,BillingCurrency,\n1,2024-01-01,USD\n2,2024-01-02,USD\n", rows: 2},
		// A tool that drops a row's trailing empty cells (an Azure export
		// re-saved): the columns a row lacks are optional, read as empty
		// and counted.
		{name: "ShortRowsLackOptional", in: focusRows(2) + "3,2024-01-03,Compute\n4,2024-01-04\n", rows: 4, short: 2},
		{name: "CURShortOfCurrency", in: "lineItem/UsageStartDate,lineItem/UnblendedCost,lineItem/CurrencyCode\n2026-01-01T00:00:00Z,1\n2026-01-01T00:00:00Z,2,USD\n", rows: 2, short: 1},
		{name: "CUR2ShortOfTags", in: "line_item_usage_start_date,line_item_unblended_cost,resource_tags\n2026-01-01T00:00:00Z,1\n", rows: 1, short: 1},
		{name: "GenericShortOfTag", in: "Day,Amount,Curr,Service,Account,Vendor,Team\n01.02.2026,1,EUR,s,a,v\n", opts: Options{Mapping: genericMapping}, rows: 1, short: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rd, err := Open(strings.NewReader(tt.in), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			rows := 0
			for {
				var row Row
				err := rd.Next(&row)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				rows++
			}
			if rows != tt.rows || rd.ShortRecords() != tt.short {
				t.Fatalf("%d rows, %d short; want %d, %d", rows, rd.ShortRecords(), tt.rows, tt.short)
			}
		})
	}
	// The fixtures with such shapes still read whole (their golden files
	// say so too): every data line of the koku CUR sample is 130 fields.
	rows, _, err := readFile(t, "testdata/exports/aws/test_cur.csv", optsFor("test_cur.csv"))
	if err != nil || len(rows) != 19 {
		t.Fatalf("test_cur.csv: %d rows, %v", len(rows), err)
	}
}

// TestShortRowShiftedValues: a record short of the header because a comma
// went missing has its values under the wrong columns; the error for the
// value that is then wrong says so.
func TestShortRowShiftedValues(t *testing.T) {
	t.Parallel()
	in := withFileLine(focusRows(3), 2, func(string) string { return "2024-01-01,Compute,USD" })
	_, _, err := readAll(t, bytes.NewReader(in), Options{FileName: "f.csv"})
	want := `f.csv: line 2, column ChargePeriodStart: "Compute" is not a date: the line has 3 fields and the header 4: ` +
		`if a comma is missing, the values after it are under the wrong columns`
	if err == nil || err.Error() != want {
		t.Fatalf("error\n got: %v\nwant: %s", err, want)
	}
}
