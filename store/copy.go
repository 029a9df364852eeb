package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shopspring/decimal"
)

// An import's rows reach Postgres as COPY … FROM STDIN BINARY, encoded here
// rather than through pgx.CopyFrom: pgx boxes every value of every row into
// an interface and looks up its encode plan by type, which is a third of
// an import's client time on a large CUR. The columns and their types are
// chargeColumns'; a test writes every column both ways and compares.

// pgEpoch is 2000-01-01 UTC, where Postgres counts dates and timestamps from.
var pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).Unix()

// binaryCopy is an io.Reader of c's rows in COPY's binary format.
type binaryCopy struct {
	c       *copySource
	numeric pgtype.EncodePlan // numerics past 18 digits
	buf     []byte            // encoded, not yet read
	off     int
	done    bool
}

func newBinaryCopy(c *copySource, m *pgtype.Map) *binaryCopy {
	b := &binaryCopy{c: c, numeric: m.PlanEncode(pgtype.NumericOID, pgtype.BinaryFormatCode, decimal.Decimal{})}
	b.buf = append(make([]byte, 0, 256<<10), "PGCOPY\n\377\r\n\000"...)
	b.buf = binary.BigEndian.AppendUint32(b.buf, 0) // flags
	b.buf = binary.BigEndian.AppendUint32(b.buf, 0) // header extension
	return b
}

func (b *binaryCopy) Read(p []byte) (int, error) {
	for len(b.buf)-b.off < len(p) && !b.done {
		if b.off > 0 {
			n := copy(b.buf, b.buf[b.off:])
			b.buf, b.off = b.buf[:n], 0
		}
		if !b.c.Next() {
			if b.c.failure() != nil {
				return 0, errSourceFailed
			}
			b.done = true
			b.buf = binary.BigEndian.AppendUint16(b.buf, 0xffff) // end of data
			break
		}
		var err error
		if b.buf, err = b.appendRow(b.buf, b.c.cur); err != nil {
			b.c.err = err
			return 0, errSourceFailed
		}
	}
	n := copy(p, b.buf[b.off:])
	b.off += n
	if n == 0 && b.done {
		return 0, io.EOF
	}
	return n, nil
}

// appendRow appends ch as one tuple, its fields in chargeColumns' order.
func (b *binaryCopy) appendRow(buf []byte, ch *Charge) ([]byte, error) {
	c := b.c
	buf = binary.BigEndian.AppendUint16(buf, uint16(len(chargeColumns)))
	buf = appendInt8(buf, c.orgID)
	buf = appendInt8(buf, c.importID)
	buf = binary.BigEndian.AppendUint32(buf, 4)
	buf = binary.BigEndian.AppendUint32(buf, uint32(int32(ch.Line)))
	for _, s := range [...]string{ch.Source, ch.ProviderName, ch.ServiceName, ch.ServiceCategory, ch.SKU,
		ch.ResourceID, ch.RegionID, ch.SubAccountID, ch.ChargeCategory} {
		buf = appendText(buf, s)
	}
	buf = appendTimestamptz(buf, ch.ChargePeriodStart)
	buf = appendTimestamptz(buf, ch.ChargePeriodEnd)
	var err error
	for _, d := range [...]decimal.Decimal{ch.BilledCost, ch.EffectiveCost, ch.ListCost} {
		if buf, err = b.appendNumeric(buf, d); err != nil {
			return buf, err
		}
	}
	buf = appendText(buf, ch.BillingCurrency)
	if buf, err = b.appendNumeric(buf, ch.ConsumedQuantity); err != nil {
		return buf, err
	}
	buf = appendText(buf, ch.ConsumedUnit)
	if len(ch.Tags) > 0 {
		// jsonb's binary form: a version byte, then the JSON text.
		at := len(buf)
		buf = append(buf, 0, 0, 0, 0, 1)
		buf = appendTagsJSON(buf, ch.Tags)
		binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
	} else {
		buf = appendNull(buf)
	}
	for _, s := range [...]string{ch.Team, ch.InstanceType, ch.GPUType} {
		buf = appendText(buf, s)
	}
	for _, d := range [...]decimal.Decimal{ch.GPUCount, ch.GPUHours} {
		if buf, err = b.appendNumeric(buf, d); err != nil {
			return buf, err
		}
	}
	buf = appendText(buf, ch.Model)
	for _, n := range [...]int64{ch.InputTokens, ch.OutputTokens, ch.CachedTokens, ch.Requests} {
		buf = appendInt8(buf, n)
	}
	buf = binary.BigEndian.AppendUint32(buf, 1)
	if ch.PricedByUs {
		buf = append(buf, 1)
	} else {
		buf = append(buf, 0)
	}
	buf = appendText(buf, ch.BillingAccountID)
	if ch.BillingPeriodStart.IsZero() {
		buf = appendNull(buf)
	} else {
		t := ch.BillingPeriodStart
		day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC).Unix()
		buf = binary.BigEndian.AppendUint32(buf, 4)
		buf = binary.BigEndian.AppendUint32(buf, uint32(int32((day-pgEpoch)/86400)))
	}
	for _, s := range [...]string{ch.DedupeKey, ch.ProviderRaw, ch.ServiceRaw} {
		buf = appendText(buf, s)
	}
	return buf, nil
}

func appendNull(buf []byte) []byte { return binary.BigEndian.AppendUint32(buf, 0xffffffff) }

func appendInt8(buf []byte, n int64) []byte {
	buf = binary.BigEndian.AppendUint32(buf, 8)
	return binary.BigEndian.AppendUint64(buf, uint64(n))
}

func appendText(buf []byte, s string) []byte {
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(s)))
	return append(buf, s...)
}

// appendTimestamptz appends t as microseconds since 2000-01-01 UTC.
func appendTimestamptz(buf []byte, t time.Time) []byte {
	us := (t.Unix()-pgEpoch)*1_000_000 + int64(t.Nanosecond())/1000
	buf = binary.BigEndian.AppendUint32(buf, 8)
	return binary.BigEndian.AppendUint64(buf, uint64(us))
}

// appendNumeric appends d with its length, by the fast path of numeric.go
// when the coefficient fits 18 digits, else by the codec's.
func (b *binaryCopy) appendNumeric(buf []byte, d decimal.Decimal) ([]byte, error) {
	at := len(buf)
	buf = append(buf, 0, 0, 0, 0)
	var ok bool
	if d.NumDigits() <= 18 {
		buf, ok = appendNumeric(buf, d.CoefficientInt64(), d.Exponent())
	}
	if !ok {
		var err error
		if buf, err = b.numeric.Encode(d, buf[:at+4]); err != nil {
			return buf, fmt.Errorf("encode %s: %w", d, err)
		}
	}
	binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
	return buf, nil
}

// copyBinary copies cs into table by binary COPY on the transaction's
// connection, or by pgx.CopyFrom when s is not in a transaction.
func (s *Store) copyBinary(ctx context.Context, table string, cs *copySource) (int64, error) {
	tx, ok := s.q.(pgx.Tx)
	if !ok {
		return s.q.CopyFrom(ctx, pgx.Identifier{table}, chargeColumns, cs)
	}
	cs.binary = true
	conn := tx.Conn()
	tag, err := conn.PgConn().CopyFrom(ctx, newBinaryCopy(cs, conn.TypeMap()),
		"COPY "+pgx.Identifier{table}.Sanitize()+" ("+strings.Join(chargeColumns, ", ")+") FROM STDIN BINARY")
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}
