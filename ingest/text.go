package ingest

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// This file holds the check every cell passes before a parser sees it.
// Imports end up in Postgres text and jsonb columns, which hold UTF-8 and
// nothing else: no invalid byte sequences and no NUL. A cell that breaks
// either would fail deep inside COPY with an error that names no line, so
// the Reader refuses it up front, once for all sources, with its place in
// the file and a word on the likely encoding.

// badText returns the byte offset of the first byte of s that Postgres text
// cannot hold (a NUL, or a byte that does not belong to valid UTF-8), or -1.
func badText(s string) int {
	if strings.IndexByte(s, 0) < 0 && utf8.ValidString(s) {
		return -1 // the common case, at the speed of the two scans above
	}
	for i := 0; i < len(s); {
		if s[i] == 0 {
			return i
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

// recordText returns a record's cells as one string, when they lie side by
// side in memory, and false otherwise. encoding/csv returns a record's
// fields as consecutive slices of one string, so the record's text can be
// checked in one pass; each cell's place is verified rather than assumed,
// so a record built any other way is checked cell by cell instead.
func recordText(rec []string) (string, bool) {
	var start *byte
	var base uintptr // start's address: compared, never turned back into a pointer
	n := 0
	for _, cell := range rec {
		if len(cell) == 0 {
			continue // an empty cell's pointer says nothing of its place
		}
		p := unsafe.StringData(cell)
		if start == nil {
			start, base = p, uintptr(unsafe.Pointer(p))
		} else if uintptr(unsafe.Pointer(p)) != base+uintptr(n) {
			return "", false
		}
		n += len(cell)
	}
	if start == nil {
		return "", true
	}
	return unsafe.String(start, n), true
}

// splitRune reports whether a cell of rec starts with a UTF-8 continuation
// byte: no valid cell does, and without this check the cells joined by
// recordText could hide an invalid end of one cell and start of the next
// ("caf\xc3" and "\xa9") behind a valid character.
func splitRune(rec []string) bool {
	for _, cell := range rec {
		if len(cell) > 0 && cell[0]&0xc0 == 0x80 {
			return true
		}
	}
	return false
}

// textReason says what is wrong with s at offset at (from badText): the
// wording, what the file probably is instead, and the sentinel.
func textReason(s string, at int) (what, hint string, sentinel error) {
	if s[at] == 0 {
		if looksUTF16(s) {
			return "contains a NUL byte", "the file looks like UTF-16 without a byte-order mark; save it as UTF-8", ErrNULByte
		}
		return "contains a NUL byte", "text cannot hold NUL bytes; is this a binary file? Burnrate reads CSV saved as UTF-8", ErrNULByte
	}
	return "is not valid UTF-8",
		fmt.Sprintf("byte 0x%02x is not UTF-8; the file is probably Latin-1 or Windows-1252: save it as UTF-8 (in Excel: CSV UTF-8)", s[at]),
		ErrNotUTF8
}

// looksUTF16 reports whether s reads like UTF-16 text taken as bytes: ASCII
// letters with a NUL byte between each.
func looksUTF16(s string) bool {
	return len(s) >= 2 && strings.Count(s, "\x00")*3 >= len(s)
}

// snippet returns up to about 40 bytes of s around offset at, cut on rune
// boundaries where there are some, with "…" where it was cut: enough to
// find the value, never a whole multi-megabyte cell in an error message.
func snippet(s string, at int) string {
	const before, after = 16, 24
	start, end := max(0, at-before), min(len(s), at+after)
	for start > 0 && start < at && !utf8.RuneStart(s[start]) {
		start++
	}
	for end < len(s) && end > at+1 && !utf8.RuneStart(s[end]) {
		end--
	}
	out := s[start:end]
	if start > 0 {
		out = "…" + out
	}
	if end < len(s) {
		out += "…"
	}
	return out
}

// headerTextError reports header field i (0-based) that Postgres cannot
// store. The name itself is no use as a column name in the error: it is the
// bad text, so the field is named by its position and shown escaped.
func headerTextError(file string, i int, name string, at int) error {
	what, hint, sentinel := textReason(name, at)
	return &ParseError{File: file, Line: 1,
		Err: &reason{fmt.Sprintf("header field %d %s %s", i+1, strconv.Quote(snippet(name, at)), what), sentinel},
		Msg: hint}
}

// cellTextError reports a cell that Postgres cannot store, at line of the
// file under column; the value is shown around the bad byte only.
func cellTextError(file string, line int, column, cell string, at int) error {
	what, hint, sentinel := textReason(cell, at)
	return &ParseError{File: file, Line: line, Column: column, Value: snippet(cell, at),
		Err: &reason{what, sentinel}, Msg: hint}
}
