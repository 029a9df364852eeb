package web

import (
	"bytes"
	"encoding/csv"
	"testing"
)

func TestSpreadsheetText(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`=HYPERLINK("http://x","y")`: `'=HYPERLINK("http://x","y")`,
		"+1":                         "'+1",
		"-2+3":                       "'-2+3",
		"@SUM(A1)":                   "'@SUM(A1)",
		"\t=1+1":                     "'\t=1+1",
		"\tplain":                    "'\tplain",
		"\r=1+1":                     "'\r=1+1",
		"\n=1+1":                     "'\n=1+1",
		"  =1+1":                     "'  =1+1",
		"\u00a0=1+1":                 "'\u00a0=1+1",
		"＝1+1":                       "'＝1+1",
		"AWS":                        "AWS",
		"a=b":                        "a=b",
		"gpt-4o":                     "gpt-4o",
		"":                           "",
	} {
		if got := spreadsheetText(in); got != want {
			t.Errorf("spreadsheetText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCSVTableKeepsNumbersAndNeutralisesText(t *testing.T) {
	t.Parallel()
	tb := newCSVTable(textCol("name"), numberCol("amount"), numberCol("change_percent"))
	tb.add("=1+2", "-12.50", "-50%")
	tb.add("ok", "=1+2", "new") // a number column holding text is text
	var buf bytes.Buffer
	if err := tb.writeCSV(&buf); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"name", "amount", "change_percent"}, {"'=1+2", "-12.50", "-50%"}, {"ok", "'=1+2", "new"}}
	for i := range want {
		for j := range want[i] {
			if rows[i][j] != want[i][j] {
				t.Errorf("row %d cell %d = %q, want %q", i, j, rows[i][j], want[i][j])
			}
		}
	}
	tb.add("short")
	if err := tb.writeCSV(&bytes.Buffer{}); err == nil {
		t.Error("a row with too few cells was written")
	}
}
