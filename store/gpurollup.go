package store

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	pgxdecimal "github.com/jackc/pgx-shopspring-decimal"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/quantity"
)

// gpuRollupColumns are gpu_resource_daily's columns, in the order
// gpuRollup encodes them.
const gpuRollupColumns = `org_id, day, provider, resource_id, instance_type, gpu_type, gpu_count, currency, purchase, team, untagged, gpu_hours, cost, rows`

// gpuRollupSelect is the GPU usage rollup of the charges matching where
// (over alias c, $1 the org), with days in the time zone parameter tz: the
// same rows and keys as gpuRollup.add.
func gpuRollupSelect(tz, where string) string {
	return `
		INSERT INTO gpu_resource_daily (` + gpuRollupColumns + `)
		SELECT c.org_id, (c.charge_period_start AT TIME ZONE ` + tz + `)::date, c.provider_name, c.resource_id,
			c.x_instance_type, c.x_gpu_type, c.x_gpu_count, c.billing_currency,
			` + PurchaseSQL("c.sku", "c.effective_cost", "c.billed_cost") + `,
			c.team, (c.tags IS NULL OR c.tags = '{}'::jsonb),
			sum(c.x_gpu_hours), sum(c.effective_cost), count(*)
		FROM charges c
		WHERE c.org_id = $1 AND c.x_gpu_hours > 0 AND c.charge_category = 'Usage' AND ` + where + `
		GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11`
}

// gpuUsageRows is the GPU usage of the relation from (goneColumns' shape),
// one row a charge, counted with sign ("" or "-"), in gpu_resource_daily's
// columns after org_id; tz is the parameter holding the org's time zone.
// billed, effective and hours are the charges' billed_cost, effective_cost
// and x_gpu_hours, or what an update sets them to: the key (the purchase
// kind) and the measures follow them.
func gpuUsageRows(from, tz, sign, billed, effective, hours string) string {
	return `
		SELECT (charge_period_start AT TIME ZONE ` + tz + `)::date AS day, provider_name AS provider, resource_id,
			x_instance_type AS instance_type, x_gpu_type AS gpu_type, x_gpu_count AS gpu_count, billing_currency AS currency,
			` + PurchaseSQL("sku", effective, billed) + ` AS purchase,
			team, untagged, ` + sign + hours + ` AS gpu_hours, ` + sign + effective + ` AS cost, ` + sign + `1 AS rows
		FROM ` + from + `
		WHERE ` + hours + ` > 0 AND charge_category = 'Usage'`
}

// gpuCompact are CTEs (following one named gpu_delta, gpuUsageRows' shape,
// and $1 the org) that add gpu_delta to gpu_resource_daily: every day it
// touches is rewritten compacted, one row a key, without the keys left
// with no charges, so that a restated month does not leave its old rows
// and their negations behind (see migrations/000026).
const gpuCompact = `
		gpu_days AS (
			SELECT DISTINCT day FROM gpu_delta
		), gpu_old AS (
			DELETE FROM gpu_resource_daily g USING gpu_days t WHERE g.org_id = $1 AND g.day = t.day
			RETURNING g.day, g.provider, g.resource_id, g.instance_type, g.gpu_type, g.gpu_count, g.currency,
				g.purchase, g.team, g.untagged, g.gpu_hours, g.cost, g.rows
		), gpu_new AS (
			INSERT INTO gpu_resource_daily (` + gpuRollupColumns + `)
			SELECT $1, day, provider, resource_id, instance_type, gpu_type, gpu_count, currency, purchase, team,
				untagged, sum(gpu_hours), sum(cost), sum(rows)
			FROM (SELECT * FROM gpu_old UNION ALL SELECT * FROM gpu_delta) x
			GROUP BY 2, 3, 4, 5, 6, 7, 8, 9, 10, 11
			HAVING sum(rows) <> 0
		)`

// gpuRollupMaxKeys bounds the keys gpuRollup adds up in memory; past it,
// what it holds goes to its spill file. A variable for tests.
var gpuRollupMaxKeys = 1 << 12

// gpuRollup adds up an import's GPU usage rows (docs/savings.md, "What the
// bills say") per gpu_resource_daily key as they stream past, so that the
// rollup costs one COPY of narrow rows after the charges' COPY rather than
// a second pass over the wide rows in Postgres. gpu_resource_daily holds
// signed deltas (see migrations/000026), so a key may be written more than
// once: memory stays bounded by spilling the sums to a temporary file,
// already encoded, whenever gpuRollupMaxKeys keys are held.
//
// A key is the row's encoded key columns (COPY's binary format), which is
// also what is written: a map key is one allocation that copies only the
// few bytes it needs, not the record its strings point into.
type gpuRollup struct {
	orgID int64
	loc   *time.Location
	index map[string]int32 // encoded key → sums
	keys  []string
	sums  []gpuSums
	key   []byte // the row being added, encoded
	out   []byte // encoded rows not yet in the spill file
	spill *os.File
	w     *bufio.Writer
	err   error
	// The last period start's day, as days since 2000-01-01: consecutive
	// rows mostly share one.
	lastStart time.Time
	lastDay   int32
}

type gpuSums struct {
	hours, cost quantity.Sum
	rows        int64
}

func newGPURollup(orgID int64, loc *time.Location) *gpuRollup {
	return &gpuRollup{orgID: orgID, loc: loc, index: map[string]int32{}}
}

// add counts ch when it is a GPU usage row.
func (g *gpuRollup) add(ch *Charge) {
	if ch.ChargeCategory != "Usage" || !ch.GPUHours.IsPositive() || g.err != nil {
		return
	}
	if !ch.ChargePeriodStart.Equal(g.lastStart) || g.lastStart.IsZero() {
		t := ch.ChargePeriodStart.In(g.loc)
		day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC).Unix()
		g.lastStart, g.lastDay = ch.ChargePeriodStart, int32((day-pgEpoch)/86400)
	}
	purchase := PurchaseOnDemand
	if isSpotSKU(ch.SKU) {
		purchase = PurchaseSpot
	} else if !ch.EffectiveCost.Equal(ch.BilledCost) {
		purchase = PurchaseCommitted
	}
	k := binary.BigEndian.AppendUint16(g.key[:0], 14)
	k = appendInt8(k, g.orgID)
	k = binary.BigEndian.AppendUint32(k, 4)
	k = binary.BigEndian.AppendUint32(k, uint32(g.lastDay))
	k = appendText(k, ch.ProviderName)
	k = appendText(k, ch.ResourceID)
	k = appendText(k, ch.InstanceType)
	k = appendText(k, ch.GPUType)
	var err error
	if k, err = appendNumericValue(k, ch.GPUCount); err != nil {
		g.err = err
		return
	}
	k = appendText(k, ch.BillingCurrency)
	k = appendText(k, purchase)
	k = appendText(k, ch.Team)
	k = binary.BigEndian.AppendUint32(k, 1)
	if len(ch.Tags) == 0 {
		k = append(k, 1)
	} else {
		k = append(k, 0)
	}
	g.key = k

	i, ok := g.index[string(k)]
	if !ok {
		if len(g.keys) >= gpuRollupMaxKeys {
			if g.err = g.flush(); g.err != nil {
				return
			}
		}
		i = int32(len(g.keys))
		key := string(k)
		g.index[key] = i
		g.keys = append(g.keys, key)
		g.sums = append(g.sums, gpuSums{})
	}
	s := &g.sums[i]
	s.hours.Add(ch.GPUHours)
	s.cost.Add(ch.EffectiveCost)
	s.rows++
}

// encode appends the held sums to g.out and forgets them.
func (g *gpuRollup) encode() error {
	g.out = slices.Grow(g.out, len(g.keys)*(len(g.key)+40))
	for i, k := range g.keys {
		s := &g.sums[i]
		g.out = append(g.out, k...)
		var err error
		if g.out, err = appendNumericValue(g.out, s.hours.Value()); err != nil {
			return err
		}
		if g.out, err = appendNumericValue(g.out, s.cost.Value()); err != nil {
			return err
		}
		g.out = appendInt8(g.out, s.rows)
	}
	clear(g.index)
	g.keys, g.sums = g.keys[:0], g.sums[:0]
	return nil
}

// flush moves the held sums to the spill file.
func (g *gpuRollup) flush() error {
	if err := g.encode(); err != nil {
		return err
	}
	if g.spill == nil {
		f, err := os.CreateTemp("", "burnrate-gpu-rollup-*")
		if err != nil {
			return fmt.Errorf("gpu rollup: %w", err)
		}
		g.spill, g.w = f, bufio.NewWriterSize(f, 64<<10)
	}
	if _, err := g.w.Write(g.out); err != nil {
		return fmt.Errorf("gpu rollup: %w", err)
	}
	g.out = g.out[:0]
	return nil
}

// close removes the spill file, if any.
func (g *gpuRollup) close() {
	if g.spill != nil {
		_ = g.spill.Close()
		_ = os.Remove(g.spill.Name())
		g.spill = nil
	}
}

// copyTo writes what was added into gpu_resource_daily by binary COPY on
// conn. Call it where COPY is allowed (see unfenced).
func (g *gpuRollup) copyTo(ctx context.Context, conn *pgx.Conn) error {
	if g.err != nil {
		return g.err
	}
	if err := g.encode(); err != nil {
		return err
	}
	var body io.Reader = bytes.NewReader(g.out)
	if g.spill != nil {
		if err := g.w.Flush(); err != nil {
			return fmt.Errorf("gpu rollup: %w", err)
		}
		if _, err := g.spill.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("gpu rollup: %w", err)
		}
		body = io.MultiReader(bufio.NewReaderSize(g.spill, 64<<10), body)
	}
	header := append([]byte("PGCOPY\n\377\r\n\000"), 0, 0, 0, 0, 0, 0, 0, 0)
	trailer := []byte{0xff, 0xff}
	_, err := conn.PgConn().CopyFrom(ctx, io.MultiReader(bytes.NewReader(header), body, bytes.NewReader(trailer)),
		"COPY gpu_resource_daily ("+gpuRollupColumns+") FROM STDIN BINARY")
	return err
}

// appendNumericValue appends d as a binary COPY field: its length, then
// numeric's binary form.
func appendNumericValue(buf []byte, d decimal.Decimal) ([]byte, error) {
	at := len(buf)
	buf = append(buf, 0, 0, 0, 0)
	var ok bool
	if d.NumDigits() <= 18 {
		buf, ok = appendNumeric(buf, d.CoefficientInt64(), d.Exponent())
	}
	if !ok {
		var err error
		if buf, err = slowNumeric().Encode(pgxdecimal.Decimal(d), buf[:at+4]); err != nil {
			return buf, fmt.Errorf("encode %s: %w", d, err)
		}
	}
	binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
	return buf, nil
}

// slowNumeric encodes numerics past 18 digits.
var slowNumeric = sync.OnceValue(func() pgtype.EncodePlan {
	m := pgtype.NewMap()
	pgxdecimal.Register(m)
	return m.PlanEncode(pgtype.NumericOID, pgtype.BinaryFormatCode, pgxdecimal.Decimal{})
})
