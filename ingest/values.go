package ingest

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/quantity"
)

// header resolves column names to indexes once per file.
type header struct {
	names []string
	index map[string]int // lower-cased name -> first index
	// required marks the columns the chosen parser cannot do without
	// (need): a record that stops short of one of them fails, while one
	// missing only other columns at its end is read with them empty.
	required []bool
}

// need marks columns (indexes from col; -1 is ignored) as required.
func (h *header) need(cols ...int) {
	if h.required == nil {
		h.required = make([]bool, len(h.names))
	}
	for _, i := range cols {
		if i >= 0 && i < len(h.required) {
			h.required[i] = true
		}
	}
}

// firstRequired returns the first required column at or after from, or -1.
func (h *header) firstRequired(from int) int {
	for i := from; i < len(h.required); i++ {
		if h.required[i] {
			return i
		}
	}
	return -1
}

func newHeader(names []string) *header {
	h := &header{names: names, index: make(map[string]int, len(names))}
	for i, n := range names {
		k := strings.ToLower(strings.TrimSpace(n))
		if _, dup := h.index[k]; !dup {
			h.index[k] = i
		}
	}
	// A localised download names every column "Label (ColumnName)" (the
	// Azure portal in German writes "Abonnement-GUID (SubscriptionGuid)"):
	// the name in parentheses answers too, unless a column has it as its
	// own name (see docs/import-formats.md, "Files").
	for i, n := range names {
		if k := canonicalInParens(n); k != "" {
			if _, dup := h.index[k]; !dup {
				h.index[k] = i
			}
		}
	}
	return h
}

// canonicalInParens returns, lower-cased, the column name a localised
// header carries in parentheses at its end ("Kosten (PreTaxCost)" →
// "pretaxcost"), or "" when there is none. Only a name without spaces
// counts, so that "Cost (in euros)" stays a label.
func canonicalInParens(name string) string {
	name = strings.TrimSpace(name)
	if !strings.HasSuffix(name, ")") {
		return ""
	}
	open := strings.LastIndexByte(name, '(')
	if open <= 0 {
		return ""
	}
	inner := name[open+1 : len(name)-1]
	if inner == "" || strings.TrimSpace(name[:open]) == "" {
		return ""
	}
	for _, r := range inner {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '/' || r == '.' || r == '-') {
			return ""
		}
	}
	return strings.ToLower(inner)
}

// col returns the index of the first of names present (case-insensitive), or -1.
func (h *header) col(names ...string) int {
	for _, n := range names {
		if i, ok := h.index[strings.ToLower(n)]; ok {
			return i
		}
	}
	return -1
}

func (h *header) has(names ...string) bool { return h.col(names...) >= 0 }

// rowCtx is the record being parsed plus what error messages need.
type rowCtx struct {
	file string
	hdr  []string
	rec  []string
	line int
	tags map[string]string // the Reader's map, cleared per row
	team string            // Options.TeamTagKey
	date dateBounds        // every date read must fall within these
	// sheet is how the file's money cells are written (sheet.go).
	sheet sheetMoney
}

// teamTag returns the value of the team tag recorded so far, if any.
func (c *rowCtx) teamTag() string {
	if v, ok := c.tags[c.team]; ok {
		return v
	}
	for k, v := range c.tags {
		if strings.EqualFold(k, c.team) {
			return v
		}
	}
	return ""
}

// tag records a tag; empty keys and values are dropped.
func (c *rowCtx) tag(k, v string) {
	if k != "" && v != "" {
		c.tags[k] = v
	}
}

// raw returns cell i as read, or "" when the column is absent or the record short.
func (c *rowCtx) raw(i int) string {
	if i < 0 || i >= len(c.rec) {
		return ""
	}
	return c.rec[i]
}

// text returns cell i with surrounding spaces removed.
func (c *rowCtx) text(i int) string { return strings.TrimSpace(c.raw(i)) }

func (c *rowCtx) colName(i int) string {
	if i >= 0 && i < len(c.hdr) {
		return c.hdr[i]
	}
	return ""
}

func (c *rowCtx) errAt(i int, err error, msg string) *ParseError {
	return &ParseError{File: c.file, Line: c.line, Column: c.colName(i), Value: c.raw(i), Err: err, Msg: msg}
}

// dec parses cell i as a usage quantity; empty is zero.
func (c *rowCtx) dec(i int) (decimal.Decimal, error) { return c.number(i, quantity.Quantity) }

// money parses cell i as an amount of money; empty is zero.
func (c *rowCtx) money(i int) (decimal.Decimal, error) { return c.number(i, quantity.Money) }

// moneyOr parses cell i as money, returning def when the cell is empty or absent.
func (c *rowCtx) moneyOr(i int, def decimal.Decimal) (decimal.Decimal, error) {
	if c.text(i) == "" {
		return def, nil
	}
	return c.money(i)
}

// number parses cell i through quantity's bounds for k; empty is zero.
// Money (k.Dollar) may also be written as a spreadsheet writes it
// (moneyCell).
func (c *rowCtx) number(i int, k quantity.Kind) (decimal.Decimal, error) {
	if k.Dollar {
		return c.moneyCell(i, k)
	}
	d, err := parseNumber(c.raw(i), k)
	if err != nil {
		return d, c.numberErr(i, err)
	}
	return d, nil
}

// numberErr places quantity's verdict on cell i. Counts keep the message
// they always had for fractions and negatives.
func (c *rowCtx) numberErr(i int, err error) *ParseError {
	var qe *quantity.Error
	if !errors.As(err, &qe) {
		return c.errAt(i, ErrNotNumber, "")
	}
	switch {
	case errors.Is(err, quantity.ErrNotWhole), errors.Is(err, quantity.ErrOutOfRange) && strings.HasSuffix(qe.Detail, "must not be negative"):
		return c.errAt(i, ErrNotInteger, "")
	case errors.Is(err, quantity.ErrOutOfRange):
		return c.errAt(i, ErrOutOfRange, qe.Detail)
	}
	return c.errAt(i, ErrNotNumber, "")
}

// count parses cell i as a non-negative whole number ("3" or "3.0"); empty is 0.
func (c *rowCtx) count(i int) (int64, error) {
	d, err := parseNumber(c.raw(i), quantity.Tokens)
	if err != nil {
		return 0, c.numberErr(i, err)
	}
	return d.IntPart(), nil
}

// time parses cell i as a timestamp in UTC; empty is an error.
func (c *rowCtx) time(i int) (time.Time, error) {
	s := c.text(i)
	if s == "" {
		return time.Time{}, c.errAt(i, ErrEmptyValue, "a date is required")
	}
	t, ok := parseTime(s)
	if !ok {
		return t, c.errAt(i, ErrNotDate, "")
	}
	return t, c.inRange(i, t)
}

// timeOpt parses cell i as a timestamp; empty or absent gives the zero time.
func (c *rowCtx) timeOpt(i int) (time.Time, error) {
	if c.text(i) == "" {
		return time.Time{}, nil
	}
	return c.time(i)
}

var (
	hour = decimal.NewFromInt(3600)
)

// parseNumber parses a cell through quantity's bounds for k (which also
// refuse what a bill never holds: commas, underscores, NaN, hex). Empty (or
// spaces) is zero.
func parseNumber(s string, k quantity.Kind) (decimal.Decimal, error) {
	if strings.TrimSpace(s) == "" {
		return decimal.Zero, nil
	}
	return k.Parse("", s)
}

// parseDecimal parses a plain or scientific-notation quantity; empty is
// zero.
func parseDecimal(s string) (decimal.Decimal, bool) {
	d, err := parseNumber(s, quantity.Quantity)
	return d, err == nil
}

// parseMoney parses an amount of money; empty is zero.
func parseMoney(s string) (decimal.Decimal, bool) {
	d, err := parseNumber(s, quantity.Money)
	return d, err == nil
}

// parseCount parses a non-negative whole number, tolerating "3.0" and "3e2".
func parseCount(s string) (int64, bool) {
	d, err := parseNumber(s, quantity.Tokens)
	return d.IntPart(), err == nil
}

// parseTime accepts the timestamp shapes seen in billing exports and usage
// logs and returns UTC:
//
//	2018-06-01T00:00:00Z, 2025-10-27T00:00:00+00:00, 2022-07-01 00:00:00.000,
//	2020-11-10 05:49:32.199000+00:00, 2025-01-15 10:20:30.123+00, 2020-11-09 23:00:00 UTC,
//	2019-07-29, 09/21/2023 (MM/DD/YYYY), 5/1/25, 1730000000 (Unix seconds).
//
// Timestamps without a zone are UTC.
func parseTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 6 || len(s) > 40 {
		return time.Time{}, false
	}
	if isDigits(s) {
		return parseDigitsTime(s)
	}
	// Unix seconds written as a float ("1730000000.0").
	if dot := strings.IndexByte(s, '.'); dot >= 9 && dot <= 11 && isDigits(s[:dot]) && isDigits(s[dot+1:]) {
		n, _ := strconv.ParseInt(s[:dot], 10, 64)
		return time.Unix(n, 0).UTC(), true
	}
	if strings.IndexByte(s, '/') > 0 {
		return parseSlashDate(s)
	}
	return parseISOTime(s)
}

// parseDigitsTime parses a timestamp written in digits alone: Unix seconds
// (9 to 11 digits), Unix milliseconds (13) or a date (20201101).
func parseDigitsTime(s string) (time.Time, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	switch {
	case len(s) >= 9 && len(s) <= 11:
		return time.Unix(n, 0).UTC(), true
	case len(s) == 13:
		return time.UnixMilli(n).UTC(), true
	case len(s) == 8:
		t, err := time.Parse("20060102", s)
		return t, err == nil
	}
	return time.Time{}, false
}

// parseISOTime parses an ISO 8601 date, or date and time (with T or a
// space between, to the second or the minute), with or without a zone.
func parseISOTime(s string) (time.Time, bool) {
	if len(s) < 10 || s[4] != '-' || s[7] != '-' {
		return time.Time{}, false
	}
	if len(s) == 10 {
		t, err := time.Parse(time.DateOnly, s)
		return t, err == nil
	}
	if s[10] != 'T' && s[10] != ' ' {
		return time.Time{}, false
	}
	s = strings.TrimSuffix(s, " UTC")
	sep := 0
	if s[10] == ' ' {
		sep = 1
	}
	zone := isoZone(s)
	t, err := time.Parse(isoLayouts[sep][zone], s)
	if err != nil {
		// Minutes only: "2024-09-18 22:00".
		t, err = time.Parse(isoMinuteLayouts[sep][zone], s)
		if err != nil {
			return time.Time{}, false
		}
	}
	return t.UTC(), true
}

// isoZone returns how an ISO timestamp's zone is written, as an index into
// isoLayouts' zone variants: none, Z or +07:00, +0700, +07.
func isoZone(s string) int {
	n := len(s)
	switch {
	case s[n-1] == 'Z':
		return 1
	case n > 16 && s[n-3] == ':' && (s[n-6] == '+' || s[n-6] == '-'):
		return 1
	case n > 16 && (s[n-5] == '+' || s[n-5] == '-') && isDigits(s[n-4:]):
		return 2
	case n > 16 && (s[n-3] == '+' || s[n-3] == '-') && isDigits(s[n-2:]):
		return 3
	}
	return 0
}

// isoLayouts[separator][zone]: separator T or space; zone none, Z07:00,
// Z0700, Z07. Constants, so parsing allocates nothing (and the T/Z07:00
// layout is time.RFC3339, which time.Parse has a fast path for).
var (
	isoLayouts = [2][4]string{
		{"2006-01-02T15:04:05", time.RFC3339, "2006-01-02T15:04:05Z0700", "2006-01-02T15:04:05Z07"},
		{"2006-01-02 15:04:05", "2006-01-02 15:04:05Z07:00", "2006-01-02 15:04:05Z0700", "2006-01-02 15:04:05Z07"},
	}
	isoMinuteLayouts = [2][4]string{
		{"2006-01-02T15:04", "2006-01-02T15:04Z07:00", "2006-01-02T15:04Z0700", "2006-01-02T15:04Z07"},
		{"2006-01-02 15:04", "2006-01-02 15:04Z07:00", "2006-01-02 15:04Z0700", "2006-01-02 15:04Z07"},
	}
)

// parseSlashDate parses US-style M/D/Y dates (Azure EA/MCA exports, SaaS
// FOCUS examples), optionally followed by a time.
func parseSlashDate(s string) (time.Time, bool) {
	date, clock, _ := strings.Cut(s, " ")
	parts := strings.Split(date, "/")
	if len(parts) != 3 {
		return time.Time{}, false
	}
	layout := "1/2/2006"
	if len(parts[2]) == 2 {
		layout = "1/2/06"
	}
	if clock != "" {
		switch {
		case strings.HasSuffix(clock, "AM") || strings.HasSuffix(clock, "PM"):
			layout += " 3:04:05 PM"
			if strings.Count(clock, ":") == 1 {
				layout = strings.TrimSuffix(layout, ":05 PM") + " PM"
			}
		case strings.Count(clock, ":") == 1:
			layout += " 15:04"
		default:
			layout += " 15:04:05"
		}
	}
	t, err := time.Parse(layout, s)
	if err != nil {
		return time.Time{}, false
	}
	return t.UTC(), true
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// monthStart returns the first instant of t's month (UTC).
func monthStart(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// dayRange returns [t, t+1 day) when t is midnight and end is unknown.
func endOrDay(start, end time.Time) time.Time {
	if !end.IsZero() {
		return end
	}
	if start.Hour() == 0 && start.Minute() == 0 && start.Second() == 0 && start.Nanosecond() == 0 {
		return start.AddDate(0, 0, 1)
	}
	return start
}

// hoursBetween returns the length of [start, end) in hours.
func hoursBetween(start, end time.Time) decimal.Decimal {
	if end.Before(start) || end.Equal(start) {
		return decimal.Zero
	}
	return decimal.NewFromInt(int64(end.Sub(start) / time.Second)).Div(hour)
}

// nullStr maps the literal NULL some exporters write to "".
func nullStr(s string) string {
	if s == "NULL" || s == "null" || s == "None" {
		return ""
	}
	return s
}
