package ingest

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
)

// withLine returns the file with line n (1-based) replaced by edit(line).
func withLine(t *testing.T, path string, n int, edit func(string) string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	lines[n-1] = edit(lines[n-1])
	return []byte(strings.Join(lines, "\n"))
}

func TestErrors(t *testing.T) {
	t.Parallel()
	cur := "testdata/exports/aws/test_cur.csv"
	curBytes, err := os.ReadFile(cur)
	if err != nil {
		t.Fatal(err)
	}
	gz := gzipBytes(t, curBytes)
	badNumber := withLine(t, cur, 11, func(l string) string {
		return strings.Replace(l, ",0.009611264845382462,", `,"12,5",`, 1) // lineItem/UnblendedCost
	})
	unbalanced := withLine(t, cur, 6, func(l string) string {
		return strings.Replace(l, ",Amazon Elastic Compute Cloud,", `,"Amazon Elastic "Compute" Cloud,`, 1)
	})
	unterminated := withLine(t, cur, 15, func(l string) string {
		return strings.Replace(l, ",Amazon Elastic Compute Cloud,", `,"Amazon Elastic Compute Cloud,`, 1)
	})
	usageNoPrice := []byte("start_time,end_time,project_id,num_model_requests,model,input_tokens,output_tokens,input_cached_tokens\n" +
		"1761523200,1761609600,proj_ml,3.0,gpt-4o-2024-08-06,100,10,0\n" +
		"1761523200,1761609600,proj_ml,1.0,gpt-9-turbo,100,10,0\n")
	usageNoModel := []byte("start_time,end_time,project_id,num_model_requests,input_tokens,output_tokens\n" +
		"1761523200,1761609600,proj_ml,3.0,100,10\n")

	tests := []struct {
		name string
		in   []byte
		opts Options
		is   error
		msg  string // exact message; "" = only check errors.Is
		has  []string
	}{
		{name: "BadNumberMidFile", in: badNumber, opts: Options{FileName: "test_cur.csv"}, is: ErrNotNumber,
			msg: `test_cur.csv: line 11, column lineItem/UnblendedCost: "12,5" is not a number`},
		{name: "HugeExponentCost", in: withLine(t, cur, 11, func(l string) string {
			return strings.Replace(l, ",0.009611264845382462,", `,1e999999999,`, 1)
		}), opts: Options{FileName: "test_cur.csv"}, is: ErrOutOfRange,
			msg: `test_cur.csv: line 11, column lineItem/UnblendedCost: "1e999999999" is out of range: money must be below 1,000,000,000,000,000`},
		{name: "UnbalancedQuote", in: unbalanced, opts: Options{FileName: "test_cur.csv"}, is: ErrSyntax,
			msg: `test_cur.csv: line 6, character 460: malformed CSV: unbalanced quotes: a quoted field has a stray or missing " (write "" for a quote inside a quoted field)`},
		{name: "UnterminatedQuote", in: unterminated, opts: Options{FileName: "test_cur.csv"}, is: ErrSyntax,
			msg: `test_cur.csv: line 15: malformed CSV: unbalanced quotes: the quoted field starting on line 15 is not closed properly`},
		{name: "TruncatedGzip", in: gz[:len(gz)/2], opts: Options{FileName: "cur.csv.gz"}, is: ErrTruncatedGzip,
			has: []string{"cur.csv.gz: line ", "gzip data is truncated", "the file ends early"}},
		{name: "TruncatedGzipHeader", in: gz[:6], opts: Options{FileName: "cur.csv.gz"}, is: ErrTruncatedGzip},
		{name: "CorruptGzip", in: corrupt(gz), opts: Options{FileName: "x.gz"}, is: ErrCorruptGzip},
		{name: "ZeroBytes", in: nil, opts: Options{FileName: "upload.csv"}, is: ErrEmpty, msg: "upload.csv: file is empty: 0 bytes"},
		{name: "EmptyGzip", in: gzipBytes(t, nil), opts: Options{FileName: "upload.csv.gz"}, is: ErrEmpty},
		{name: "OnlyNewlines", in: []byte("\n\n\r\n"), opts: Options{FileName: "upload.csv"}, is: ErrEmpty},
		{name: "OnlyBOM", in: []byte("\xef\xbb\xbf"), opts: Options{FileName: "upload.csv"}, is: ErrEmpty},
		{name: "HeaderOnly", in: mustRead(t, "testdata/exports/azure/empty_frame.csv"), opts: Options{FileName: "empty_frame.csv"},
			is: ErrHeaderOnly, msg: "empty_frame.csv: file has a header but no data rows"},
		{name: "UnknownHeader", in: []byte("when,how much\n2025-01-01,3\n"), opts: Options{FileName: "mystery.csv"}, is: ErrUnknownFormat,
			has: []string{`mystery.csv: unrecognised header (starts "when", "how much"). It is not an AWS CUR (no lineItem/UnblendedCost column), not an AWS CUR 2.0 export`,
				"not a Google Cloud billing export (it needs cost, usage_start_time and service.description)", "not an Oracle Cloud cost report",
				"and not an OpenRouter activity export (no generation_id with cost_total). If it is one of these, choose its format; otherwise map its columns"}},
		{name: "UnknownForcedSource", in: curBytes, opts: Options{Source: "aws"}, is: ErrUnknownSource,
			has: []string{`unknown source "aws": choose one of aws-cur, aws-cur2,`, "generic"}},
		{name: "ForcedSourceMissingColumn", in: curBytes, opts: Options{FileName: "test_cur.csv", Source: SourceGCPBilling}, is: ErrMissingColumn,
			msg: "test_cur.csv: missing required column: cost (needed by gcp-billing)"},
		{name: "ModelWithoutPrice", in: usageNoPrice, opts: Options{FileName: "usage.csv", Pricer: testPrices}, is: ErrNoPrice,
			msg: `usage.csv: line 3, column model: "gpt-9-turbo" has no price in the LLM price table: add a price override for it, or remove the rows`},
		{name: "UsageWithoutModel", in: usageNoModel, opts: Options{FileName: "usage.csv", Pricer: testPrices}, is: ErrNoModel},
		{name: "UsageWithoutPricer", in: usageNoPrice, opts: Options{FileName: "usage.csv"}, is: ErrNoPricer},
		{name: "UTF16", in: []byte("\xff\xfei\x00d\x00"), opts: Options{FileName: "u16.csv"}, is: ErrNotUTF8},
		{name: "BadDate", in: withLine(t, cur, 3, func(l string) string {
			return strings.Replace(l, "2018-06-01 00:00:00,2018-07-01", "June 1st,2018-07-01", 1)
		}), opts: Options{FileName: "test_cur.csv"}, is: ErrNotDate,
			msg: `test_cur.csv: line 3, column lineItem/UsageStartDate: "June 1st" is not a date`},
		{name: "GenericWithoutMapping", in: curBytes, opts: Options{Source: SourceGeneric}, is: ErrBadMapping},
		{name: "GenericMissingColumn", in: curBytes, opts: Options{Mapping: &Mapping{Date: "Day", Cost: "Amount", DefaultCurrency: "USD"}}, is: ErrMissingColumn},
		{name: "RecordTooLarge", in: append([]byte("a,b\n\"x"), bytes.Repeat([]byte("y"), 1<<20)...),
			opts: Options{FileName: "big.csv", Source: SourceAWSCUR, MaxRecordBytes: 64 << 10}, is: ErrMissingColumn},
		{name: "RunawayQuote", in: append(append([]byte(strings.SplitN(string(curBytes), "\n", 2)[0]+"\n"), []byte("\"x")...), bytes.Repeat([]byte("y\n"), 1<<19)...),
			opts: Options{FileName: "big.csv", MaxRecordBytes: 128 << 10}, is: ErrRecordTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := readAll(t, bytes.NewReader(tt.in), tt.opts)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, tt.is) {
				t.Errorf("error %q does not wrap %v", err, tt.is)
			}
			if tt.msg != "" && err.Error() != tt.msg {
				t.Errorf("message\n got: %s\nwant: %s", err, tt.msg)
			}
			for _, h := range tt.has {
				if !strings.Contains(err.Error(), h) {
					t.Errorf("message %q lacks %q", err, h)
				}
			}
		})
	}
}

// corrupt breaks the CRC-32 in a gzip trailer: every row decodes, and the
// error must still surface at the end instead of a silent EOF.
func corrupt(gz []byte) []byte {
	out := bytes.Clone(gz)
	out[len(out)-8] ^= 0xff
	return out
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseErrorFields(t *testing.T) {
	t.Parallel()
	in := withLine(t, "testdata/exports/aws/test_cur.csv", 11, func(l string) string {
		return strings.Replace(l, ",0.009611264845382462,", `,"12,5",`, 1)
	})
	rows, _, err := readAll(t, bytes.NewReader(in), Options{FileName: "test_cur.csv"})
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error %T is not a *ParseError", err)
	}
	if pe.File != "test_cur.csv" || pe.Line != 11 || pe.Column != "lineItem/UnblendedCost" || pe.Value != "12,5" {
		t.Errorf("ParseError = %+v", pe)
	}
	if len(rows) != 9 {
		t.Errorf("rows before the error = %d, want 9", len(rows))
	}
}

// TestParseErrorQuotesLongValuesShort: a megabyte-long bad cell is named by
// its start and length, never copied whole into the message (which the
// import history stores and Postgres carries).
func TestParseErrorQuotesLongValuesShort(t *testing.T) {
	long := strings.Repeat("9", 1<<20)
	msg := (&ParseError{File: "huge.csv", Line: 3, Column: "cost", Value: long, Err: ErrNotNumber}).Error()
	want := `huge.csv: line 3, column cost: "999999999999999999999999…" (1048576 bytes) is not a number`
	if msg != want {
		t.Fatalf("message = %.200q, want %q", msg, want)
	}
}
