package ingest

// This file is encoding/csv's Reader (Go 1.26, BSD licence: Copyright 2011
// The Go Authors), cut down to the settings the Reader uses (a comma, no
// comments, strict quotes, any width, the record slice reused) and with one
// change: a record that is one line and has no doubled quote, which is
// nearly every record of a billing export, is split in place rather than
// copied field by field into a buffer (lineRecord). encoding/csv was more than half of a large CUR's
// parse time, most of it that copying. Records with quotes go through the
// original code, and both ways return the same fields, positions and
// errors (*csv.ParseError with csv.ErrQuote and csv.ErrBareQuote), which
// TestCSVReaderMatchesEncodingCSV checks.

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"io"
	"math/bits"
	"strings"
)

// csvReader reads CSV records like an encoding/csv Reader with
// FieldsPerRecord -1 and ReuseRecord set.
type csvReader struct {
	r *bufio.Reader

	numLine   int    // the line being read
	rawBuffer []byte // a line longer than r's buffer

	// A record with quotes: its unquoted fields, one after another with a
	// comma between each (so that text holds every field and nothing can
	// run from one field into the next), the end of each field, and where
	// each started.
	recordBuffer   []byte
	fieldIndexes   []int
	fieldPositions []csvPosition

	// text is one string the last record's fields are slices of, holding
	// them in order, with nothing between them but commas and quotes.
	text string
	// lineStart is the line of the last record when lineRecord read it,
	// 0 otherwise; starts are then its fields' offsets in the line.
	lineStart int
	starts    []int

	lastRecord []string
}

type csvPosition struct{ line, col int }

func newCSVReader(r *bufio.Reader) *csvReader { return &csvReader{r: r} }

// Read reads one record. The slice is reused by the next call; the strings
// are not.
func (r *csvReader) Read() ([]string, error) {
	rec, err := r.readRecord(r.lastRecord)
	r.lastRecord = rec
	return rec, err
}

// Text returns one string holding the last record's fields in order, with
// only commas and quotes between them: what to check for bytes Postgres
// cannot store, in one pass (an ASCII byte between two fields keeps them
// from making one character together).
func (r *csvReader) Text() string { return r.text }

// FieldPos returns the line and the column (1-based, in bytes) where field
// starts in the last record.
func (r *csvReader) FieldPos(field int) (line, column int) {
	if r.lineStart > 0 {
		return r.lineStart, r.starts[field] + 1
	}
	if field < 0 || field >= len(r.fieldPositions) {
		panic("out of range index passed to FieldPos")
	}
	p := &r.fieldPositions[field]
	return p.line, p.col
}

// readLine reads the next line (with the trailing endline).
// If EOF is hit without a trailing endline, it will be omitted.
// If some bytes were read, then the error is never io.EOF.
// The result is only valid until the next call to readLine.
func (r *csvReader) readLine() ([]byte, error) {
	line, err := r.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		r.rawBuffer = append(r.rawBuffer[:0], line...)
		for err == bufio.ErrBufferFull {
			line, err = r.r.ReadSlice('\n')
			r.rawBuffer = append(r.rawBuffer, line...)
		}
		line = r.rawBuffer
	}
	readSize := len(line)
	if readSize > 0 && err == io.EOF {
		err = nil
		// For backwards compatibility, drop trailing \r before EOF.
		if line[readSize-1] == '\r' {
			line = line[:readSize-1]
		}
	}
	r.numLine++
	// Normalize \r\n to \n on all input lines.
	if n := len(line); n >= 2 && line[n-2] == '\r' && line[n-1] == '\n' {
		line[n-2] = '\n'
		line = line[:n-1]
	}
	return line, err
}

// lengthNL reports the number of bytes for the trailing \n.
func lengthNL(b []byte) int {
	if len(b) > 0 && b[len(b)-1] == '\n' {
		return 1
	}
	return 0
}

func (r *csvReader) readRecord(dst []string) ([]string, error) {
	// Read line (automatically skipping past empty lines).
	var line []byte
	var errRead error
	for errRead == nil {
		line, errRead = r.readLine()
		if errRead == nil && len(line) == lengthNL(line) {
			line = nil
			continue // Skip empty lines
		}
		break
	}
	if errRead == io.EOF {
		return nil, errRead
	}
	if rec, ok := r.lineRecord(dst, line); ok {
		return rec, errRead
	}
	r.lineStart = 0

	// Parse each field in the record.
	var err error
	const quoteLen = len(`"`)
	const commaLen = len(`,`)
	recLine := r.numLine // Starting line for record
	r.recordBuffer = r.recordBuffer[:0]
	r.fieldIndexes = r.fieldIndexes[:0]
	r.fieldPositions = r.fieldPositions[:0]
	pos := csvPosition{line: r.numLine, col: 1}
parseField:
	for {
		if len(r.fieldIndexes) > 0 {
			r.recordBuffer = append(r.recordBuffer, ',')
		}
		if len(line) == 0 || line[0] != '"' {
			// Non-quoted string field
			i := bytes.IndexByte(line, ',')
			field := line
			if i >= 0 {
				field = field[:i]
			} else {
				field = field[:len(field)-lengthNL(field)]
			}
			// Check to make sure a quote does not appear in field.
			if j := bytes.IndexByte(field, '"'); j >= 0 {
				col := pos.col + j
				err = &csv.ParseError{StartLine: recLine, Line: r.numLine, Column: col, Err: csv.ErrBareQuote}
				break parseField
			}
			r.recordBuffer = append(r.recordBuffer, field...)
			r.fieldIndexes = append(r.fieldIndexes, len(r.recordBuffer))
			r.fieldPositions = append(r.fieldPositions, pos)
			if i >= 0 {
				line = line[i+commaLen:]
				pos.col += i + commaLen
				continue parseField
			}
			break parseField
		} else {
			// Quoted string field
			fieldPos := pos
			line = line[quoteLen:]
			pos.col += quoteLen
			for {
				i := bytes.IndexByte(line, '"')
				if i >= 0 {
					// Hit next quote.
					r.recordBuffer = append(r.recordBuffer, line[:i]...)
					line = line[i+quoteLen:]
					pos.col += i + quoteLen
					switch {
					case len(line) > 0 && line[0] == '"':
						// `""` sequence (append quote).
						r.recordBuffer = append(r.recordBuffer, '"')
						line = line[quoteLen:]
						pos.col += quoteLen
					case len(line) > 0 && line[0] == ',':
						// `",` sequence (end of field).
						line = line[commaLen:]
						pos.col += commaLen
						r.fieldIndexes = append(r.fieldIndexes, len(r.recordBuffer))
						r.fieldPositions = append(r.fieldPositions, fieldPos)
						continue parseField
					case lengthNL(line) == len(line):
						// `"\n` sequence (end of line).
						r.fieldIndexes = append(r.fieldIndexes, len(r.recordBuffer))
						r.fieldPositions = append(r.fieldPositions, fieldPos)
						break parseField
					default:
						// `"*` sequence (invalid non-escaped quote).
						err = &csv.ParseError{StartLine: recLine, Line: r.numLine, Column: pos.col - quoteLen, Err: csv.ErrQuote}
						break parseField
					}
				} else if len(line) > 0 {
					// Hit end of line (copy all data so far).
					r.recordBuffer = append(r.recordBuffer, line...)
					if errRead != nil {
						break parseField
					}
					pos.col += len(line)
					line, errRead = r.readLine()
					if len(line) > 0 {
						pos.line++
						pos.col = 1
					}
					if errRead == io.EOF {
						errRead = nil
					}
				} else {
					// Abrupt end of file (EOF or error).
					if errRead == nil {
						err = &csv.ParseError{StartLine: recLine, Line: pos.line, Column: pos.col, Err: csv.ErrQuote}
						break parseField
					}
					r.fieldIndexes = append(r.fieldIndexes, len(r.recordBuffer))
					r.fieldPositions = append(r.fieldPositions, fieldPos)
					break parseField
				}
			}
		}
	}
	if err == nil {
		err = errRead
	}

	// Create a single string and create slices out of it.
	// This pins the memory of the fields together, but allocates once.
	str := string(r.recordBuffer) // Convert to string once to batch allocations
	r.text = str
	dst = dst[:0]
	if cap(dst) < len(r.fieldIndexes) {
		dst = make([]string, len(r.fieldIndexes))
	}
	dst = dst[:len(r.fieldIndexes)]
	var preIdx int
	for i, idx := range r.fieldIndexes {
		dst[i] = str[preIdx:idx]
		preIdx = idx + commaLen
	}
	return dst, err
}

// lineRecord splits a record that is one line and whose quoted fields
// hold no doubled quote (nearly every record of a billing export) in place:
// its fields are slices of one copy of the line, quotes left out. It
// returns false, having changed nothing the caller sees, for any other
// line (a field over several lines, a doubled or a stray quote), which
// readRecord then reads field by field.
func (r *csvReader) lineRecord(dst []string, line []byte) ([]string, bool) {
	str := string(line[:len(line)-lengthNL(line)])
	dst, starts := dst[:0], r.starts[:0]
	quote := strings.IndexByte(str, '"') // the next quote at or after off, or -1
	for off := 0; ; {
		if quote != off {
			end := commaAt(str, off)
			if quote >= 0 && quote < end {
				return dst, false // a stray quote in an unquoted field
			}
			dst, starts = append(dst, str[off:end]), append(starts, off)
			if end == len(str) {
				break
			}
			off = end + 1
			continue
		}
		// A quoted field: it must close before the end of the line, and
		// at a comma or the end, not at a doubled quote.
		i := strings.IndexByte(str[off+1:], '"')
		if i < 0 {
			return dst, false
		}
		end := off + 1 + i
		if end+1 < len(str) && str[end+1] != ',' {
			return dst, false
		}
		dst, starts = append(dst, str[off+1:end]), append(starts, off)
		if end+1 == len(str) {
			break
		}
		off = end + 2
		if quote = strings.IndexByte(str[off:], '"'); quote >= 0 {
			quote += off
		}
	}
	r.text, r.lineStart, r.starts = str, r.numLine, starts
	return dst, true
}

// commaAt returns the index of the first comma in s at or after off, or
// len(s). Most fields of an export are a few bytes long, so it looks at
// eight bytes at a time in a register rather than calling IndexByte for
// each (which would be a quarter of a wide CUR's parse time): a byte of w ^
// commas is zero where s has a comma, and the lowest byte the zero-byte
// test flags is the first such one (the test's false positives lie only
// above a true zero byte).
func commaAt(s string, off int) int {
	const ones, highs, commas = 0x0101010101010101, 0x8080808080808080, 0x2c2c2c2c2c2c2c2c
	for ; off+8 <= len(s); off += 8 {
		w := uint64(s[off]) | uint64(s[off+1])<<8 | uint64(s[off+2])<<16 | uint64(s[off+3])<<24 |
			uint64(s[off+4])<<32 | uint64(s[off+5])<<40 | uint64(s[off+6])<<48 | uint64(s[off+7])<<56
		x := w ^ commas
		if m := (x - ones) &^ x & highs; m != 0 {
			return off + bits.TrailingZeros64(m)/8
		}
	}
	for ; off < len(s); off++ {
		if s[off] == ',' {
			return off
		}
	}
	return len(s)
}
