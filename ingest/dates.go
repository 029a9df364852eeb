package ingest

import (
	"time"
)

// earliestDate is the first day a date in a file may fall on. No cloud bill
// or LLM usage log predates 2000; a date before it is nearly always a count,
// an epoch zero or the wrong column read as a date, and importing it would
// put spend decades away from where anyone looks for it.
var earliestDate = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// dateBounds are the instants every date read from a file must fall within:
// from earliestDate to a year after the Reader's clock said now. Exports run
// ahead of today only by a billing period or a commitment's next month,
// never by years.
type dateBounds struct{ lo, hi time.Time }

func boundsAt(now time.Time) dateBounds {
	return dateBounds{lo: earliestDate, hi: now.UTC().AddDate(1, 0, 0)}
}

// check returns why t is out of bounds (wrapping ErrDateRange), or nil.
func (b dateBounds) check(t time.Time) error {
	switch {
	case t.Before(b.lo):
		return &reason{"is before 2000", ErrDateRange}
	case t.After(b.hi):
		return &reason{"is more than a year from today", ErrDateRange}
	}
	return nil
}

// span is the range accepted, for error messages.
func (b dateBounds) span() string {
	return "dates from " + b.lo.Format(time.DateOnly) + " to " + b.hi.Format(time.DateOnly) + " are accepted"
}

// inRange checks a date read from cell i. Every date a parser reads goes
// through here: c.time calls it, and so do the parsers that read dates some
// other way (a start/end interval, a YYYYMM month, a mapping's layout).
func (c *rowCtx) inRange(i int, t time.Time) error {
	if err := c.date.check(t); err != nil {
		return c.errAt(i, err, c.date.span())
	}
	return nil
}
