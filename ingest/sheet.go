package ingest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/quantity"
)

// This file holds what a spreadsheet leaves in a file it saved, and how it
// is read as the same file without it (docs/import-formats.md, "Files" and
// "Values"): Excel's "sep=," first line, line ends of a lone \r, and
// amounts written as money is shown ("$10,000.00 ", "1.234,56 €").

// skipSepLine drops Excel's separator hint, a first line "sep=," (also
// quoted, or followed by the commas of an empty row), and reports whether
// there was one. A hint naming another separator is refused: the file is
// not comma-separated.
func skipSepLine(br *bufio.Reader) (bool, error) {
	head, _ := br.Peek(64)
	line, _, _ := bytes.Cut(head, []byte("\n"))
	line = bytes.TrimRight(line, "\r")
	hint := strings.Trim(string(line), `"`)
	sep, ok := strings.CutPrefix(strings.ToLower(hint), "sep=")
	if !ok || len(line) == len(head) && len(head) == 64 {
		return false, nil
	}
	if rest := strings.Trim(sep, `", `); sep == "" || sep[0] != ',' || rest != "" {
		shown := sep
		if sep == "\t" {
			shown = "a tab"
		}
		return false, fmt.Errorf("%w: its first line, %s, says its fields are separated by %q; save it as CSV with commas (in Excel: CSV UTF-8, comma delimited)",
			ErrSyntax, strconv.Quote(string(line)), shown)
	}
	_, err := br.ReadSlice('\n')
	if err == io.EOF {
		err = nil
	}
	return true, err
}

// crOnly reports whether the file ends its lines with a lone \r, as old
// Mac spreadsheets save CSV: its first 64 KiB hold a \r and no \n.
func crOnly(br *bufio.Reader) bool {
	head, _ := br.Peek(64 << 10)
	return bytes.IndexByte(head, '\r') >= 0 && bytes.IndexByte(head, '\n') < 0
}

// crReader turns every \r into \n: the line ends of a file that ends its
// lines with \r alone (a \r inside a quoted field becomes a line break,
// which is what it was written as).
type crReader struct{ r io.Reader }

func (c crReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	for i := range p[:n] {
		if p[i] == '\r' {
			p[i] = '\n'
		}
	}
	return n, err
}

// sheetMoney is what a file's money cells have shown of how they are
// written, so that an amount a spreadsheet formatted is read the way the
// file writes amounts, never by a guess at its decimal point.
type sheetMoney struct {
	// decimal is the decimal separator a cell showed by itself
	// (quantity.InspectFormatted): '.', ',', or 0 until one did.
	decimal byte
	shown   cellAt // the cell that showed it
	// point is the first plain amount read with a decimal point: in a file
	// that writes decimals after a comma it would mean something else.
	point cellAt
	// symbols are this row's currency symbols, checked against its
	// currency once the row is read.
	symbols []symbolAt
}

type cellAt struct {
	line   int
	column string
	value  string
}

type symbolAt struct {
	col    int
	symbol string
}

// moneyCell reads cell i as an amount of money of kind k: a plain number,
// or, when it is not one, an amount a spreadsheet formatted, read in the
// file's own decimal style. Empty is zero.
func (c *rowCtx) moneyCell(i int, k quantity.Kind) (decimal.Decimal, error) {
	s := c.raw(i)
	if c.sheet.decimal != ',' {
		d, err := parseNumber(s, k)
		if err == nil {
			if c.sheet.point.line == 0 && strings.IndexByte(s, '.') >= 0 && !strings.ContainsAny(s, "eE") {
				c.sheet.point = cellAt{c.line, c.colName(i), strings.TrimSpace(s)}
			}
			return d, nil
		}
		if !errors.Is(err, quantity.ErrNotNumber) {
			return d, c.numberErr(i, err)
		}
		d, ok, serr := c.formattedMoney(i, k, s)
		if !ok {
			return d, c.numberErr(i, err) // not a spreadsheet's amount either: the plain error
		}
		return d, serr
	}
	if strings.TrimSpace(s) == "" {
		return decimal.Zero, nil
	}
	d, ok, err := c.formattedMoney(i, k, s)
	if !ok {
		return d, c.errAt(i, ErrNotNumber, "")
	}
	return d, err
}

// formattedMoney reads s as a spreadsheet writes money. ok is false when s
// does not look like such an amount at all (the caller's error stands).
func (c *rowCtx) formattedMoney(i int, k quantity.Kind, s string) (d decimal.Decimal, ok bool, err error) {
	f := quantity.InspectFormatted(s)
	dec := f.Decimal
	switch {
	case dec != 0:
		if err := c.showDecimal(i, dec); err != nil {
			return d, true, err
		}
	case f.Ambiguous && c.sheet.decimal == 0:
		other := strings.ReplaceAll(strings.TrimSpace(s), string(f.Sep), "")
		return d, true, c.errAt(i, ErrNotNumber, fmt.Sprintf(
			"ambiguous: a %q before three digits separates thousands where a point writes decimals and is the decimal separator where a comma does, and no amount above it in the file shows which; write %s or give it its decimals",
			string(f.Sep), other))
	case f.Ambiguous:
		dec = c.sheet.decimal
	case f.Sep == ',' && c.sheet.decimal != ',':
		return d, false, nil // 12,5: a decimal comma nothing in the file shows
	case f.Sep == '.' && c.sheet.decimal == ',':
		return d, true, c.mixedErr(i, '.')
	default:
		dec = f.Sep
		if dec == 0 {
			dec = c.sheet.decimal
		}
	}
	d, err = k.ParseFormatted("", s, dec == ',')
	if err != nil {
		return d, f.Symbol != "" || f.Decimal != 0, c.numberErr(i, err)
	}
	if f.Symbol != "" {
		c.sheet.symbols = append(c.sheet.symbols, symbolAt{i, f.Symbol})
	}
	return d, true, nil
}

// showDecimal records that cell i shows dec as the file's decimal
// separator, refusing a file that writes its decimals both ways.
func (c *rowCtx) showDecimal(i int, dec byte) error {
	switch {
	case c.sheet.decimal == dec:
		return nil
	case c.sheet.decimal != 0:
		return c.mixedErr(i, dec)
	case dec == ',' && c.sheet.point.line != 0:
		p := c.sheet.point
		return c.errAt(i, ErrNotNumber, fmt.Sprintf("it writes its decimals after a comma, but line %d (column %s) wrote %q with a decimal point: the file mixes the two ways, so neither can be trusted",
			p.line, p.column, p.value))
	}
	c.sheet.decimal = dec
	c.sheet.shown = cellAt{c.line, c.colName(i), strings.TrimSpace(c.raw(i))}
	return nil
}

// mixedErr refuses cell i, which writes its decimals after dec, in a file
// that showed the other separator.
func (c *rowCtx) mixedErr(i int, dec byte) error {
	p := c.sheet.shown
	return c.errAt(i, ErrNotNumber, fmt.Sprintf("it writes its decimals after a %s, but line %d (column %s) wrote %q with a decimal %s: the file mixes the two ways, so neither can be trusted",
		separatorName(dec), p.line, p.column, p.value, separatorName(c.sheet.decimal)))
}

func separatorName(b byte) string {
	if b == ',' {
		return "comma"
	}
	return "point"
}

// checkSymbols refuses a row whose amounts carry a currency symbol that is
// not its currency's: "€12.50" on a row in USD is no dollar amount.
func (c *rowCtx) checkSymbols(row *Row) error {
	for _, s := range c.sheet.symbols {
		if !quantity.SymbolMatches(s.symbol, row.BillingCurrency) {
			return c.errAt(s.col, ErrNotNumber, fmt.Sprintf("the amount is in %s, and the row's currency is %s", s.symbol, row.BillingCurrency))
		}
	}
	return nil
}
