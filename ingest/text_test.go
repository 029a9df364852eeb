package ingest

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestCellsMustBeStorableText feeds cells Postgres text cannot hold: each
// must fail with the file, line and column and a word on the encoding,
// whichever source reads the file and whether a parser uses the cell or not.
func TestCellsMustBeStorableText(t *testing.T) {
	t.Parallel()
	cur := "testdata/exports/aws/test_cur.csv"
	focus := "BilledCost,ChargePeriodStart,ServiceName,BillingCurrency\n" +
		"1,2024-01-01,Compute,USD\n"
	tests := []struct {
		name   string
		in     []byte
		opts   Options
		is     error
		msg    string // exact message; "" = check line, column and has only
		line   int
		column string
		has    []string
	}{
		{name: "Latin1Cell", in: []byte(focus + "2,2024-01-02,Caf\xe9 Cloud,USD\n"), opts: Options{FileName: "latin1.csv"},
			is:  ErrNotUTF8,
			msg: `latin1.csv: line 3, column ServiceName: "Caf\xe9 Cloud" is not valid UTF-8: byte 0xe9 is not UTF-8; the file is probably Latin-1 or Windows-1252: save it as UTF-8 (in Excel: CSV UTF-8)`},
		{name: "NULCell", in: []byte(focus + "2,2024-01-02,Com\x00pute,USD\n"), opts: Options{FileName: "nul.csv"},
			is: ErrNULByte, line: 3, column: "ServiceName", has: []string{`"Com\x00pute" contains a NUL byte`}},
		{name: "NULInCURMidFile", in: withLine(t, cur, 9, func(l string) string {
			return strings.Replace(l, ",Amazon Elastic Compute Cloud,", ",Amazon Elastic\x00Compute Cloud,", 1)
		}), opts: Options{FileName: "test_cur.csv"}, is: ErrNULByte, line: 9, column: "product/ProductName"},
		// No parser reads product/clockSpeed: the Reader checks every cell.
		{name: "CellNoParserReads", in: withLine(t, cur, 4, func(l string) string {
			// The 7th empty cell after product/ProductName is product/clockSpeed.
			return strings.Replace(l, ",Amazon Elastic Compute Cloud,,,,,,,,", ",Amazon Elastic Compute Cloud,,,,,,,\xff,", 1)
		}), opts: Options{FileName: "test_cur.csv"}, is: ErrNotUTF8, line: 4, column: "product/clockSpeed"},
		{name: "TruncatedSequence", in: []byte(focus + "2,2024-01-02,caf\xc3,USD\n"), opts: Options{FileName: "x.csv"},
			is: ErrNotUTF8, line: 3, column: "ServiceName"},
		// Each cell is bad, though side by side their bytes make an "é".
		{name: "RuneSplitAcrossQuotedCells", in: []byte(focus + "2,2024-01-02,\"caf\xc3\",\"\xa9\"\n"), opts: Options{FileName: "x.csv"},
			is: ErrNotUTF8, line: 3, column: "ServiceName"},
		{name: "EncodedSurrogate", in: []byte(focus + "2,2024-01-02,\xed\xa0\x80,USD\n"), opts: Options{FileName: "x.csv"},
			is: ErrNotUTF8, line: 3, column: "ServiceName"},
		// A quoted cell spanning lines is reported on the line of the cell.
		{name: "MultiLineCell", in: []byte(focus + "2,2024-01-02,\"two\nlines \xe9\",USD\n"), opts: Options{FileName: "x.csv"},
			is: ErrNotUTF8, line: 3, column: "ServiceName"},
		{name: "LongCellShownAroundTheByte", in: []byte(focus + "2,2024-01-02," + strings.Repeat("a", 5000) + "\xe9" + strings.Repeat("b", 5000) + ",USD\n"),
			opts: Options{FileName: "x.csv"}, is: ErrNotUTF8, line: 3, column: "ServiceName",
			has: []string{`"…aaaaaaaaaaaaaaaa\xe9bbbbbbbbbbbbbbbbbbbbbbb…" is not valid UTF-8`}},
		{name: "Gzipped", in: gzipBytes(t, []byte(focus+"2,2024-01-02,Caf\xe9,USD\n")), opts: Options{FileName: "x.csv.gz"},
			is: ErrNotUTF8, line: 3, column: "ServiceName"},
		{name: "HeaderNotUTF8", in: []byte("BilledCost,ChargePeriodStart,Co\xfbt\n1,2024-01-01,x\n"), opts: Options{FileName: "h.csv"},
			is:  ErrNotUTF8,
			msg: `h.csv: line 1: header field 3 "Co\xfbt" is not valid UTF-8: byte 0xfb is not UTF-8; the file is probably Latin-1 or Windows-1252: save it as UTF-8 (in Excel: CSV UTF-8)`},
		{name: "UTF16LittleEndianBOM", in: utf16LE("\ufeffBilledCost,ChargePeriodStart\n1,2024-01-01\n"), opts: Options{FileName: "u16.csv"},
			is:  ErrNotUTF8,
			msg: "u16.csv: file is not UTF-8: it starts with the byte-order mark of UTF-16 (little-endian); save it as UTF-8 (in Excel: CSV UTF-8)"},
		{name: "UTF16BigEndianBOM", in: []byte("\xfe\xff\x00B\x00i"), opts: Options{FileName: "u16.csv"},
			is: ErrNotUTF8, has: []string{"UTF-16 (big-endian)"}},
		{name: "UTF32BOM", in: []byte("\xff\xfe\x00\x00B\x00\x00\x00"), opts: Options{FileName: "u32.csv"},
			is: ErrNotUTF8, has: []string{"UTF-32 (little-endian)"}},
		{name: "UTF16WithoutBOM", in: utf16LE("BilledCost,ChargePeriodStart\n1,2024-01-01\n"), opts: Options{FileName: "u16.csv"},
			is: ErrNULByte, has: []string{"u16.csv: line 1: header field 1 ", "contains a NUL byte", "looks like UTF-16 without a byte-order mark"}},
		// A forced source reads the cells through the same Reader.
		{name: "ForcedSource", in: []byte("start_time,end_time,model,input_tokens,output_tokens\n1761523200,1761609600,gpt-4o\x00,1,1\n"),
			opts: Options{FileName: "u.csv", Source: SourceOpenAIUsage, Pricer: testPrices}, is: ErrNULByte, line: 2, column: "model"},
		// The cell is clean text, but its JSON escape decodes to a NUL.
		{name: "NULEscapeInTags", in: []byte("BilledCost,ChargePeriodStart,Tags\n1,2024-09-18 22:00:00,\"{\"\"team\"\": \"\"ml\\u0000\"\"}\"\n"),
			opts: Options{FileName: "focus.csv"}, is: ErrNULByte, line: 2, column: "Tags", has: []string{`\u0000`}},
		{name: "NULEscapeInLabels", in: []byte("usage_start_time,cost,service.description,labels\n" +
			"2026-01-01 00:00:00+00:00,1,Compute Engine,\"[{'key': 'team', 'value': 'a\\u0000'}]\"\n"),
			opts: Options{FileName: "gcp.csv"}, is: ErrNULByte, line: 2, column: "labels"},
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
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *ParseError", err)
			}
			if tt.line != 0 && (pe.Line != tt.line || pe.Column != tt.column) {
				t.Errorf("at line %d column %q, want line %d column %q (%v)", pe.Line, pe.Column, tt.line, tt.column, err)
			}
			for _, h := range tt.has {
				if !strings.Contains(err.Error(), h) {
					t.Errorf("message %q lacks %q", err, h)
				}
			}
		})
	}
}

// TestStorableTextPassesAsIs checks that the guard lets real UTF-8 through
// untouched, escapes that decode to other characters included.
func TestStorableTextPassesAsIs(t *testing.T) {
	t.Parallel()
	in := "\xef\xbb\xbfBilledCost,ChargePeriodStart,ServiceName,Tags,BillingCurrency\n" +
		"1,2024-01-01,Café – 東京 🚀,\"{\"\"team\"\": \"\"r\\u00e9seau\"\"}\",EUR\n"
	rows, _, err := readAll(t, strings.NewReader(in), Options{FileName: "ok.csv"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].ServiceName != "Café – 東京 🚀" || rows[0].Team != "réseau" {
		t.Fatalf("rows = %+v", rows)
	}
}

func TestBadText(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]int{
		"": -1, "plain": -1, "Café 東京": -1, "\x00": 0, "ab\x00": 2, "caf\xe9": 3, "é\xff": 2, "\xed\xa0\x80": 0, "\xc3": 0,
	} {
		if got := badText(s); got != want {
			t.Errorf("badText(%q) = %d, want %d", s, got, want)
		}
	}
}

// utf16LE encodes ASCII s as UTF-16 little-endian (a BOM in s stays one).
func utf16LE(s string) []byte {
	var b []byte
	for _, r := range s {
		b = append(b, byte(r), byte(r>>8))
	}
	return b
}

// TestRecordCheckNamesTheCell: the record is checked in one pass, and a bad
// cell is still named by its line and column, wherever it sits.
func TestRecordCheckNamesTheCell(t *testing.T) {
	t.Parallel()
	head := "BilledCost,ChargePeriodStart,ChargePeriodEnd,BillingCurrency,ServiceName\n"
	for name, tc := range map[string]struct {
		body, column string
	}{
		"last":           {"1,2024-01-01,2024-01-02,USD,ok\n2,2024-01-01,2024-01-02,USD,caf\xe9\n", "ServiceName"},
		"first of empty": {"1,2024-01-01,2024-01-02,USD,\n,2024-01-01,2024-01-02,US\x00D,\n", "BillingCurrency"},
		"quoted":         {"1,2024-01-01,2024-01-02,USD,\"a\"\"b\"\n2,2024-01-01,2024-01-02,USD,\"x\xff\"\n", "ServiceName"},
	} {
		_, _, err := readAll(t, strings.NewReader(head+tc.body), Options{FileName: "f.csv"})
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != 3 || pe.Column != tc.column {
			t.Errorf("%s: err = %v, want line 3 column %s", name, err, tc.column)
		}
	}
	joined := "abcdef"
	if text, ok := recordText([]string{joined[0:2], "", joined[2:3], joined[3:6]}); !ok || text != "abcdef" {
		t.Errorf("side by side: %q, %v", text, ok)
	}
	if _, ok := recordText([]string{joined[0:2], joined[3:6]}); ok {
		t.Error("a gap between cells was taken as one text")
	}
}
