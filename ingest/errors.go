package ingest

import (
	"errors"
	"strconv"
	"strings"
)

// Sentinel errors. Errors returned by Open and Next wrap one of these (or a
// *ParseError that unwraps to one), so callers can test with errors.Is.
var (
	ErrEmpty          = errors.New("file is empty")
	ErrHeaderOnly     = errors.New("file has a header but no data rows")
	ErrUnknownFormat  = errors.New("unrecognised header")
	ErrUnknownSource  = errors.New("unknown source")
	ErrMissingColumn  = errors.New("missing required column")
	ErrTruncatedGzip  = errors.New("gzip data is truncated")
	ErrCorruptGzip    = errors.New("gzip data is corrupt")
	ErrCorruptParquet = errors.New("corrupt Parquet data")
	ErrNotUTF8        = errors.New("file is not UTF-8")
	ErrNULByte        = errors.New("contains a NUL byte")
	ErrFieldCount     = errors.New("wrong number of fields")
	ErrDateRange      = errors.New("date out of range")
	ErrSyntax         = errors.New("malformed CSV")
	ErrRecordTooLarge = errors.New("record too large")
	ErrNotNumber      = errors.New("is not a number")
	ErrOutOfRange     = errors.New("is out of range")
	ErrNotInteger     = errors.New("is not a whole non-negative number")
	ErrNotDate        = errors.New("is not a date")
	ErrNoPrice        = errors.New("has no price in the LLM price table")
	ErrNoModel        = errors.New("value is empty; export the usage grouped by model so it can be priced")
	ErrEmptyValue     = errors.New("value is empty")
	ErrNoPricer       = errors.New("no LLM price table configured")
	ErrBadMapping     = errors.New("invalid column mapping")
	ErrRepeatedID     = errors.New("repeats a request id with other values")
)

// ParseError reports a problem at a place in a file.
//
// Its message reads like
//
//	test_cur.csv: line 1042, column lineItem/UnblendedCost: "12,5" is not a number
type ParseError struct {
	File string // file name from Options.FileName ("" if unknown)
	Line int    // 1-based physical line (the header is line 1); 0 if unknown
	// RowGroup and Row place a value in a Parquet file (both 1-based; Row
	// counts within the row group); 0 for CSV.
	RowGroup int
	Row      int
	Column   string // header name of the offending column; "" if not applicable
	Char     int    // 1-based character position for CSV syntax errors; 0 otherwise
	Value    string // offending value (shown quoted when Column is set)
	Err      error  // the cause, usually one of the sentinel errors
	Msg      string // extra explanation appended after Err, optional
}

// Error implements error.
func (e *ParseError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(": ")
	}
	placed := e.Line > 0 || e.RowGroup > 0
	if e.Line > 0 {
		b.WriteString("line ")
		b.WriteString(strconv.Itoa(e.Line))
	} else if e.RowGroup > 0 {
		b.WriteString("row group ")
		b.WriteString(strconv.Itoa(e.RowGroup))
		b.WriteString(", row ")
		b.WriteString(strconv.Itoa(e.Row))
	}
	if placed && e.Column == "" && e.Char == 0 {
		b.WriteString(": ")
	}
	if e.Column != "" {
		if placed {
			b.WriteString(", ")
		}
		b.WriteString("column ")
		b.WriteString(e.Column)
		b.WriteString(": ")
		if e.Value != "" || !(errors.Is(e.Err, ErrEmptyValue) || errors.Is(e.Err, ErrNoModel)) {
			b.WriteString(quotedValue(e.Value))
			b.WriteByte(' ')
		}
	} else if e.Char > 0 {
		if e.Line > 0 {
			b.WriteString(", ")
		}
		b.WriteString("character ")
		b.WriteString(strconv.Itoa(e.Char))
		b.WriteString(": ")
	}
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	}
	if e.Msg != "" {
		if e.Err != nil {
			b.WriteString(": ")
		}
		b.WriteString(e.Msg)
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *ParseError) Unwrap() error { return e.Err }

// quotedValue quotes a bad value for a message: whole when short, else its
// start and its length, so that a megabyte-long cell never becomes a
// megabyte-long error in the import history.
func quotedValue(v string) string {
	const longest = 64
	if len(v) <= longest {
		return strconv.Quote(v)
	}
	return strconv.Quote(snippet(v[:longest], 0)) + " (" + strconv.Itoa(len(v)) + " bytes)"
}

// reason words a cause for the one value or record at hand ("12 fields, the
// header has 14") while errors.Is still matches its sentinel.
type reason struct {
	text string
	is   error
}

func (r *reason) Error() string        { return r.text }
func (r *reason) Is(target error) bool { return target == r.is }
