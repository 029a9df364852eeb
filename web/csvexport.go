package web

import (
	"encoding/csv"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode"
)

// csvColumn is a column of a table Burnrate lets people download as CSV.
// Number columns hold numbers Burnrate formatted itself and stay numbers,
// so that a spreadsheet sums them (a negative amount starts with "-");
// every other column is text, which may come from an uploaded bill.
type csvColumn struct {
	Name   string
	Number bool
}

func textCol(name string) csvColumn   { return csvColumn{Name: name} }
func numberCol(name string) csvColumn { return csvColumn{Name: name, Number: true} }

// csvTable is a downloadable table: its columns and rows, written with
// writeCSV, the one way Burnrate writes CSV for people.
type csvTable struct {
	cols []csvColumn
	rows [][]string
}

func newCSVTable(cols ...csvColumn) *csvTable { return &csvTable{cols: cols} }

// add appends a row, one cell per column.
func (t *csvTable) add(cells ...string) { t.rows = append(t.rows, cells) }

// csvNumber is what a number column may hold as it is: a plain decimal,
// perhaps negative, perhaps a percentage. Anything else in a number column
// is written as text.
var csvNumber = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?%?$`)

// writeCSV writes t with its header, every text cell made safe to open in
// a spreadsheet (spreadsheetText).
func (t *csvTable) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	header := make([]string, len(t.cols))
	for i, c := range t.cols {
		header[i] = spreadsheetText(c.Name)
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	out := make([]string, len(t.cols))
	for n, row := range t.rows {
		if len(row) != len(t.cols) {
			return fmt.Errorf("write csv: row %d has %d cells for %d columns", n+1, len(row), len(t.cols))
		}
		for i, cell := range row {
			if t.cols[i].Number && csvNumber.MatchString(cell) {
				out[i] = cell
			} else {
				out[i] = spreadsheetText(cell)
			}
		}
		if err := cw.Write(out); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// spreadsheetText returns s such that Excel, LibreOffice and Google Sheets
// show it as text rather than run it as a formula: names in bills are
// anyone's to choose, and =HYPERLINK(…) or =cmd|… in a cell acts when the
// file is opened. A cell that starts with = + - @ (also after spaces, which
// spreadsheets skip, and in their full-width forms) or with a tab, carriage
// return or line feed gets a leading single quote, as OWASP advises; the
// quote shows, which is the price of a name that looks like a formula.
func spreadsheetText(s string) string {
	if s == "" {
		return s
	}
	if s[0] == '\t' || s[0] == '\r' || s[0] == '\n' {
		return "'" + s
	}
	switch r, _ := firstRune(strings.TrimLeftFunc(s, unicode.IsSpace)); r {
	case '=', '+', '-', '@', '＝', '＋', '－', '＠':
		return "'" + s
	}
	return s
}

func firstRune(s string) (rune, bool) {
	for _, r := range s {
		return r, true
	}
	return 0, false
}
