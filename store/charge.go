package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"
)

// Charge is one normalised cost row (docs/data-model.md, "Imports and charges"), as written to charges.
type Charge struct {
	Line               int
	Source             string
	ProviderName       string
	ServiceName        string
	ServiceCategory    string
	SKU                string
	ResourceID         string
	RegionID           string
	SubAccountID       string
	ChargeCategory     string
	ChargePeriodStart  time.Time
	ChargePeriodEnd    time.Time
	BilledCost         decimal.Decimal
	EffectiveCost      decimal.Decimal
	ListCost           decimal.Decimal
	BillingCurrency    string
	ConsumedQuantity   decimal.Decimal
	ConsumedUnit       string
	Tags               map[string]string
	Team               string
	InstanceType       string
	GPUType            string
	GPUCount           decimal.Decimal
	GPUHours           decimal.Decimal
	Model              string
	InputTokens        int64
	OutputTokens       int64
	CachedTokens       int64
	Requests           int64
	PricedByUs         bool
	BillingAccountID   string
	BillingPeriodStart time.Time // zero when the source has no billing period
	DedupeKey          string
	ProviderRaw        string // the file's spelling of the provider, when not ProviderName
	ServiceRaw         string // the file's spelling of the service, when not ServiceName
}

// chargeColumns are the columns WriteCharges copies, in Values order.
var chargeColumns = []string{
	"org_id", "import_id", "line", "source", "provider_name", "service_name", "service_category", "sku",
	"resource_id", "region_id", "sub_account_id", "charge_category", "charge_period_start", "charge_period_end",
	"billed_cost", "effective_cost", "list_cost", "billing_currency", "consumed_quantity", "consumed_unit",
	"tags", "team", "x_instance_type", "x_gpu_type", "x_gpu_count", "x_gpu_hours", "x_model", "x_input_tokens",
	"x_output_tokens", "x_cached_tokens", "x_requests", "x_priced_by_us", "billing_account_id",
	"billing_period_start", "dedupe_key", "x_provider_raw", "x_service_raw",
}

// Dedupe says what an import does with rows whose DedupeKey is already in
// the org's charges.
type Dedupe int

const (
	// DedupeNone: rows have no keys. Cloud exports; a newer export of the
	// same (source, billing account, billing period) replaces the older
	// rows of that period instead.
	DedupeNone Dedupe = iota
	// DedupeSkip: a row whose key is known is skipped. Event logs (one row
	// per request), where a key is a request id and never changes.
	DedupeSkip
	// DedupeReplace: a row whose key is known replaces the old row.
	// Aggregated usage buckets, which a later export may restate.
	DedupeReplace
)

// ChargeSource yields the rows of one import. Charge's result is used
// before the next call to Next, so an implementation may reuse one Charge.
type ChargeSource interface {
	Next() bool
	Charge() *Charge
	Err() error
}

// CostBasisSource is a ChargeSource that knows, once its rows are read,
// which cost its file states: an Azure export is either actual cost
// (CostBilled) or amortized cost (CostAmortized), with the same columns
// (see docs/data-model.md, "Cost bases"). A source that is not one, or says
// CostBoth, carries both costs in every row.
type CostBasisSource interface {
	CostBasis() CostBasis
}

// WriteResult is what WriteCharges did, counted from what it stored.
type WriteResult struct {
	Rows         int64 // rows now in charges from this import
	ReplacedRows int64 // older rows this import replaced (restated period or bucket)
	SkippedRows  int64 // rows skipped as already imported (or repeated in the file)
	MergedRows   int64 // rows added into an earlier row of the same bucket in the file
	// Totals is the cost of the rows stored, per currency, in the import's
	// basis: billed cost, or effective cost for an amortized export.
	Totals    map[string]decimal.Decimal
	CostBasis CostBasis
}

// KeyConflictError is a file with two rows under one request id that differ:
// a request id names one request, so they cannot both be right. Nothing of
// the file is written.
type KeyConflictError struct {
	Key             string
	FirstLine, Line int
}

func (e *KeyConflictError) Error() string {
	return fmt.Sprintf("line %d repeats the request id %q of line %d with other values; one request cannot have two rows",
		e.Line, e.Key, e.FirstLine)
}

type restatement struct {
	account string
	period  time.Time
}

// copySource adapts a ChargeSource to pgx.CopyFromSource, noting the
// restated periods on the way.
type copySource struct {
	orgID, importID int64
	src             ChargeSource
	values          []any
	periods         map[restatement]struct{}
	rollup          *spendDelta // nil when rows may be skipped: rolled up from what was inserted instead
	gpu             *gpuRollup  // likewise, for gpu_resource_daily
	tags            []byte      // the row's tags as JSON, reused (pgx copies it into the COPY buffer)
	source          string      // of the rows copied (one per import)
	err             error
	binary          bool    // encoded by binaryCopy: Values is not used
	cur             *Charge // the row Next moved to
	lastPeriod      restatement
}

func (c *copySource) Next() bool {
	if c.err != nil || !c.src.Next() {
		return false
	}
	ch := c.src.Charge()
	c.source, c.cur = ch.Source, ch
	if c.rollup != nil {
		c.rollup.add(ch)
	}
	if c.gpu != nil {
		c.gpu.add(ch)
	}
	if c.binary {
		if !ch.BillingPeriodStart.IsZero() {
			if p := (restatement{ch.BillingAccountID, ch.BillingPeriodStart}); p != c.lastPeriod {
				c.periods[p], c.lastPeriod = struct{}{}, p
			}
		}
		return true
	}
	var tags []byte
	if len(ch.Tags) > 0 {
		c.tags = appendTagsJSON(c.tags[:0], ch.Tags)
		tags = c.tags
	}
	var period any
	if !ch.BillingPeriodStart.IsZero() {
		period = ch.BillingPeriodStart
		c.periods[restatement{ch.BillingAccountID, ch.BillingPeriodStart}] = struct{}{}
	}
	c.values = append(c.values[:0],
		c.orgID, c.importID, ch.Line, ch.Source, ch.ProviderName, ch.ServiceName, ch.ServiceCategory, ch.SKU,
		ch.ResourceID, ch.RegionID, ch.SubAccountID, ch.ChargeCategory, ch.ChargePeriodStart, ch.ChargePeriodEnd,
		ch.BilledCost, ch.EffectiveCost, ch.ListCost, ch.BillingCurrency, ch.ConsumedQuantity, ch.ConsumedUnit,
		tags, ch.Team, ch.InstanceType, ch.GPUType, ch.GPUCount, ch.GPUHours, ch.Model, ch.InputTokens,
		ch.OutputTokens, ch.CachedTokens, ch.Requests, ch.PricedByUs, ch.BillingAccountID,
		period, ch.DedupeKey, ch.ProviderRaw, ch.ServiceRaw)
	return true
}

func (c *copySource) Values() ([]any, error) { return c.values, nil }

// appendTagsJSON appends tags as a JSON object. It stands in for
// json.Marshal on the import's hot path (a tenth of its time there, for
// sorting keys jsonb does not keep anyway).
func appendTagsJSON(buf []byte, tags map[string]string) []byte {
	buf = append(buf, '{')
	first := true
	for k, v := range tags {
		if !first {
			buf = append(buf, ',')
		}
		first = false
		buf = appendJSONString(buf, k)
		buf = append(buf, ':')
		buf = appendJSONString(buf, v)
	}
	return append(buf, '}')
}

// appendJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped; other bytes, UTF-8 included, as they are
// (invalid UTF-8 becomes U+FFFD, as json.Marshal does).
func appendJSONString(buf []byte, s string) []byte {
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			switch {
			case b == '"' || b == '\\':
				buf = append(buf, '\\', b)
			case b < 0x20:
				buf = append(buf, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xf])
			default:
				buf = append(buf, b)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf = append(buf, "\\ufffd"...)
		} else {
			buf = append(buf, s[i:i+size]...)
		}
		i += size
	}
	return append(buf, '"')
}

// errSourceFailed is the error pgx is given when the rows' source fails.
// pgx sends an error's text to Postgres in a CopyFail message, and Postgres
// drops the connection when that message is longer than a few kilobytes (a
// parse error quoting a megabyte-long cell would be): the import's
// connection, which must still record the failure. The source's own error
// reaches the caller from the source (see failure).
var errSourceFailed = errors.New("the rows' source failed; its error is returned by the caller")

func (c *copySource) Err() error {
	if c.failure() != nil {
		return errSourceFailed
	}
	return nil
}

// failure is the error that stopped the source, if any.
func (c *copySource) failure() error {
	if c.err != nil {
		return c.err
	}
	return c.src.Err()
}

const rollupInsert = `
	INSERT INTO daily_spend (org_id, day, source, provider, service, sub_account, team, model, charge_category,
		gpu_type, currency, billed, effective, gpu_hours, input_tokens, output_tokens, cached_tokens, requests, rows)`

const rollupUpsert = `
	ON CONFLICT (org_id, day, source, provider, service, sub_account, team, model, charge_category, gpu_type, currency)
	DO UPDATE SET billed = daily_spend.billed + EXCLUDED.billed,
		effective = daily_spend.effective + EXCLUDED.effective,
		gpu_hours = daily_spend.gpu_hours + EXCLUDED.gpu_hours,
		input_tokens = daily_spend.input_tokens + EXCLUDED.input_tokens,
		output_tokens = daily_spend.output_tokens + EXCLUDED.output_tokens,
		cached_tokens = daily_spend.cached_tokens + EXCLUDED.cached_tokens,
		requests = daily_spend.requests + EXCLUDED.requests,
		rows = daily_spend.rows + EXCLUDED.rows`

// goneColumns are what the rollups need of a charge (alias c) that is
// deleted or changed: daily_spend's key and measures, and
// gpu_resource_daily's.
const goneColumns = `c.charge_period_start, c.charge_period_end, c.source, c.provider_name, c.service_name,
	c.sub_account_id, c.team, c.x_model, c.charge_category, c.x_gpu_type, c.billing_currency, c.billed_cost,
	c.effective_cost, c.x_gpu_hours, c.x_input_tokens, c.x_output_tokens, c.x_cached_tokens, c.x_requests,
	c.resource_id, c.x_instance_type, c.x_gpu_count, c.sku, (c.tags IS NULL OR c.tags = '{}'::jsonb) AS untagged`

// deleteCharges deletes the charges matching where (over alias c; $1 is
// the org, $2 the time zone tz) in one statement: their GPU usage leaves
// gpu_resource_daily and their hours llm_hourly, and what they counted in
// daily_spend is added to delta, negated, for delta.write. It returns how
// many went.
func (s *Store) deleteCharges(ctx context.Context, delta *spendDelta, orgID int64, tz, where string, args ...any) (int64, error) {
	args = append([]any{orgID, tz}, args...)
	rows, err := s.q.Query(ctx, `
		WITH gone AS (
			DELETE FROM charges c WHERE c.org_id = $1 AND `+where+` RETURNING `+goneColumns+`
		), hours AS (
			`+llmHourlyAdd("gone", "true", "-")+`
		), gpu_delta AS (
			`+gpuUsageRows("gone", "$2", "-", "billed_cost", "effective_cost", "x_gpu_hours")+`
		),`+gpuCompact+deltaSelect("gone", "$2", "-"), args...)
	if err != nil {
		return 0, err
	}
	n, err := delta.addRows(rows)
	return -n, err
}

// WriteCharges writes an import's rows and keeps daily_spend in step. Call
// it inside the import's transaction (InTx): on any error nothing it did
// survives the rollback. Days in daily_spend are days in loc.
//
// Rows stream from src to Postgres by COPY, so memory does not grow with
// the file. org_id is set here from the authenticated org, never from the
// file. Rows of one file that share a bucket key are added together
// (DedupeReplace); rows under one request id must be the same row
// (DedupeSkip), else it fails with a *KeyConflictError.
//
// COPY is refused under row-level security, and Citus refuses a
// transaction that changes an org's shards as one role and then reads them
// as another: so WriteCharges, and the rest of the transaction after it
// (the import's status, what it enqueues), run as the connecting role (SET
// LOCAL ROLE NONE), every statement naming the org. Its transaction is the
// import's own; row-level security fences the connection again once it
// ends. On a connection fenced to another org than orgID it writes
// nothing.
func (s *Store) WriteCharges(ctx context.Context, orgID, importID int64, loc *time.Location, dedupe Dedupe, src ChargeSource) (WriteResult, error) {
	var role, fencedTo string
	if err := s.q.QueryRow(ctx, `SELECT current_setting('role'), coalesce(current_setting('burnrate.org_id', true), '')`).
		Scan(&role, &fencedTo); err != nil {
		return WriteResult{}, mapError("write charges: role", err)
	}
	if fencedTo != "" && fencedTo != strconv.FormatInt(orgID, 10) {
		return WriteResult{}, fmt.Errorf("write charges: the connection is fenced to org %s, not %d", fencedTo, orgID)
	}
	if role != "none" {
		if _, err := s.q.Exec(ctx, `SET LOCAL ROLE NONE`); err != nil {
			return WriteResult{}, mapError("write charges: role", err)
		}
	}
	return s.writeCharges(ctx, orgID, importID, loc, dedupe, src)
}

// writeCharges is WriteCharges, as the connecting role.
func (s *Store) writeCharges(ctx context.Context, orgID, importID int64, loc *time.Location, dedupe Dedupe, src ChargeSource) (WriteResult, error) {
	var res WriteResult
	tz := loc.String()
	cs := &copySource{orgID: orgID, importID: importID, src: src, periods: map[restatement]struct{}{}}
	if dedupe == DedupeNone {
		cs.rollup = newSpendDelta(loc)
		if _, ok := s.q.(pgx.Tx); ok {
			cs.gpu = newGPURollup(orgID, loc)
			defer cs.gpu.close()
		}
	}

	var copied int64
	if dedupe == DedupeNone {
		n, err := s.copyBinary(ctx, "charges", cs)
		if err != nil {
			return res, fmt.Errorf("write charges: %w", cmp.Or(cs.failure(), err))
		}
		copied = n
	} else {
		// Keyed rows go through a staging table, so that known keys can be
		// skipped or replaced with ON CONFLICT / DELETE rather than
		// failing the COPY.
		if _, err := s.q.Exec(ctx, `CREATE TEMP TABLE charges_staging (LIKE charges INCLUDING DEFAULTS) ON COMMIT DROP`); err != nil {
			return res, mapError("write charges: staging", err)
		}
		n, err := s.copyBinary(ctx, "charges_staging", cs)
		if err != nil {
			return res, fmt.Errorf("write charges: %w", cmp.Or(cs.failure(), err))
		}
		copied = n
	}
	// The change of the spend rollups: the rows copied (added up as they
	// streamed past), or for keyed rows those inserted (added below), less
	// what the import replaces.
	delta := cs.rollup
	if dedupe == DedupeNone {
		if bs, ok := src.(CostBasisSource); ok {
			res.CostBasis = bs.CostBasis()
		}
		res.Totals = delta.totals(res.CostBasis)
	} else {
		delta = newSpendDelta(loc)
	}

	switch dedupe {
	case DedupeNone:
		res.Rows = copied
		// A restated export replaces the earlier rows of its periods, of
		// its own cost basis only: an Azure amortized export stands beside
		// the actual-cost export of its period.
		for p := range cs.periods {
			// The earlier imports of the period are read first and their
			// rows deleted by the primary key (org, import): with the
			// imports as a subquery, the planner scanned all of charges for
			// an org of 100M rows, whether or not any import matched.
			var restated []int64
			rows, err := s.q.Query(ctx, `
				SELECT import_id FROM import_periods
				WHERE org_id = $1 AND source = $2 AND billing_account_id = $3 AND period_start = $4
					AND cost_basis = $5 AND import_id <> $6`,
				orgID, cs.source, p.account, p.period, string(res.CostBasis), importID)
			if err == nil {
				restated, err = pgx.CollectRows(rows, pgx.RowTo[int64])
			}
			if err != nil {
				return res, mapError("write charges: restated imports", err)
			}
			if len(restated) > 0 {
				n, err := s.deleteCharges(ctx, delta, orgID, tz, `
					c.import_id = ANY($6) AND c.source = $3 AND c.billing_account_id = $4 AND c.billing_period_start = $5`,
					cs.source, p.account, p.period, restated)
				if err != nil {
					return res, mapError("write charges: replace restated period", err)
				}
				res.ReplacedRows += n
			}
			if _, err := s.q.Exec(ctx, `
				INSERT INTO import_periods (org_id, import_id, source, billing_account_id, period_start, cost_basis)
				VALUES ($1, $2, $3, $4, $5, $6)`, orgID, importID, cs.source, p.account, p.period, string(res.CostBasis)); err != nil {
				return res, mapError("write charges: record period", err)
			}
		}
	case DedupeSkip:
		// A request id repeated in the file is the same request written
		// twice (skipped); the same id on a different row is refused.
		var key string
		var first, line int
		err := s.q.QueryRow(ctx, `
			WITH d AS (
				SELECT source, dedupe_key FROM charges_staging WHERE dedupe_key <> ''
				GROUP BY 1, 2 HAVING count(*) > 1
			)
			SELECT s.dedupe_key, min(s.line), max(s.line)
			FROM charges_staging s JOIN d ON d.source = s.source AND d.dedupe_key = s.dedupe_key
			GROUP BY s.source, s.dedupe_key
			HAVING count(DISTINCT to_jsonb(s) - 'line') > 1
			ORDER BY 3
			LIMIT 1`).Scan(&key, &first, &line)
		if err == nil {
			return res, &KeyConflictError{Key: key, FirstLine: first, Line: line}
		} else if !errors.Is(err, pgx.ErrNoRows) {
			return res, mapError("write charges: repeated request ids", err)
		}
		tag, err := s.q.Exec(ctx, `
			INSERT INTO charges SELECT * FROM charges_staging
			ON CONFLICT (org_id, source, dedupe_key) WHERE dedupe_key <> '' DO NOTHING`)
		if err != nil {
			return res, mapError("write charges: insert new events", err)
		}
		res.Rows = tag.RowsAffected()
		res.SkippedRows = copied - res.Rows
	case DedupeReplace:
		n, err := s.deleteCharges(ctx, delta, orgID, tz,
			`c.dedupe_key <> '' AND (c.source, c.dedupe_key) IN (SELECT source, dedupe_key FROM charges_staging)`)
		if err != nil {
			return res, mapError("write charges: replace buckets", err)
		}
		res.ReplacedRows = n
		// Rows of one file that share a key are parts of one bucket: they
		// are added together into the first of them.
		tag, err := s.q.Exec(ctx, mergeBuckets)
		if err != nil {
			return res, mapError("write charges: insert buckets", err)
		}
		res.Rows = tag.RowsAffected()
		res.MergedRows = copied - res.Rows
	}

	// GPU usage (gpu_resource_daily), after the restated rows went, so that
	// their removal does not rewrite this import's days.
	if cs.gpu != nil {
		if err := cs.gpu.copyTo(ctx, s.q.(pgx.Tx).Conn()); err != nil {
			return res, mapError("write charges: gpu rollup", err)
		}
	} else if _, err := s.q.Exec(ctx, gpuRollupSelect("$3", "c.import_id = $2"), orgID, importID, tz); err != nil {
		return res, mapError("write charges: gpu rollup", err)
	}
	if cs.rollup == nil {
		rows, err := s.q.Query(ctx, deltaSelect("charges WHERE org_id = $1 AND import_id = $2", "$3", ""), orgID, importID, tz)
		if err == nil {
			_, err = delta.addRows(rows)
		}
		if err != nil {
			return res, mapError("write charges: roll up", err)
		}
		if _, err := s.q.Exec(ctx, llmHourlyAdd("charges", "org_id = $1 AND import_id = $2", ""), orgID, importID); err != nil {
			return res, mapError("write charges: roll up hours", err)
		}
		if err := s.importTotals(ctx, orgID, importID, &res); err != nil {
			return res, err
		}
	}
	if res.CostBasis != CostBoth {
		for p := range cs.periods {
			if err := s.separateBases(ctx, delta, orgID, importID, tz, cs.source, p, res.CostBasis); err != nil {
				return res, err
			}
		}
	}
	if err := delta.write(ctx, s.q, orgID); err != nil {
		return res, mapError("write charges: roll up", err)
	}
	return res, nil
}

// mergeBuckets inserts the staged rows, one per key: the first row of each
// key, with the costs, quantities, GPU-hours, tokens and requests of all its
// rows added up. Rows without a key stay rows of their own.
var mergeBuckets = func() string {
	sums := map[string]string{
		"billed_cost": "sum(billed_cost)", "effective_cost": "sum(effective_cost)", "list_cost": "sum(list_cost)",
		"consumed_quantity": "sum(consumed_quantity)", "x_gpu_hours": "sum(x_gpu_hours)",
		"x_input_tokens": "sum(x_input_tokens)::bigint", "x_output_tokens": "sum(x_output_tokens)::bigint",
		"x_cached_tokens": "sum(x_cached_tokens)::bigint", "x_requests": "sum(x_requests)::bigint",
		"x_priced_by_us": "bool_or(x_priced_by_us)",
	}
	var agg, sel []string
	for col, expr := range sums {
		agg = append(agg, expr+" AS "+col)
	}
	for _, col := range chargeColumns {
		if _, ok := sums[col]; ok {
			sel = append(sel, "k."+col)
		} else {
			sel = append(sel, "s."+col)
		}
	}
	slices.Sort(agg)
	return `
		WITH k AS (
			SELECT source, dedupe_key, min(line) AS first_line, ` + strings.Join(agg, ", ") + `
			FROM charges_staging
			GROUP BY source, dedupe_key, CASE WHEN dedupe_key = '' THEN line END
		)
		INSERT INTO charges (` + strings.Join(chargeColumns, ", ") + `)
		SELECT ` + strings.Join(sel, ", ") + `
		FROM charges_staging s JOIN k ON k.source = s.source AND k.dedupe_key = s.dedupe_key AND k.first_line = s.line`
}()

// importTotals sets res.Totals from the import's stored rows.
func (s *Store) importTotals(ctx context.Context, orgID, importID int64, res *WriteResult) error {
	col := "billed_cost"
	if res.CostBasis == CostAmortized {
		col = "effective_cost"
	}
	rows, err := s.q.Query(ctx, `
		SELECT billing_currency, sum(`+col+`) FROM charges WHERE org_id = $1 AND import_id = $2 GROUP BY 1`, orgID, importID)
	if err != nil {
		return mapError("write charges: totals", err)
	}
	res.Totals = map[string]decimal.Decimal{}
	var cur string
	var amount decimal.Decimal
	_, err = pgx.ForEachRow(rows, []any{&cur, &amount}, func() error {
		res.Totals[cur] = amount
		return nil
	})
	return mapError("write charges: totals", err)
}

// separateBases keeps the two views of slice p apart once both an actual
// and an amortized export of it are stored. A row of a one-basis import
// carries its cost in both columns while its slice has no import of the
// other basis (the one view there is stands for both); once it has, each
// import's rows keep their cost in their own basis's column only and count
// zero in the other, so neither view adds the two files together. Usage
// measured twice, the GPU-hours, stays on the actual-cost rows only. basis
// is the new import's. See docs/data-model.md, "Cost bases".
func (s *Store) separateBases(ctx context.Context, delta *spendDelta, orgID, importID int64, tz, source string, p restatement, basis CostBasis) error {
	other := CostAmortized
	if basis == CostAmortized {
		other = CostBilled
	}
	// What a row of each basis gives up once the other basis is there.
	giveUp := map[CostBasis][]string{
		CostBilled:    {"effective_cost"},
		CostAmortized: {"billed_cost", "x_gpu_hours"},
	}
	slice := ` AND c.source = $3 AND c.billing_account_id = $4 AND c.billing_period_start = $5`
	var otherImports []int64
	rows, err := s.q.Query(ctx, `
		SELECT import_id FROM import_periods
		WHERE org_id = $1 AND source = $2 AND billing_account_id = $3 AND period_start = $4 AND cost_basis = $5`,
		orgID, source, p.account, p.period, string(other))
	if err == nil {
		otherImports, err = pgx.CollectRows(rows, pgx.RowTo[int64])
	}
	if err != nil {
		return mapError("write charges: other cost basis", err)
	}
	if len(otherImports) == 0 {
		return nil
	}
	if err := s.zeroMeasures(ctx, delta, orgID, tz, giveUp[basis], `c.import_id = $6`+slice, source, p.account, p.period, importID); err != nil {
		return mapError("write charges: separate cost bases", err)
	}
	err = s.zeroMeasures(ctx, delta, orgID, tz, giveUp[other], `c.import_id = ANY($6)`+slice, source, p.account, p.period, otherImports)
	return mapError("write charges: separate cost bases", err)
}

// zeroMeasures sets columns (of billed_cost, effective_cost, x_gpu_hours)
// to zero on the charges matching where (over alias c; $1 is the org, $2
// the time zone) in one statement: their GPU usage in gpu_resource_daily
// changes with them, and what they held in daily_spend is added to delta,
// negated, for delta.write.
func (s *Store) zeroMeasures(ctx context.Context, delta *spendDelta, orgID int64, tz string, columns []string, where string, args ...any) error {
	measure := map[string]string{"billed_cost": "0", "effective_cost": "0", "x_gpu_hours": "0"}
	after := map[string]string{"billed_cost": "billed_cost", "effective_cost": "effective_cost", "x_gpu_hours": "x_gpu_hours"}
	var set, nonZero []string
	for _, col := range columns {
		measure[col] = "-sum(" + col + ")"
		after[col] = "0"
		set = append(set, col+" = 0")
		nonZero = append(nonZero, "c."+col+" <> 0")
	}
	args = append([]any{orgID, tz}, args...)
	rows, err := s.q.Query(ctx, `
		WITH old AS (
			SELECT c.org_id, c.import_id, c.line, `+goneColumns+`
			FROM charges c
			WHERE c.org_id = $1 AND (`+strings.Join(nonZero, " OR ")+`) AND `+where+`
			FOR UPDATE
		), zeroed AS (
			UPDATE charges c SET `+strings.Join(set, ", ")+` FROM old
			WHERE c.org_id = old.org_id AND c.import_id = old.import_id AND c.line = old.line
		), gpu_delta AS (
			`+gpuUsageRows("old", "$2", "-", "billed_cost", "effective_cost", "x_gpu_hours")+`
			UNION ALL
			`+gpuUsageRows("old", "$2", "", after["billed_cost"], after["effective_cost"], after["x_gpu_hours"])+`
		),`+gpuCompact+`
		SELECT (charge_period_start AT TIME ZONE $2)::date, source, provider_name, service_name,
			sub_account_id, team, x_model, charge_category, x_gpu_type, billing_currency,
			(`+measure["billed_cost"]+`)::numeric, (`+measure["effective_cost"]+`)::numeric, (`+measure["x_gpu_hours"]+`)::numeric,
			0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint
		FROM old
		GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10`, args...)
	if err == nil {
		_, err = delta.addRows(rows)
	}
	return err
}

// RebuildDailySpend recomputes orgID's rollups (daily_spend and those
// derived from it, llm_hourly and gpu_resource_daily) from its charges, for
// when the meaning of a day changes (the org's time zone).
func (s *Store) RebuildDailySpend(ctx context.Context, orgID int64, loc *time.Location) error {
	return s.InTx(ctx, func(tx *Store) error {
		if _, err := tx.q.Exec(ctx, `DELETE FROM daily_spend WHERE org_id = $1`, orgID); err != nil {
			return mapError("rebuild daily spend", err)
		}
		if _, err := tx.q.Exec(ctx, rollupInsert+`
			SELECT $1, `+deltaColumns+` FROM (`+deltaSelect("charges WHERE org_id = $1", "$2", "")+`) d (`+deltaColumns+`)`,
			orgID, loc.String()); err != nil {
			return mapError("rebuild daily spend", err)
		}
		if err := tx.RebuildSpendRollups(ctx, orgID); err != nil {
			return err
		}
		if _, err := tx.q.Exec(ctx, `DELETE FROM llm_hourly WHERE org_id = $1`, orgID); err != nil {
			return mapError("rebuild llm hours", err)
		}
		if _, err := tx.q.Exec(ctx, llmHourlyAdd("charges", "org_id = $1", ""), orgID); err != nil {
			return mapError("rebuild llm hours", err)
		}
		if _, err := tx.q.Exec(ctx, `DELETE FROM gpu_resource_daily WHERE org_id = $1`, orgID); err != nil {
			return mapError("rebuild gpu resource days", err)
		}
		_, err := tx.q.Exec(ctx, gpuRollupSelect("$2", "true"), orgID, loc.String())
		return mapError("rebuild gpu resource days", err)
	})
}
