package store

import (
	"encoding/binary"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// collectDaySpend reads rows of (day date, currency text, group text,
// amount numeric, other bool[, other_groups int4]) into DaySpends.
//
// A dashboard view reads thousands of these rows (a year by a dozen groups
// in two currencies is nine thousand), and through Scan each costs a DaySpend
// on the heap and two new strings, the same few currencies and group names
// over and over: allocation and the garbage collection it brings would be
// the largest share of a cold view's CPU. Here the values are decoded from their
// wire form, the names kept once per read, and the slice sized to hint.
// Rows in a form not expected (a text-format column, a numeric beyond
// int64) take Scan's path, row by row, so the result is the same.
func collectDaySpend(rows pgx.Rows, hint int) ([]DaySpend, error) {
	out, _, err := readDaySpend(rows, hint, false)
	return out, err
}

// collectDaySpendCharges is collectDaySpend over rows whose sixth column
// is not other_groups but each row's count of charges (int8), returned
// beside them, in the same order.
func collectDaySpendCharges(rows pgx.Rows, hint int) ([]DaySpend, []int64, error) {
	return readDaySpend(rows, hint, true)
}

// readDaySpend is collectDaySpend, or with charges collectDaySpendCharges.
func readDaySpend(rows pgx.Rows, hint int, charges bool) ([]DaySpend, []int64, error) {
	defer rows.Close()
	fds := rows.FieldDescriptions()
	if len(fds) < 5 || !binaryColumns(fds, pgtype.DateOID, pgtype.TextOID, pgtype.TextOID, pgtype.NumericOID, pgtype.BoolOID) ||
		(charges && (len(fds) < 6 || !binaryColumns(fds[5:], pgtype.Int8OID))) {
		return scanDaySpend(rows, hint, charges)
	}
	withCount := len(fds) > 5 && !charges
	var counts []int64
	if charges {
		counts = make([]int64, 0, hint)
	}
	names := map[string]string{}
	name := func(b []byte) string {
		if s, ok := names[string(b)]; ok {
			return s
		}
		s := string(b)
		names[s] = s
		return s
	}
	out := make([]DaySpend, 0, hint)
	for rows.Next() {
		raw := rows.RawValues()
		var d DaySpend
		day, ok := decodeDate(raw[0])
		amount, okAmount := decodeNumeric(raw[3])
		if !ok || !okAmount || len(raw[4]) != 1 || raw[1] == nil || raw[2] == nil || (charges && len(raw[5]) != 8) {
			// NULLs, infinite days, numerics beyond int64: Scan says what
			// they are, or fails as it always has.
			d, n, err := scanDaySpendRow(rows, charges)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, d)
			if charges {
				counts = append(counts, n)
			}
			continue
		}
		d.Day, d.Currency, d.Group, d.Amount, d.Other = day, name(raw[1]), name(raw[2]), amount, raw[4][0] != 0
		if withCount && d.Other {
			var n int
			if err := rows.Scan(nil, nil, nil, nil, nil, &n); err != nil {
				return nil, nil, err
			}
			d.OtherGroups = n
		}
		if charges {
			counts = append(counts, int64(binary.BigEndian.Uint64(raw[5])))
		}
		out = append(out, d)
	}
	return out, counts, rows.Err()
}

// binaryColumns reports whether fds start with columns of types oids, each
// in binary format.
func binaryColumns(fds []pgconn.FieldDescription, oids ...uint32) bool {
	for i, oid := range oids {
		if fds[i].DataTypeOID != oid || (fds[i].Format != pgtype.BinaryFormatCode && oid != pgtype.TextOID) {
			return false
		}
	}
	return true
}

// decodeDate reads Postgres's binary date (days since 2000-01-01) as
// pgx's date codec scans it into a time.Time: midnight UTC. ok is false
// for NULL and the infinities.
func decodeDate(src []byte) (time.Time, bool) {
	if len(src) != 4 {
		return time.Time{}, false
	}
	days := int32(binary.BigEndian.Uint32(src))
	if days == math.MaxInt32 || days == math.MinInt32 {
		return time.Time{}, false
	}
	return time.Date(2000, 1, 1+int(days), 0, 0, 0, 0, time.UTC), true
}

// scanDaySpend is readDaySpend through Scan.
func scanDaySpend(rows pgx.Rows, hint int, charges bool) ([]DaySpend, []int64, error) {
	out := make([]DaySpend, 0, hint)
	var counts []int64
	for rows.Next() {
		d, n, err := scanDaySpendRow(rows, charges)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, d)
		if charges {
			counts = append(counts, n)
		}
	}
	return out, counts, rows.Err()
}

// scanDaySpendRow scans one row; with charges, its sixth column is the
// row's count of charges, returned as n.
func scanDaySpendRow(rows pgx.Rows, charges bool) (d DaySpend, n int64, err error) {
	switch {
	case charges:
		err = rows.Scan(&d.Day, &d.Currency, &d.Group, &d.Amount, &d.Other, &n)
	case len(rows.FieldDescriptions()) > 5:
		err = rows.Scan(&d.Day, &d.Currency, &d.Group, &d.Amount, &d.Other, &d.OtherGroups)
	default:
		err = rows.Scan(&d.Day, &d.Currency, &d.Group, &d.Amount, &d.Other)
	}
	if !d.Other {
		d.OtherGroups = 0 // counted on Other rows only
	}
	return d, n, err
}

// days is how many days f spans (at least one): the start of a guess at
// how many day rows a read of it returns.
func (f SpendFilter) days() int {
	n := int(f.To.Sub(f.From).Hours()/24) + 1
	return min(max(n, 1), maxHintDays)
}

// maxHintDays bounds a guess made from a filter's days.
const maxHintDays = 4000
