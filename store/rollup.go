package store

import (
	"context"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/quantity"
)

// The spend rollups (docs/data-model.md, "Rollups") are kept by the store's
// own statements, in the transaction that changes charges: daily_spend,
// and the rollups derived from it (daily_spend_by, month_to_date_drivers,
// month_to_date_spend_by). Whatever adds, deletes or changes charges knows
// the change: an import adds up its rows as they stream past (or reads
// back the sums of the rows it inserted), a deletion or an update returns
// the sums of what it took away. That change, signed, is a spendDelta,
// and spendDelta.write applies it to every rollup at once. (Triggers on
// daily_spend did this until 000034; they cannot run on tables distributed
// by Citus.)

// rollupKey is daily_spend's key within one org.
type rollupKey struct {
	day                                                                         time.Time
	source, provider, service, subAccount, team, model, category, gpu, currency string
}

// rollupSums are daily_spend's measures.
type rollupSums struct {
	billed, effective, gpuHours           quantity.Sum
	input, output, cached, requests, rows int64
}

// rollupValues are rollupSums' values, to add to several sums at once.
type rollupValues struct {
	billed, effective, gpuHours           decimal.Decimal
	input, output, cached, requests, rows int64
}

func (s *rollupSums) values() rollupValues {
	return rollupValues{billed: s.billed.Value(), effective: s.effective.Value(), gpuHours: s.gpuHours.Value(),
		input: s.input, output: s.output, cached: s.cached, requests: s.requests, rows: s.rows}
}

func (s *rollupSums) add(v *rollupValues) {
	s.billed.Add(v.billed)
	s.effective.Add(v.effective)
	s.gpuHours.Add(v.gpuHours)
	s.input += v.input
	s.output += v.output
	s.cached += v.cached
	s.requests += v.requests
	s.rows += v.rows
}

// spendDelta is a signed change of one org's daily_spend, per key, with
// the change of llm_hourly beside it (llm_hourly is not derived from
// daily_spend, but written with it).
type spendDelta struct {
	loc   *time.Location
	sums  map[rollupKey]*rollupSums
	hours llmHours
	// shrinks is set once a key lost charges: write then drops the keys
	// left with none.
	shrinks bool
}

func newSpendDelta(loc *time.Location) *spendDelta {
	return &spendDelta{loc: loc, sums: map[rollupKey]*rollupSums{}, hours: llmHours{}}
}

// sumsAt is m's sums of k, made on first use.
func sumsAt[K comparable](m map[K]*rollupSums, k K) *rollupSums {
	s := m[k]
	if s == nil {
		s = &rollupSums{}
		m[k] = s
	}
	return s
}

// add counts ch, a row being written, as it streams past.
func (d *spendDelta) add(ch *Charge) {
	t := ch.ChargePeriodStart.In(d.loc)
	s := sumsAt(d.sums, rollupKey{
		day: time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC), source: ch.Source, provider: ch.ProviderName,
		service: ch.ServiceName, subAccount: ch.SubAccountID, team: ch.Team, model: ch.Model, category: ch.ChargeCategory,
		gpu: ch.GPUType, currency: ch.BillingCurrency,
	})
	s.billed.Add(ch.BilledCost)
	s.effective.Add(ch.EffectiveCost)
	if !ch.GPUHours.IsZero() {
		s.gpuHours.Add(ch.GPUHours)
	}
	s.input += ch.InputTokens
	s.output += ch.OutputTokens
	s.cached += ch.CachedTokens
	s.requests += ch.Requests
	s.rows++
	d.hours.add(ch)
}

// deltaColumns are the columns deltaSelect returns, in scan order.
const deltaColumns = `day, source, provider, service, sub_account, team, model, charge_category, gpu_type, currency,
	billed, effective, gpu_hours, input_tokens, output_tokens, cached_tokens, requests, rows`

// deltaSelect is the daily_spend change of the charges-shaped relation
// from, signed (sign "" or "-"), in deltaColumns' order; tz is the
// parameter holding the org's time zone.
func deltaSelect(from, tz, sign string) string {
	return `
		SELECT (charge_period_start AT TIME ZONE ` + tz + `)::date, source, provider_name, service_name,
			sub_account_id, team, x_model, charge_category, x_gpu_type, billing_currency,
			` + sign + `sum(billed_cost), ` + sign + `sum(effective_cost), ` + sign + `sum(x_gpu_hours),
			(` + sign + `sum(x_input_tokens))::bigint, (` + sign + `sum(x_output_tokens))::bigint,
			(` + sign + `sum(x_cached_tokens))::bigint, (` + sign + `sum(x_requests))::bigint, ` + sign + `count(*)
		FROM ` + from + `
		GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10`
}

// addRows adds rows of deltaColumns (deltaSelect's) to d, returning the
// charges they count.
func (d *spendDelta) addRows(rows pgx.Rows) (int64, error) {
	var (
		k     rollupKey
		v     rollupValues
		count int64
	)
	_, err := pgx.ForEachRow(rows, []any{&k.day, &k.source, &k.provider, &k.service, &k.subAccount, &k.team, &k.model,
		&k.category, &k.gpu, &k.currency, &v.billed, &v.effective, &v.gpuHours, &v.input, &v.output, &v.cached,
		&v.requests, &v.rows}, func() error {
		sumsAt(d.sums, k).add(&v)
		if v.rows < 0 {
			d.shrinks = true
		}
		count += v.rows
		return nil
	})
	return count, err
}

// totals sums d per currency, in basis's cost. It is the import's own rows'
// total only while d holds nothing but them.
func (d *spendDelta) totals(basis CostBasis) map[string]decimal.Decimal {
	out := map[string]decimal.Decimal{}
	for k, v := range d.sums {
		amount := v.billed.Value()
		if basis == CostAmortized {
			amount = v.effective.Value()
		}
		out[k.currency] = out[k.currency].Add(amount)
	}
	return out
}

// spendDims are daily_spend_by's dimensions: total (the day's sum, with an
// empty value) and daily_spend's key columns.
var spendDims = [...]string{"total", "source", "provider", "service", "sub_account", "team", "model", "charge_category", "gpu_type"}

// eachDim repeats each row of daily_spend d once per spendDims entry, as k
// (dim, value).
const eachDim = `CROSS JOIN LATERAL (VALUES ('total', ''), ('source', d.source), ('provider', d.provider),
	('service', d.service), ('sub_account', d.sub_account), ('team', d.team), ('model', d.model),
	('charge_category', d.charge_category), ('gpu_type', d.gpu_type)) k (dim, value)`

// dimValue is k's value of spendDims[i].
func (k *rollupKey) dimValue(i int) string {
	return [...]string{"", k.source, k.provider, k.service, k.subAccount, k.team, k.model, k.category, k.gpu}[i]
}

// byKey is daily_spend_by's key within one org and day; driverKey is
// month_to_date_drivers'.
type byKey struct{ dim, value, currency string }

type driverKey struct{ provider, service, subAccount, model, currency string }

// dayKey is a key K on one day.
type dayKey[K comparable] struct {
	key K
	day time.Time
}

// spreadMonthToDate spreads day sums over the month: a change on day D of key K
// changes K's month to date on D and every later day of D's month. It calls
// emit once per (key, day) with the change of that day's month to date, in
// no order.
func spreadMonthToDate[K comparable](days map[dayKey[K]]*rollupSums, emit func(k K, day time.Time, v *rollupValues)) {
	type month struct {
		key   K
		start time.Time
	}
	months := map[month][]time.Time{}
	for dk := range days {
		m := month{dk.key, time.Date(dk.day.Year(), dk.day.Month(), 1, 0, 0, 0, 0, time.UTC)}
		months[m] = append(months[m], dk.day)
	}
	for m, ds := range months {
		slices.SortFunc(ds, time.Time.Compare)
		end := m.start.AddDate(0, 1, 0)
		var run rollupSums
		for i, d := range ds {
			v := days[dayKey[K]{m.key, d}].values()
			run.add(&v)
			next := end
			if i+1 < len(ds) {
				next = ds[i+1]
			}
			cur := run.values()
			for day := d; day.Before(next); day = day.AddDate(0, 0, 1) {
				emit(m.key, day, &cur)
			}
		}
	}
}

// write applies d to orgID's daily_spend and the rollups derived from it
// (and its hours to llm_hourly), in one round trip: the change of each
// key, and of each derived key, is added to its row, and when keys lost
// charges, rows left with none are deleted. Rows are written in key order,
// so that two transactions changing the same keys take their locks in the
// same order.
func (d *spendDelta) write(ctx context.Context, q querier, orgID int64) error {
	if len(d.sums) == 0 && len(d.hours) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	if len(d.sums) > 0 {
		d.queueSpend(b, orgID)
	}
	if len(d.hours) > 0 {
		d.hours.queue(b, orgID)
	}
	if d.shrinks {
		lo, hi := d.span()
		lastOfMonth := time.Date(hi.Year(), hi.Month()+1, 0, 0, 0, 0, 0, time.UTC)
		b.Queue(`DELETE FROM daily_spend WHERE org_id = $1 AND day BETWEEN $2 AND $3 AND rows = 0`, orgID, lo, hi)
		b.Queue(`DELETE FROM daily_spend_by WHERE org_id = $1 AND day BETWEEN $2 AND $3 AND rows = 0`, orgID, lo, hi)
		b.Queue(`DELETE FROM month_to_date_drivers WHERE org_id = $1 AND day BETWEEN $2 AND $3 AND rows = 0`, orgID, lo, lastOfMonth)
		b.Queue(`DELETE FROM month_to_date_spend_by WHERE org_id = $1 AND day BETWEEN $2 AND $3 AND rows = 0`, orgID, lo, lastOfMonth)
		b.Queue(`DELETE FROM llm_hourly WHERE org_id = $1 AND rows = 0`, orgID)
	}
	return q.SendBatch(ctx, b).Close()
}

// span is the first and last day d changes.
func (d *spendDelta) span() (lo, hi time.Time) {
	for k := range d.sums {
		if lo.IsZero() || k.day.Before(lo) {
			lo = k.day
		}
		if k.day.After(hi) {
			hi = k.day
		}
	}
	return lo, hi
}

// measureColumns collects measures for a statement's arrays.
type measureColumns struct {
	billed, effective, gpuHours           []decimal.Decimal
	input, output, cached, requests, rows []int64
}

func (m *measureColumns) append(v *rollupValues) {
	m.billed, m.effective, m.gpuHours = append(m.billed, v.billed), append(m.effective, v.effective), append(m.gpuHours, v.gpuHours)
	m.input, m.output, m.cached = append(m.input, v.input), append(m.output, v.output), append(m.cached, v.cached)
	m.requests, m.rows = append(m.requests, v.requests), append(m.rows, v.rows)
}

// queueSpend queues the upserts of daily_spend, daily_spend_by and the
// month-to-date rollups.
func (d *spendDelta) queueSpend(b *pgx.Batch, orgID int64) {
	var (
		days                                                                        []time.Time
		source, provider, service, subAccount, team, model, category, gpu, currency []string
		m                                                                           measureColumns
	)
	by := map[dayKey[byKey]]*rollupSums{}
	drivers := map[dayKey[driverKey]]*rollupSums{}
	for k, s := range d.sums {
		v := s.values()
		days = append(days, k.day)
		source, provider, service = append(source, k.source), append(provider, k.provider), append(service, k.service)
		subAccount, team, model = append(subAccount, k.subAccount), append(team, k.team), append(model, k.model)
		category, gpu, currency = append(category, k.category), append(gpu, k.gpu), append(currency, k.currency)
		m.append(&v)
		for i, dim := range spendDims {
			sumsAt(by, dayKey[byKey]{byKey{dim, k.dimValue(i), k.currency}, k.day}).add(&v)
		}
		sumsAt(drivers, dayKey[driverKey]{driverKey{k.provider, k.service, k.subAccount, k.model, k.currency}, k.day}).add(&v)
	}
	b.Queue(rollupInsert+`
		SELECT $1, * FROM unnest($2::date[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
			$9::text[], $10::text[], $11::text[], $12::numeric[], $13::numeric[], $14::numeric[], $15::bigint[],
			$16::bigint[], $17::bigint[], $18::bigint[], $19::bigint[])
		ORDER BY 2, 3, 4, 5, 6, 7, 8, 9, 10, 11`+rollupUpsert,
		orgID, days, source, provider, service, subAccount, team, model, category, gpu, currency,
		m.billed, m.effective, m.gpuHours, m.input, m.output, m.cached, m.requests, m.rows)

	// daily_spend_by: each key's change, once per dimension.
	var (
		byDays                       []time.Time
		byDims, byValues, byCurrency []string
		bm                           measureColumns
	)
	for k, s := range by {
		v := s.values()
		byDays, byDims, byValues, byCurrency = append(byDays, k.day), append(byDims, k.key.dim), append(byValues, k.key.value), append(byCurrency, k.key.currency)
		bm.append(&v)
	}
	b.Queue(`
		INSERT INTO daily_spend_by AS t (org_id, dim, day, value, currency, billed, effective, gpu_hours,
			input_tokens, output_tokens, cached_tokens, requests, rows)
		SELECT $1, * FROM unnest($2::text[], $3::date[], $4::text[], $5::text[], $6::numeric[], $7::numeric[],
			$8::numeric[], $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[], $13::bigint[])
		ORDER BY 2, 3, 4, 5`+spendByUpsert("(org_id, dim, day, value, currency)"),
		orgID, byDims, byDays, byValues, byCurrency, bm.billed, bm.effective, bm.gpuHours, bm.input, bm.output,
		bm.cached, bm.requests, bm.rows)

	// month_to_date_spend_by: daily_spend_by's change, spread over each
	// day's month.
	byDays, byDims, byValues, byCurrency, bm = nil, nil, nil, nil, measureColumns{}
	spreadMonthToDate(by, func(k byKey, day time.Time, v *rollupValues) {
		byDays, byDims, byValues, byCurrency = append(byDays, day), append(byDims, k.dim), append(byValues, k.value), append(byCurrency, k.currency)
		bm.append(v)
	})
	b.Queue(`
		INSERT INTO month_to_date_spend_by AS t (org_id, day, dim, value, currency, billed, effective, gpu_hours,
			input_tokens, output_tokens, cached_tokens, requests, rows)
		SELECT $1, * FROM unnest($2::date[], $3::text[], $4::text[], $5::text[], $6::numeric[], $7::numeric[],
			$8::numeric[], $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[], $13::bigint[])
		ORDER BY 2, 3, 4, 5`+spendByUpsert("(org_id, day, dim, value, currency)"),
		orgID, byDays, byDims, byValues, byCurrency, bm.billed, bm.effective, bm.gpuHours, bm.input, bm.output,
		bm.cached, bm.requests, bm.rows)

	// month_to_date_drivers: the change by provider, service, account and
	// model, spread likewise.
	var (
		dDays                                        []time.Time
		dProvider, dService, dAccount, dModel, dCurr []string
		dBilled, dEffective                          []decimal.Decimal
		dRows                                        []int64
	)
	spreadMonthToDate(drivers, func(k driverKey, day time.Time, v *rollupValues) {
		dDays, dProvider, dService, dAccount = append(dDays, day), append(dProvider, k.provider), append(dService, k.service), append(dAccount, k.subAccount)
		dModel, dCurr = append(dModel, k.model), append(dCurr, k.currency)
		dBilled, dEffective, dRows = append(dBilled, v.billed), append(dEffective, v.effective), append(dRows, v.rows)
	})
	b.Queue(`
		INSERT INTO month_to_date_drivers AS t (org_id, day, provider, service, sub_account, model, currency,
			billed, effective, rows)
		SELECT $1, * FROM unnest($2::date[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
			$8::numeric[], $9::numeric[], $10::bigint[])
		ORDER BY 2, 3, 4, 5, 6, 7
		ON CONFLICT (org_id, day, provider, service, sub_account, model, currency) DO UPDATE SET
			billed = t.billed + EXCLUDED.billed,
			effective = t.effective + EXCLUDED.effective,
			rows = t.rows + EXCLUDED.rows`,
		orgID, dDays, dProvider, dService, dAccount, dModel, dCurr, dBilled, dEffective, dRows)
}

// spendByUpsert adds a daily_spend_by-shaped row (alias t) to the one of
// its key.
func spendByUpsert(key string) string {
	return `
		ON CONFLICT ` + key + ` DO UPDATE SET
			billed = t.billed + EXCLUDED.billed,
			effective = t.effective + EXCLUDED.effective,
			gpu_hours = t.gpu_hours + EXCLUDED.gpu_hours,
			input_tokens = t.input_tokens + EXCLUDED.input_tokens,
			output_tokens = t.output_tokens + EXCLUDED.output_tokens,
			cached_tokens = t.cached_tokens + EXCLUDED.cached_tokens,
			requests = t.requests + EXCLUDED.requests,
			rows = t.rows + EXCLUDED.rows`
}

// RebuildSpendRollups recomputes orgID's rollups derived from daily_spend
// (daily_spend_by and the month-to-date rollups) from daily_spend as it
// is: after daily_spend was rebuilt (RebuildDailySpend), or written by hand.
func (s *Store) RebuildSpendRollups(ctx context.Context, orgID int64) error {
	b := &pgx.Batch{}
	for _, table := range []string{"daily_spend_by", "month_to_date_drivers", "month_to_date_spend_by"} {
		b.Queue(`DELETE FROM `+table+` WHERE org_id = $1`, orgID)
	}
	b.Queue(`
		INSERT INTO daily_spend_by (org_id, dim, day, value, currency, billed, effective, gpu_hours,
			input_tokens, output_tokens, cached_tokens, requests, rows)
		SELECT d.org_id, k.dim, d.day, k.value, d.currency, sum(d.billed), sum(d.effective), sum(d.gpu_hours),
			sum(d.input_tokens), sum(d.output_tokens), sum(d.cached_tokens), sum(d.requests), sum(d.rows)
		FROM daily_spend d
		`+eachDim+`
		WHERE d.org_id = $1
		GROUP BY 1, 2, 3, 4, 5`, orgID)
	// A key's month to date runs from its first day with charges in the
	// month to the month's last day.
	b.Queue(`
		INSERT INTO month_to_date_drivers (org_id, day, provider, service, sub_account, model, currency, billed, effective, rows)
		SELECT g.org_id, g.day + i, g.provider, g.service, g.sub_account, g.model, g.currency,
			sum(g.billed), sum(g.effective), sum(g.rows)
		FROM (
			SELECT org_id, day, provider, service, sub_account, model, currency,
				sum(billed) AS billed, sum(effective) AS effective, sum(rows) AS rows
			FROM daily_spend
			WHERE org_id = $1
			GROUP BY 1, 2, 3, 4, 5, 6, 7
		) g
		CROSS JOIN LATERAL generate_series(0, ((g.day - extract(day FROM g.day)::int + 1) + interval '1 month')::date
			- 1 - g.day) i
		GROUP BY 1, 2, 3, 4, 5, 6, 7
		HAVING sum(g.rows) <> 0`, orgID)
	b.Queue(`
		INSERT INTO month_to_date_spend_by (org_id, day, dim, value, currency, billed, effective, gpu_hours,
			input_tokens, output_tokens, cached_tokens, requests, rows)
		SELECT b.org_id, b.day + i, b.dim, b.value, b.currency, sum(b.billed), sum(b.effective), sum(b.gpu_hours),
			sum(b.input_tokens), sum(b.output_tokens), sum(b.cached_tokens), sum(b.requests), sum(b.rows)
		FROM daily_spend_by b
		CROSS JOIN LATERAL generate_series(0, ((b.day - extract(day FROM b.day)::int + 1) + interval '1 month')::date
			- 1 - b.day) i
		WHERE b.org_id = $1
		GROUP BY 1, 2, 3, 4, 5
		HAVING sum(b.rows) <> 0`, orgID)
	return mapError("rebuild spend rollups", s.q.SendBatch(ctx, b).Close())
}
