package ingest

import (
	"bufio"
	"encoding/csv"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// csvInputs are records of every shape: plain, quoted, quotes doubled,
// fields over several lines, CRLF, empty lines, a lone \r before the end,
// bare and unbalanced quotes, and a line longer than the read buffer.
var csvInputs = []string{
	"a,b,c\n1,2,3\n",
	"a,b,c\r\n1,,3\r\n\r\n\n4,5,6",
	"a,\"b,c\",d\n\"x\"\"y\",,\"\"\n",
	"a,b\n\"two\nlines\",x\n\"three\r\nlines\r\nhere\",y\nz,w\n",
	"a,b\n1,2\r",
	"a,b\n1,x\"y\n",
	"a,b\n\"1\"x,2\n",
	"a,b\n\"open,2\n3,4\n",
	"a,b\n1,\"2\"\n\"3\",4",
	",\n,,\n\r\n",
	"a,b\n" + strings.Repeat("x", 70000) + ",\"" + strings.Repeat("y", 70000) + "\"\n",
	"\"\"\n\"\",\"\"\n",
	"a\rb,c\n",
	"caf\xc3,\xa9,\"caf\xc3\",\"\xa9\"\n",
	"\"a\",\n\"1,2\",3,\"\"\n,\"x\"\nq,\"y\"",
	"a,\"b\"c,d\n",
	"a,b\"\n",
	"\"a\"\"\",b\nc,\"d\"\"e\"\"\"\n",
	"a,\"b",
	"\"a\",\"b\"\r\n\"c\",\"d\"\r",
}

type csvStep struct {
	Rec  []string
	Pos  [][2]int
	Err  string
	Line int
}

// readCSVSteps reads in every record with read and pos.
func readCSVSteps(read func() ([]string, error), pos func(int) (int, int)) []csvStep {
	var steps []csvStep
	for range 1000 {
		rec, err := read()
		st := csvStep{Rec: append([]string(nil), rec...)}
		if err == nil {
			for i := range rec {
				l, c := pos(i)
				st.Pos = append(st.Pos, [2]int{l, c})
			}
		} else {
			st.Err = err.Error()
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				st.Line = pe.StartLine
			}
		}
		steps = append(steps, st)
		if err != nil {
			break
		}
	}
	return steps
}

// compareCSV fails unless csvReader reads in exactly as encoding/csv does.
func compareCSV(t *testing.T, in string) {
	t.Helper()
	std := csv.NewReader(strings.NewReader(in))
	std.FieldsPerRecord, std.ReuseRecord = -1, true
	want := readCSVSteps(std.Read, std.FieldPos)
	ours := newCSVReader(bufio.NewReaderSize(strings.NewReader(in), 4096))
	got := readCSVSteps(ours.Read, ours.FieldPos)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("input %q:\n got %+v\nwant %+v", in, got, want)
	}
}

func TestCSVReaderMatchesEncodingCSV(t *testing.T) {
	t.Parallel()
	for _, in := range csvInputs {
		compareCSV(t, in)
	}
}

// TestCSVReaderText checks that a record's text holds its fields in order
// with nothing but commas and quotes between them, whichever way it was
// read.
func TestCSVReaderText(t *testing.T) {
	t.Parallel()
	for _, in := range csvInputs {
		r := newCSVReader(bufio.NewReaderSize(strings.NewReader(in), 4096))
		for {
			rec, err := r.Read()
			if err != nil {
				break
			}
			if !holdsInOrder(r.Text(), rec) {
				t.Errorf("input %q: text %q does not hold %q", in, r.Text(), rec)
			}
		}
	}
}

// holdsInOrder reports whether text is fields, in order, with only commas
// and quotes before, between and after them.
func holdsInOrder(text string, fields []string) bool {
	rest := text
	for _, f := range fields {
		i := strings.Index(rest, f)
		if i < 0 || strings.Trim(rest[:i], `,"`) != "" {
			return false
		}
		rest = rest[i+len(f):]
	}
	return strings.Trim(rest, `,"`) == ""
}

func FuzzCSVReader(f *testing.F) {
	for _, in := range csvInputs {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if len(in) > 1<<16 {
			return
		}
		compareCSV(t, in)
	})
}

// TestCommaAt agrees with strings.IndexByte on every offset of lines with
// commas at every place a word of eight bytes puts them.
func TestCommaAt(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", ",", "abc", "a,b", ",,,,,,,,,,,", "12345678,", "1234567,8", "123456789012345,6",
		"résumé,€,\xff,\x00,", "no commas at all in this long line of text"} {
		for off := 0; off <= len(s); off++ {
			want := len(s)
			if i := strings.IndexByte(s[off:], ','); i >= 0 {
				want = off + i
			}
			if got := commaAt(s, off); got != want {
				t.Fatalf("commaAt(%q, %d) = %d, want %d", s, off, got, want)
			}
		}
	}
}
