package ingest

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

// sheetFOCUS is a small FOCUS file as an exporter writes it.
const sheetFOCUS = "BillingAccountId,ChargePeriodStart,ChargePeriodEnd,BilledCost,EffectiveCost,BillingCurrency,ServiceName,ChargeCategory\n" +
	"acct-1,2024-09-01T00:00:00Z,2024-09-02T00:00:00Z,10000.00,9500.00,USD,Compute,Usage\n" +
	"acct-1,2024-09-02T00:00:00Z,2024-09-03T00:00:00Z,1234.56,1234.56,USD,Storage,Usage\n" +
	"acct-1,2024-09-03T00:00:00Z,2024-09-04T00:00:00Z,-12.50,-12.50,USD,Compute,Credit\n"

// TestSpreadsheetSavedFileIsTheSameFile: what a spreadsheet leaves in a
// file it saves — a byte-order mark, lines ended by a lone \r, Excel's
// "sep=," first line, a trailing comma on every line, money written as it
// shows money — reads as the file without it.
func TestSpreadsheetSavedFileIsTheSameFile(t *testing.T) {
	t.Parallel()
	want, _, err := readAll(t, strings.NewReader(sheetFOCUS), Options{FileName: "f.csv"})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(sheetFOCUS, "\n"), "\n")
	money := strings.NewReplacer("10000.00,9500.00", `"$10,000.00 ","$9,500.00"`, "1234.56,1234.56", `"US$ 1,234.56",1234.56`,
		"-12.50,-12.50", `(12.50),"-$12.50"`)
	tests := []struct {
		name string
		in   string
	}{
		{"BOM", "\ufeff" + sheetFOCUS},
		{"CRLF", strings.Join(lines, "\r\n") + "\r\n"},
		{"LoneCR", strings.Join(lines, "\r") + "\r"},
		{"SepLine", "sep=,\n" + sheetFOCUS},
		{"QuotedSepLineCRLF", "\"sep=,\"\r\n" + strings.Join(lines, "\r\n")},
		{"TrailingCommaEverywhere", strings.Join(lines, ",\n") + ",\n"},
		{"MoneyAsShown", money.Replace(sheetFOCUS)},
		{"AllAtOnce", "\ufeffsep=,\r" + strings.Join(strings.Split(money.Replace(strings.TrimSuffix(sheetFOCUS, "\n")), "\n"), ",\r") + ",\r"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, src, err := readAll(t, strings.NewReader(tt.in), Options{FileName: "f.csv"})
			if err != nil {
				t.Fatal(err)
			}
			if src != SourceFOCUS || len(got) != len(want) {
				t.Fatalf("%s, %d rows; want focus, %d", src, len(got), len(want))
			}
			for i := range want {
				for _, c := range []struct{ got, want decimal.Decimal }{{got[i].BilledCost, want[i].BilledCost}, {got[i].EffectiveCost, want[i].EffectiveCost}} {
					if !c.got.Equal(c.want) {
						t.Fatalf("row %d: cost %s, want %s", i, c.got, c.want)
					}
				}
				g, w := got[i], want[i]
				g.BilledCost, g.EffectiveCost, g.ListCost = w.BilledCost, w.EffectiveCost, w.ListCost // equal, maybe not alike
				if !reflect.DeepEqual(g, w) {
					t.Fatalf("row %d:\n got %+v\nwant %+v", i, g, w)
				}
			}
		})
	}
}

// TestSpreadsheetLinesKeepTheirNumbers: errors name the line the file has,
// counting Excel's "sep=," line, in a file of lone-\r line ends too.
func TestSpreadsheetLinesKeepTheirNumbers(t *testing.T) {
	t.Parallel()
	bad := strings.Replace(sheetFOCUS, "1234.56,1234.56", "12x,1", 1)
	for name, in := range map[string]string{
		"SepLine":       "sep=,\n" + bad,
		"SepLineLoneCR": strings.ReplaceAll("sep=,\n"+bad, "\n", "\r"),
	} {
		_, _, err := readAll(t, strings.NewReader(in), Options{FileName: "f.csv"})
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != 4 || pe.Column != "BilledCost" {
			t.Errorf("%s: error %v, want line 4, column BilledCost", name, err)
		}
	}
}

// TestSpreadsheetOtherSeparatorRefused: Excel's hint for another separator
// says the file is not comma-separated.
func TestSpreadsheetOtherSeparatorRefused(t *testing.T) {
	t.Parallel()
	_, _, err := readAll(t, strings.NewReader("sep=;\n"+strings.ReplaceAll(sheetFOCUS, ",", ";")), Options{FileName: "f.csv"})
	want := `f.csv: malformed CSV: its first line, "sep=;", says its fields are separated by ";"; save it as CSV with commas (in Excel: CSV UTF-8, comma delimited)`
	if err == nil || err.Error() != want {
		t.Fatalf("error\n got: %v\nwant: %s", err, want)
	}
}

// focusMoney is a FOCUS file whose rows have the given currencies and
// BilledCost cells (lines 2 …).
func focusMoney(rows ...[2]string) string {
	var b strings.Builder
	b.WriteString("ChargePeriodStart,BilledCost,BillingCurrency\n")
	for i, r := range rows {
		b.WriteString("2024-09-0" + string(rune('1'+i)) + "," + r[1] + "," + r[0] + "\n")
	}
	return b.String()
}

// TestSpreadsheetMoney: money written as a spreadsheet shows it is read
// when its currency symbol agrees with the row's currency and its decimal
// separator is plain — from the cell itself, or from an amount above it in
// the file — and refused, at its line and column, when it is not. No
// decimal point is guessed.
func TestSpreadsheetMoney(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []string // the costs, or
		err  string   // the error
	}{
		{name: "FOCUSWorkingGroupDollars", in: focusMoney([2]string{"USD", `"$10,000.00 "`}), want: []string{"10000"}},
		{name: "SymbolAfter", in: focusMoney([2]string{"EUR", `"1.234,56 €"`}, [2]string{"EUR", `"12,50 €"`}, [2]string{"EUR", `"1,234"`}),
			want: []string{"1234.56", "12.5", "1.234"}},
		{name: "CodeBefore", in: focusMoney([2]string{"GBP", `"GBP 1,234.50"`}), want: []string{"1234.5"}},
		{name: "ThousandsRepeated", in: focusMoney([2]string{"USD", `"1,234,567"`}, [2]string{"USD", `"2,500"`}), want: []string{"1234567", "2500"}},
		{name: "NegativeInParentheses", in: focusMoney([2]string{"USD", `"($1,234.00)"`}, [2]string{"USD", "(12.50)"}), want: []string{"-1234", "-12.5"}},
		{name: "PlainAmountsInACommaFile", in: focusMoney([2]string{"EUR", `"1.234,56"`}, [2]string{"EUR", "1234"}, [2]string{"EUR", `"1.234"`}),
			want: []string{"1234.56", "1234", "1234"}},
		{name: "AmbiguousInEUR", in: focusMoney([2]string{"EUR", "7"}, [2]string{"EUR", `"1,234"`}),
			err: `f.csv: line 3, column BilledCost: "1,234" is not a number: ambiguous: a "," before three digits separates thousands where a point writes decimals and is the decimal separator where a comma does, and no amount above it in the file shows which; write 1234 or give it its decimals`},
		{name: "AmbiguousWithSymbol", in: focusMoney([2]string{"USD", `"$1.234"`}),
			err: `f.csv: line 2, column BilledCost: "$1.234" is not a number: ambiguous: a "." before three digits separates thousands where a point writes decimals and is the decimal separator where a comma does, and no amount above it in the file shows which; write $1234 or give it its decimals`},
		{name: "DecimalCommaNothingShows", in: focusMoney([2]string{"EUR", `"12,5"`}),
			err: `f.csv: line 2, column BilledCost: "12,5" is not a number`},
		{name: "SymbolOfAnotherCurrency", in: focusMoney([2]string{"USD", `"€12.50"`}),
			err: `f.csv: line 2, column BilledCost: "€12.50" is not a number: the amount is in €, and the row's currency is USD`},
		{name: "CodeOfAnotherCurrency", in: focusMoney([2]string{"EUR", `"USD 1,234.50"`}),
			err: `f.csv: line 2, column BilledCost: "USD 1,234.50" is not a number: the amount is in USD, and the row's currency is EUR`},
		{name: "PointThenComma", in: focusMoney([2]string{"EUR", "2.5"}, [2]string{"EUR", `"1.234,56"`}),
			err: `f.csv: line 3, column BilledCost: "1.234,56" is not a number: it writes its decimals after a comma, but line 2 (column BilledCost) wrote "2.5" with a decimal point: the file mixes the two ways, so neither can be trusted`},
		{name: "CommaThenPoint", in: focusMoney([2]string{"EUR", `"1.234,56"`}, [2]string{"EUR", `"1,234.56"`}),
			err: `f.csv: line 3, column BilledCost: "1,234.56" is not a number: it writes its decimals after a point, but line 2 (column BilledCost) wrote "1.234,56" with a decimal comma: the file mixes the two ways, so neither can be trusted`},
		{name: "CommaThenPlainPoint", in: focusMoney([2]string{"EUR", `"1.234,56"`}, [2]string{"EUR", "0.5"}),
			err: `f.csv: line 3, column BilledCost: "0.5" is not a number: it writes its decimals after a point, but line 2 (column BilledCost) wrote "1.234,56" with a decimal comma: the file mixes the two ways, so neither can be trusted`},
		{name: "NotAnAmount", in: focusMoney([2]string{"USD", `"$12 and change"`}), err: `f.csv: line 2, column BilledCost: "$12 and change" is not a number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rows, _, err := readAll(t, strings.NewReader(tt.in), Options{FileName: "f.csv"})
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error\n got: %v\nwant: %s", err, tt.err)
				}
				var pe *ParseError
				if !errors.As(err, &pe) || pe.Line == 0 || pe.Column != "BilledCost" {
					t.Fatalf("%#v names no line and column", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range rows {
				got = append(got, r.BilledCost.String())
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("costs %v, want %v", got, tt.want)
			}
		})
	}
}

// TestImportCountsShortRows: rows missing only optional trailing columns
// are counted in the import's result and kept in its history.
func TestImportCountsShortRows(t *testing.T) {
	t.Parallel()
	b := setupImport(t)
	body := focusRows(3) + "4,2024-01-04,Storage\n5,2024-01-05\n"
	res, err := b.importFile(t, "short.csv", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != 5 || res.ShortRows != 2 || res.Totals["USD"] != "15" {
		t.Fatalf("result %+v", res)
	}
	stored, err := b.st.Import(context.Background(), b.org.ID, res.ID)
	if err != nil || stored.ShortRows != 2 {
		t.Fatalf("stored %+v, %v", stored, err)
	}
	if got := ResultOf(stored); got.ShortRows != 2 {
		t.Fatalf("history result %+v", got)
	}
	// The same file again is the same import, and a file of whole rows
	// counts none.
	again, err := b.importFile(t, "short.csv", []byte(body))
	if err != nil || !again.Duplicate || again.ShortRows != 2 {
		t.Fatalf("again %+v, %v", again, err)
	}
	whole, err := b.importFile(t, "whole.csv", bytes.ReplaceAll([]byte(focusRows(2)), []byte("Compute"), []byte("Network")))
	if err != nil || whole.ShortRows != 0 {
		t.Fatalf("whole %+v, %v", whole, err)
	}
}
