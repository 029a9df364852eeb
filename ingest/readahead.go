package ingest

import (
	"cmp"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/burnrate/burnrate/store"
)

// An import reads its file on a goroutine of its own, a few batches of rows
// ahead of the COPY: reading and parsing a row and encoding it for Postgres
// each take about half of an import's client time, and on two cores or more
// they overlap (docs/architecture.md, "An import").

const (
	batchRows    = 256 // rows handed over at a time
	batchesAhead = 4   // batches read but not yet copied, at most
)

// chargeBatch is a run of rows read ahead. Each row has its own tags map,
// reused from batch to batch, since the Reader's is overwritten by its
// next row.
type chargeBatch struct {
	charges [batchRows]store.Charge
	tags    [batchRows]map[string]string
	n       int
	err     error // what ended the file after these n rows (io.EOF at its end); nil: more to come
}

// chargeSource feeds a Reader's rows to store.WriteCharges and notes the
// file's period on the way. The import's totals are not added up here but
// by the store, from what it stored.
//
// Next, Charge and Err are called by the COPY; the Reader is read by the
// goroutine Next starts, and by nobody else until stop returns.
type chargeSource struct {
	ctx      context.Context // the import's: reading stops when it ends
	rd       *Reader
	loc      *time.Location
	progress func(rows int64)
	quota    Quota

	// The reading goroutine's, until stop returns.
	row         Row
	first, last *time.Time
	extents     extents

	// The COPY's.
	cur   *chargeBatch
	i     int
	ch    *store.Charge
	rows  int64
	ended bool
	err   error

	started, stopped bool
	full, free       chan *chargeBatch
	quit, done       chan struct{}
}

func newChargeSource(ctx context.Context, rd *Reader, loc *time.Location) *chargeSource {
	return &chargeSource{ctx: ctx, rd: rd, loc: loc, quota: Quota{Left: -1}}
}

// start starts the reading goroutine with batchesAhead+1 batches: those it
// may fill ahead and the one being copied.
func (s *chargeSource) start() {
	s.started = true
	s.full = make(chan *chargeBatch, batchesAhead)
	s.free = make(chan *chargeBatch, batchesAhead+1)
	s.quit, s.done = make(chan struct{}), make(chan struct{})
	for range batchesAhead + 1 {
		s.free <- new(chargeBatch)
	}
	go s.read()
}

// stop ends the reading goroutine, should the COPY end before the file
// does, and waits for it. It may be called more than once.
func (s *chargeSource) stop() {
	if !s.started || s.stopped {
		return
	}
	s.stopped = true
	close(s.quit)
	<-s.done
}

// read fills batches until the file ends, fails, its context ends, or stop
// is called.
func (s *chargeSource) read() {
	defer close(s.done)
	for {
		var b *chargeBatch
		select {
		case b = <-s.free:
		case <-s.quit:
			return
		}
		b.n, b.err = 0, nil
		if s.ctx.Err() != nil {
			b.err = context.Cause(s.ctx)
		}
		for b.n < batchRows && b.err == nil {
			if b.err = s.readRow(b, b.n); b.err == nil {
				b.n++
			}
		}
		select {
		case s.full <- b:
		case <-s.quit:
			return
		}
		if b.err != nil {
			return
		}
	}
}

// readRow reads the next row into slot k of b.
func (s *chargeSource) readRow(b *chargeBatch, k int) error {
	if b.tags[k] == nil {
		b.tags[k] = make(map[string]string, 8)
	}
	s.rd.useTags(b.tags[k])
	if err := s.rd.Next(&s.row); err != nil {
		return err
	}
	r := &s.row
	b.charges[k] = store.Charge{
		Line:               s.rd.Line(),
		Source:             string(r.Source),
		ProviderName:       r.ProviderName,
		ServiceName:        r.ServiceName,
		ServiceCategory:    r.ServiceCategory,
		SKU:                r.SKU,
		ResourceID:         r.ResourceID,
		RegionID:           r.RegionID,
		SubAccountID:       r.SubAccountID,
		ChargeCategory:     string(r.ChargeCategory),
		ChargePeriodStart:  r.ChargePeriodStart,
		ChargePeriodEnd:    r.ChargePeriodEnd,
		BilledCost:         r.BilledCost,
		EffectiveCost:      r.EffectiveCost,
		ListCost:           r.ListCost,
		BillingCurrency:    r.BillingCurrency,
		ConsumedQuantity:   r.ConsumedQuantity,
		ConsumedUnit:       r.ConsumedUnit,
		Tags:               r.Tags,
		Team:               r.Team,
		InstanceType:       r.InstanceType,
		GPUType:            r.GPUType,
		GPUCount:           r.GPUCount,
		GPUHours:           r.GPUHours,
		Model:              r.Model,
		InputTokens:        r.InputTokens,
		OutputTokens:       r.OutputTokens,
		CachedTokens:       r.CachedTokens,
		Requests:           r.Requests,
		PricedByUs:         r.PricedByUs,
		BillingAccountID:   r.BillingAccountID,
		BillingPeriodStart: r.BillingPeriodStart,
		DedupeKey:          r.DedupeKey,
		ProviderRaw:        r.ProviderRaw,
		ServiceRaw:         r.ServiceRaw,
	}
	s.notePeriod(r.ChargePeriodStart)
	s.extents.note(r, s.loc)
	return nil
}

// notePeriod widens the file's period to t's day, in days of the org's
// time zone, like the dashboard.
func (s *chargeSource) notePeriod(start time.Time) {
	t := start.In(s.loc)
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	if s.first == nil || day.Before(*s.first) {
		d := day
		s.first = &d
	}
	if s.last == nil || day.After(*s.last) {
		d := day
		s.last = &d
	}
}

// Next moves to the next row, waiting for the reading goroutine when it
// has none ready.
func (s *chargeSource) Next() bool {
	if s.ended || s.err != nil {
		return false
	}
	if !s.started {
		s.start()
	}
	for s.cur == nil || s.i == s.cur.n {
		if s.cur != nil {
			if s.cur.err != nil {
				s.ended = true
				if !errors.Is(s.cur.err, io.EOF) {
					s.err = s.cur.err
				}
				return false
			}
			s.free <- s.cur // never blocks: free holds every batch
		}
		select {
		case s.cur = <-s.full:
			s.i = 0
		case <-s.quit:
			s.cur, s.ended = nil, true
			return false
		case <-s.ctx.Done():
			s.cur, s.err = nil, context.Cause(s.ctx)
			return false
		}
	}
	s.ch = &s.cur.charges[s.i]
	s.i++
	s.rows++
	if s.quota.Left >= 0 && s.rows > s.quota.Left {
		s.err = &quotaExceeded{s.quota.Refuse(s.rows)}
		return false
	}
	if s.progress != nil && s.rows%progressEvery == 0 {
		s.progress(s.rows)
	}
	return true
}

func (s *chargeSource) Charge() *store.Charge { return s.ch }
func (s *chargeSource) Err() error            { return s.err }

// CostBasis is the file's cost basis, known once its rows are read.
func (s *chargeSource) CostBasis() store.CostBasis { return s.rd.CostBasis() }

// dayLong is the longest charge period that counts towards how far a
// source's data reaches: a day, across a daylight-saving change. Longer
// rows (a month's fee, a commitment, a credit) are dated by their start;
// a row shorter than an hour (a request) counts as its day in the org's
// time zone.
const dayLong = 25 * time.Hour

// extents are how far a file's rows reach per provider and billing
// account (store.ImportExtent), gathered row by row as they are read.
type extents struct {
	by   map[extentKey]*extent
	last *extent // the previous row's: rows of one key come in runs
}

type extentKey struct{ provider, account string }

type extent struct {
	key                extentKey
	first, last        time.Time // days, in the org's zone
	through, lastStart time.Time
	short              bool // some row was at most dayLong: through is set
}

// note widens the extent of r's provider and billing account to r.
func (x *extents) note(r *Row, loc *time.Location) {
	e := x.last
	if e == nil || e.key.provider != r.ProviderName || e.key.account != r.BillingAccountID {
		k := extentKey{r.ProviderName, r.BillingAccountID}
		if e = x.by[k]; e == nil {
			if x.by == nil {
				x.by = map[extentKey]*extent{}
			}
			e = &extent{key: k}
			x.by[k] = e
		}
		x.last = e
	}
	t := r.ChargePeriodStart.In(loc)
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	if e.first.IsZero() || day.Before(e.first) {
		e.first = day
	}
	if day.After(e.last) {
		e.last = day
	}
	if r.ChargePeriodStart.After(e.lastStart) {
		e.lastStart = r.ChargePeriodStart
	}
	end := r.ChargePeriodEnd
	if end.Sub(r.ChargePeriodStart) < time.Hour {
		// A request (or a charge given only its time) is data of its day,
		// not of its second: a log reaches at least the end of the day of
		// its last line. Buckets are an hour or more.
		end = time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, loc)
	}
	if end.Sub(r.ChargePeriodStart) <= dayLong && (!e.short || end.After(e.through)) {
		e.through, e.short = end, true
	}
}

// list is the extents as stored, in a stable order.
func (x *extents) list() []store.ImportExtent {
	out := make([]store.ImportExtent, 0, len(x.by))
	for _, e := range x.by {
		through := e.through
		if !e.short {
			through = e.lastStart
		}
		out = append(out, store.ImportExtent{Provider: e.key.provider, BillingAccount: e.key.account,
			FirstDay: e.first, LastDay: e.last, DataThrough: through.UTC()})
	}
	slices.SortFunc(out, func(a, b store.ImportExtent) int {
		return cmp.Or(strings.Compare(a.Provider, b.Provider), strings.Compare(a.BillingAccount, b.BillingAccount))
	})
	return out
}
