package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/quantity"
)

// Dimension is a column of daily_spend that spend is grouped or filtered by.
type Dimension string

// The dimensions, by their names in URLs and the API.
const (
	DimProvider Dimension = "provider"
	DimService  Dimension = "service"
	DimAccount  Dimension = "account" // account / project / subscription
	DimTeam     Dimension = "team"
	DimModel    Dimension = "model"
	DimSource   Dimension = "source"
	DimCategory Dimension = "category" // charge category: Usage, Tax, Credit, …
)

// GroupDimensions are the dimensions spend can be grouped by, in the order
// the dashboard offers them.
var GroupDimensions = []Dimension{DimProvider, DimService, DimAccount, DimTeam, DimModel, DimSource}

// column is d's column in daily_spend. Only whitelisted names ever reach SQL.
func (d Dimension) column() string {
	switch d {
	case DimProvider, DimService, DimTeam, DimModel, DimSource:
		return string(d)
	case DimAccount:
		return "sub_account"
	case DimCategory:
		return "charge_category"
	}
	return ""
}

// chargeColumn is d's column in charges.
func (d Dimension) chargeColumn() string {
	switch d {
	case DimProvider:
		return "provider_name"
	case DimService:
		return "service_name"
	case DimAccount:
		return "sub_account_id"
	case DimTeam:
		return "team"
	case DimModel:
		return "x_model"
	case DimSource:
		return "source"
	case DimCategory:
		return "charge_category"
	}
	return ""
}

// ValidGroup reports whether spend can be grouped by d.
func (d Dimension) ValidGroup() bool {
	for _, g := range GroupDimensions {
		if g == d {
			return true
		}
	}
	return false
}

// CostBasis is a view of spend: what the bill says (billed), or with
// commitments amortised over the usage they cover (amortized, FOCUS's
// effective cost). On an import it says which view its file states, ""
// for files that carry both (see docs/data-model.md, "Cost bases").
type CostBasis string

// The cost bases.
const (
	CostBoth      CostBasis = ""
	CostBilled    CostBasis = "billed"
	CostAmortized CostBasis = "amortized"
)

func (c CostBasis) column() string {
	if c == CostAmortized {
		return "effective"
	}
	return "billed"
}

// SpendFilter selects days and slices of an org's spend. Empty dimension
// fields match everything.
type SpendFilter struct {
	From, To time.Time // days in the org's time zone, both included
	Provider string
	Service  string
	Account  string
	Team     string
	Model    string
	Source   string
	Category string
	Cost     CostBasis // billed when empty
}

// Values are the filter's dimension values, by dimension.
func (f SpendFilter) Values() map[Dimension]string {
	return map[Dimension]string{
		DimProvider: f.Provider, DimService: f.Service, DimAccount: f.Account, DimTeam: f.Team,
		DimModel: f.Model, DimSource: f.Source, DimCategory: f.Category,
	}
}

// where is the filter as SQL conditions on daily_spend, with org_id = $1
// and the days; args gets its parameters.
func (f SpendFilter) where(args *[]any) string {
	*args = append(*args, f.From, f.To)
	var b strings.Builder
	b.WriteString("org_id = $1 AND day BETWEEN $" + strconv.Itoa(len(*args)-1) + " AND $" + strconv.Itoa(len(*args)))
	for _, d := range []Dimension{DimProvider, DimService, DimAccount, DimTeam, DimModel, DimSource, DimCategory} {
		if v := f.Values()[d]; v != "" {
			*args = append(*args, v)
			b.WriteString(" AND " + d.column() + " = $" + strconv.Itoa(len(*args)))
		}
	}
	return b.String()
}

// rollup picks the rollup that answers f grouped by group (none when ""):
// daily_spend_by, which sums each day over one dimension at a time, when
// the view names at most one dimension (the group, or a filter on one
// dimension with no group or grouped by the same one); daily_spend, every
// combination of the nine, for combined filters. It returns the table, the
// conditions (org_id = $1, the days, the filters; args gets the
// parameters) and the expression of the group. Both give the same sums:
// daily_spend_by is derived from daily_spend (docs/data-model.md, "Rollups").
func (f SpendFilter) rollup(args *[]any, group Dimension) (table, where, groupCol string) {
	dim, val, n := group, "", 0
	for d, v := range f.Values() {
		if v != "" {
			n++
			if group == "" {
				dim = d
			}
			if d == dim {
				val = v
			}
		}
	}
	switch {
	case n == 0 || (n == 1 && val != ""):
		col := "total"
		if dim != "" {
			col = dim.column()
		}
		*args = append(*args, f.From, f.To, col)
		w := "org_id = $1 AND dim = $" + strconv.Itoa(len(*args)) + " AND day BETWEEN $" +
			strconv.Itoa(len(*args)-2) + " AND $" + strconv.Itoa(len(*args)-1)
		if val != "" {
			*args = append(*args, val)
			w += " AND value = $" + strconv.Itoa(len(*args))
		}
		groupCol = "''"
		if group != "" {
			groupCol = "value"
		}
		return "daily_spend_by", w, groupCol
	}
	groupCol = "''"
	if group != "" {
		groupCol = group.column()
	}
	return "daily_spend", f.where(args), groupCol
}

// DaySpend is one day's spend in one currency, for one group (Group is ""
// when not grouped).
type DaySpend struct {
	Day      time.Time
	Currency string
	Group    string
	Amount   decimal.Decimal
	// Other marks the day's sum of the groups left out by a TopGroups
	// limit (Group is "" then); OtherGroups is how many groups of the
	// currency spent in the limit's days without making its top.
	Other       bool
	OtherGroups int
}

// TopGroups limits a grouped SpendByDay to the N groups of each currency
// that spent most between From and To (both included); the currency's other
// groups come summed, day by day, in rows marked Other. Totals are those of
// every group: only the breakdown is shorter.
type TopGroups struct {
	N        int
	From, To time.Time
}

// SpendByDay sums orgID's spend per day and currency, and per value of
// group unless group is "". It reads daily_spend only.
func (s *Store) SpendByDay(ctx context.Context, orgID int64, f SpendFilter, group Dimension) ([]DaySpend, error) {
	return s.SpendByDayTop(ctx, orgID, f, group, TopGroups{})
}

// SpendByDayTop is SpendByDay with the groups of each currency beyond
// top.N summed as Other (every group when top.N is 0). However many values
// the group takes (thousands of models, say), it returns at most top.N+1
// rows per day and currency.
func (s *Store) SpendByDayTop(ctx context.Context, orgID int64, f SpendFilter, group Dimension, top TopGroups) ([]DaySpend, error) {
	if group != "" && !group.ValidGroup() {
		return nil, fmt.Errorf("spend by day: cannot group by %q", group)
	}
	args := []any{orgID}
	table, where, groupCol := f.rollup(&args, group)
	if table == "daily_spend_by" && group != "" && top.N > 0 && len(args) == 4 {
		// Unfiltered (daily_spend_by with no value): rank, then read.
		return s.spendByDayTopRollup(ctx, orgID, f, group, top)
	}
	var query string
	switch {
	case (group == "" || top.N <= 0) && table == "daily_spend_by":
		// A row per day, value and currency already (its primary key):
		// nothing to sum. The aggregate took two thirds of a 90-day read.
		query = `
		SELECT day, currency, ` + groupCol + `, ` + f.Cost.column() + `, false, 0
		FROM daily_spend_by
		WHERE ` + where + `
		ORDER BY 1, 2, 4 DESC, 3`
	case group == "" || top.N <= 0:
		query = `
		SELECT day, currency, ` + groupCol + `, sum(` + f.Cost.column() + `), false, 0
		FROM ` + table + `
		WHERE ` + where + `
		GROUP BY 1, 2, 3
		ORDER BY 1, 2, 4 DESC, 3`
	default:
		args = append(args, top.N, top.From, top.To)
		n, from, to := "$"+strconv.Itoa(len(args)-2), "$"+strconv.Itoa(len(args)-1), "$"+strconv.Itoa(len(args))
		// Groups are ranked by their spend in the limit's days, per
		// currency, ties by name (a group seen only outside those days
		// ranks as spending nothing); the rest are summed as one per day.
		// The rows are read once (d, materialized) and ranked in t, a
		// row per group; each row then learns whether its group made the
		// top through a hashed IN list, not a join: right after an import
		// the planner may have no statistics for the new rows, and a join
		// of the day rows with their groups became a nested loop,
		// quadratic in the number of groups. (Window functions over every
		// day row did the same in three sorts, several times slower.) The
		// count of groups folded, per currency, is computed once (an
		// uncorrelated subquery) and looked up on the Other rows only.
		query = `
		WITH d AS MATERIALIZED (
			SELECT day, currency, ` + groupCol + ` AS grp, ` + f.Cost.column() + ` AS amount
			FROM ` + table + `
			WHERE ` + where + `
		), t AS (
			SELECT currency, grp, bool_or(day BETWEEN ` + from + ` AND ` + to + `) AS in_range,
				dense_rank() OVER (PARTITION BY currency
					ORDER BY coalesce(sum(amount) FILTER (WHERE day BETWEEN ` + from + ` AND ` + to + `), 0) DESC, grp) > ` + n + ` AS other
			FROM d
			GROUP BY 1, 2
		), o AS (
			SELECT day, currency, amount,
				CASE WHEN (currency, grp) IN (SELECT currency, grp FROM t WHERE NOT other) THEN grp END AS grp
			FROM d
		)
		SELECT day, currency, coalesce(grp, ''), sum(amount), grp IS NULL,
			CASE WHEN grp IS NULL THEN coalesce(((SELECT jsonb_object_agg(currency, n) FROM (
				SELECT currency, count(*) FILTER (WHERE other AND in_range) AS n FROM t GROUP BY 1) f) ->> currency)::int, 0) ELSE 0 END
		FROM o
		GROUP BY 1, 2, grp
		ORDER BY 1, 2, 5, 4 DESC, 3`
	}
	rows, err := s.q.Query(ctx, query, args...)
	if err != nil {
		return nil, mapError("spend by day", err)
	}
	out, err := collectDaySpend(rows, f.days()*(top.N+1))
	return out, mapError("spend by day", err)
}

// spendByDayTopRollup is SpendByDayTop on daily_spend_by, unfiltered, in
// two steps that aggregate little. The groups are ranked first, a row per
// group: its spend in the limit's days, summed from a few days' months to
// date (month_to_date_spend_by, as the breakdown reads it), and whether it
// has charges there; groups seen only on the other days of f rank as
// spending nothing, as before. Then
// the top groups' rows are read as they are, and each day's rest is its
// total (dim 'total') less its top groups, in amount and in charges: the
// day has an Other row exactly when groups left out had charges on it. One
// query that materialized the day rows, ranked them and folded every row
// through a hashed IN list cost several times more on a year of a large
// org; ranking from the day rows read a thousand rows a week for a
// dimension of fifty values (services). Rows come in no particular order:
// Build and the month cards add them up.
func (s *Store) spendByDayTopRollup(ctx context.Context, orgID int64, f SpendFilter, group Dimension, top TopGroups) ([]DaySpend, error) {
	cost, dim := f.Cost.column(), group.column()
	// The limit's days within f; the other days of f count for presence.
	from, to := f.From, f.To
	if top.From.After(from) {
		from = top.From
	}
	if top.To.Before(to) {
		to = top.To
	}
	// One statement for every range (see reads): a part without days reads
	// no periods, or has its first day after its last.
	args := []any{orgID, dim}
	var arms []string
	for _, r := range monthToDateReads(from, to).reads(&args, true) {
		arms = append(arms, `SELECT currency, value, `+r.sign+cost+` AS cost, `+r.sign+`rows AS rows
			FROM `+r.spendBy("dim = $2"))
	}
	outside := func(a, b time.Time) {
		args = append(args, a, b)
		arms = append(arms, `SELECT currency, value, 0::numeric, 0::bigint FROM daily_spend_by
			WHERE org_id = $1 AND dim = $2 AND day BETWEEN $`+strconv.Itoa(len(args)-1)+` AND $`+strconv.Itoa(len(args)))
	}
	if from.After(to) {
		outside(f.From, f.To)
		outside(f.To, f.From.AddDate(0, 0, -1)) // no days
	} else {
		outside(f.From, from.AddDate(0, 0, -1))
		outside(to.AddDate(0, 0, 1), f.To)
	}
	var (
		cur, value       string
		amount           decimal.Decimal
		inRange          bool
		ranked           = map[string]int{} // currency → groups ranked so far
		folded           = map[string]int{} // currency → groups left out with spend in the limit's days
		topCurs, topVals []string           // the top groups, as (currency, value) pairs
		folds            []string           // currencies with groups left out
	)
	err := s.forEachPlannedOnce(ctx, `
		SELECT currency, value, coalesce(sum(cost), 0), coalesce(sum(rows), 0) <> 0
		FROM (
			`+strings.Join(arms, "\n\t\t\tUNION ALL\n\t\t\t")+`
		) r
		GROUP BY 1, 2
		ORDER BY 1, 3 DESC, 2`, args, []any{&cur, &value, &amount, &inRange}, func() error {
		ranked[cur]++
		if ranked[cur] <= top.N {
			topCurs, topVals = append(topCurs, cur), append(topVals, value)
			return nil
		}
		if ranked[cur] == top.N+1 {
			folds = append(folds, cur)
		}
		if inRange {
			folded[cur]++
		}
		return nil
	})
	if err != nil {
		return nil, mapError("spend by day", err)
	}

	// With nothing left out, every row of the dimension is read. Otherwise
	// each top group, a (currency, value) pair, is one short range of the
	// index led by the value (daily_spend_by_value, which holds the
	// amounts too); the primary key, led by the day, made it a scan of
	// every value's rows in the range. A value in another currency's top
	// only is this one's rest.
	query := `SELECT day, currency, value, ` + cost + `, false FROM daily_spend_by
		WHERE org_id = $1 AND dim = $2 AND day BETWEEN $3 AND $4`
	args = []any{orgID, dim, f.From, f.To}
	if len(folds) == 0 {
		rows, err := s.q.Query(ctx, query, args...)
		if err != nil {
			return nil, mapError("spend by day", err)
		}
		out, err := collectDaySpend(rows, f.days()*len(topVals))
		return out, mapError("spend by day", err)
	}
	// The top groups' rows as they are, and the days' totals (dim 'total')
	// of the currencies with groups left out, each with its charges; the
	// rest of a day is worked out below. Postgres only reads index ranges:
	// summing the top groups per day there and joining them to the totals
	// took twice as long as the whole read.
	rows, err := s.q.Query(ctx, `
		SELECT day, currency, value, `+cost+`, false, rows FROM daily_spend_by
		WHERE org_id = $1 AND dim = $2 AND day BETWEEN $3 AND $4
			AND (currency, value) IN (SELECT * FROM unnest($5::text[], $6::text[]))
		UNION ALL
		SELECT day, currency, '', `+cost+`, true, rows FROM daily_spend_by
		WHERE org_id = $1 AND dim = 'total' AND day BETWEEN $3 AND $4 AND currency = ANY($7)`,
		orgID, dim, f.From, f.To, topCurs, topVals, folds)
	if err != nil {
		return nil, mapError("spend by day", err)
	}
	read, charges, err := collectDaySpendCharges(rows, f.days()*(len(topVals)+len(folds)))
	if err != nil {
		return nil, mapError("spend by day", err)
	}
	return foldRest(read, charges, folded), nil
}

// foldRest turns the days' totals among rows (marked Other) into their
// rests: each total less the day's top groups of its currency, in amount
// and in charges. A day keeps an Other row exactly when groups left out
// had charges on it; it says how many groups of its currency were left
// out (folded). The top groups' rows are kept as they are. charges are
// rows' counts of charges, in the same order.
func foldRest(rows []DaySpend, charges []int64, folded map[string]int) []DaySpend {
	type dayCurrency struct {
		day      time.Time
		currency string
	}
	topSums := quantity.Sums[dayCurrency]{}
	topCharges := map[dayCurrency]int64{}
	for i, r := range rows {
		if !r.Other {
			k := dayCurrency{r.Day, r.Currency}
			topSums.Add(k, r.Amount)
			topCharges[k] += charges[i]
		}
	}
	out := rows[:0]
	for i, r := range rows {
		if r.Other {
			k := dayCurrency{r.Day, r.Currency}
			if charges[i] <= topCharges[k] {
				continue // every charge of the day is in its top groups
			}
			if sum := topSums[k]; sum != nil {
				r.Amount = r.Amount.Sub(sum.Value())
			}
			r.OtherGroups = folded[r.Currency]
		}
		out = append(out, r)
	}
	return out
}

// SpendTotals sums orgID's spend per currency. It reads daily_spend only.
func (s *Store) SpendTotals(ctx context.Context, orgID int64, f SpendFilter) (map[string]decimal.Decimal, error) {
	args := []any{orgID}
	table, where, _ := f.rollup(&args, "")
	rows, err := s.q.Query(ctx, `
		SELECT currency, sum(`+f.Cost.column()+`) FROM `+table+` WHERE `+where+` GROUP BY 1`, args...)
	if err != nil {
		return nil, mapError("spend totals", err)
	}
	out := map[string]decimal.Decimal{}
	var cur string
	var amount decimal.Decimal
	_, err = pgx.ForEachRow(rows, []any{&cur, &amount}, func() error {
		out[cur] = amount
		return nil
	})
	return out, mapError("spend totals", err)
}

// Driver is a slice of spend by provider, service, account and model: a
// line of "where does the money go".
type Driver struct {
	Provider, Service, Account, Model string
	Currency                          string
	Amount                            decimal.Decimal
}

// GPUUsage is spend and GPU-hours on one GPU type.
type GPUUsage struct {
	GPUType  string
	Currency string
	Amount   decimal.Decimal
	GPUHours decimal.Decimal
}

// PerGPUHour is the effective price paid per GPU-hour (zero without hours).
func (g GPUUsage) PerGPUHour() decimal.Decimal {
	if !g.GPUHours.IsPositive() {
		return decimal.Zero
	}
	return g.Amount.Div(g.GPUHours)
}

// ModelUsage is spend and tokens on one LLM model.
type ModelUsage struct {
	Model                                   string
	Currency                                string
	Amount                                  decimal.Decimal
	InputTokens, OutputTokens, CachedTokens int64
	Requests                                int64
}

// Tokens is input plus output tokens (cached input is part of input).
func (m ModelUsage) Tokens() int64 { return m.InputTokens + m.OutputTokens }

// PerMillionTokens is the effective price paid per 1M tokens (zero without
// tokens).
func (m ModelUsage) PerMillionTokens() decimal.Decimal {
	if m.Tokens() <= 0 {
		return decimal.Zero
	}
	return m.Amount.Mul(decimal.NewFromInt(1_000_000)).Div(decimal.NewFromInt(m.Tokens()))
}

// Breakdown is where a range's spend went: by driver, by GPU type and by
// model, each largest first, and the values each dimension takes.
type Breakdown struct {
	Drivers []Driver
	GPUs    []GPUUsage
	Models  []ModelUsage
	// Facets lists the values of each dimension in the filtered spend,
	// for the filter choices.
	Facets map[Dimension][]string
}

// SpendBreakdown sums orgID's spend by driver, by GPU type (rows with a GPU
// only), by model (rows with a model only), and lists the values of every
// dimension, in one pass over daily_spend with grouping sets.
func (s *Store) SpendBreakdown(ctx context.Context, orgID int64, f SpendFilter) (Breakdown, error) {
	return s.SpendBreakdownTop(ctx, orgID, f, 0)
}

// SpendBreakdownTop is SpendBreakdown with at most drivers drivers per
// currency, the largest (all of them, and the facets, when drivers is 0;
// no facets otherwise): a day's report lists ten drivers of hundreds.
func (s *Store) SpendBreakdownTop(ctx context.Context, orgID int64, f SpendFilter, drivers int) (Breakdown, error) {
	args := []any{orgID}
	where := f.where(&args)
	// Two levels: first collapse the days (one hash aggregate over the
	// range's rollup rows), then the grouping sets over the few rows left,
	// which is many times faster than grouping sets over every day.
	// The first level has up to a thousand keys per day of the range; with the
	// default work_mem the planner sorts them on disk instead of hashing
	// them (three times slower), so the query gets more, for itself only.
	// Unfiltered, the query reads the smaller rollups and needs neither
	// (nor the transaction's three more round trips).
	if unfiltered(f) {
		b, err := s.breakdown(ctx, where, f, args, drivers)
		return b, mapError("spend breakdown", err)
	}
	var b Breakdown
	err := s.InTx(ctx, func(tx *Store) error {
		if _, err := tx.q.Exec(ctx, `SET LOCAL work_mem = '32MB'`); err != nil {
			return err
		}
		var err error
		b, err = tx.breakdown(ctx, where, f, args, drivers)
		return err
	})
	return b, mapError("spend breakdown", err)
}

// The breakdown's grouping sets, as grouping() numbers them: a bit per
// column left out, the first column highest (provider 128 …
// charge_category 1).
const (
	setDrivers  = 8 | 4 | 2 | 1
	setGPU      = 255 &^ 8
	setModel    = 255 &^ 16
	setTeam     = 255 &^ 4
	setSource   = 255 &^ 2
	setCategory = 255 &^ 1
)

// breakdown reads the breakdown; drivers > 0 keeps that many drivers per
// currency (in Postgres when unfiltered, here otherwise).
func (s *Store) breakdown(ctx context.Context, where string, f SpendFilter, args []any, drivers int) (Breakdown, error) {
	query := `
		WITH r AS (
			SELECT provider, service, sub_account, model, gpu_type, team, source, charge_category, currency,
				sum(` + f.Cost.column() + `) AS cost, sum(gpu_hours) AS gpu_hours, sum(input_tokens) AS input_tokens,
				sum(output_tokens) AS output_tokens, sum(cached_tokens) AS cached_tokens, sum(requests) AS requests
			FROM daily_spend
			WHERE ` + where + `
			GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9
		)
		SELECT grouping(provider, service, sub_account, model, gpu_type, team, source, charge_category),
			coalesce(provider, ''), coalesce(service, ''), coalesce(sub_account, ''), coalesce(model, ''),
			coalesce(gpu_type, ''), coalesce(team, ''), coalesce(source, ''), coalesce(charge_category, ''),
			currency, sum(cost), sum(gpu_hours),
			sum(input_tokens)::bigint, sum(output_tokens)::bigint, sum(cached_tokens)::bigint, sum(requests)::bigint
		FROM r
		GROUP BY GROUPING SETS ((provider, service, sub_account, model, currency), (gpu_type, currency),
			(model, currency), (team, currency), (source, currency), (charge_category, currency))
		ORDER BY 11 DESC`
	if unfiltered(f) {
		// No filter: the GPU types, models and the facets of one dimension
		// each are sums over one dimension (month_to_date_spend_by), and
		// only the drivers need combinations (four dimensions, not nine,
		// month_to_date_drivers). Rows come in the shape of the grouping
		// sets above.
		// Both halves read a few days' months to date, added and taken
		// away (monthToDateReads): a key's charges (rows) then sum to zero
		// exactly when it has none in the range, and a value with none is
		// no facet.
		p := monthToDateReads(f.From, f.To)
		cost := f.Cost.column()
		const facetDims = `dim IN ('gpu_type', 'model', 'team', 'source', 'charge_category')`
		args = args[:1]
		var driverArms, facets []string
		for _, r := range p.reads(&args, drivers == 0) {
			driverArms = append(driverArms, `SELECT provider, service, sub_account, model, currency, `+r.sign+cost+` AS cost,
				`+r.sign+`rows AS rows
			FROM `+r.drivers())
			facets = append(facets, `SELECT dim, value, currency, `+r.sign+cost+` AS cost, `+r.sign+`gpu_hours AS gpu_hours,
				`+r.sign+`input_tokens AS input_tokens, `+r.sign+`output_tokens AS output_tokens,
				`+r.sign+`cached_tokens AS cached_tokens, `+r.sign+`requests AS requests, `+r.sign+`rows AS rows
			FROM `+r.spendBy(facetDims))
		}
		driverRows := `
		SELECT ` + strconv.Itoa(setDrivers) + `, provider, service, sub_account, model, '', '', '', '', currency,
			sum(cost), 0::numeric, 0::bigint, 0::bigint, 0::bigint, 0::bigint
		FROM (
			` + strings.Join(driverArms, "\n\t\t\tUNION ALL\n\t\t\t") + `
		) d
		GROUP BY 2, 3, 4, 5, 10
		HAVING sum(rows) <> 0`
		if drivers > 0 {
			args = append(args, drivers)
			driverRows = `
		SELECT s, provider, service, sub_account, model, '', '', '', '', currency, cost, 0::numeric,
			0::bigint, 0::bigint, 0::bigint, 0::bigint
		FROM (
			SELECT ` + strconv.Itoa(setDrivers) + ` AS s, provider, service, sub_account, model, currency, sum(cost) AS cost,
				row_number() OVER (PARTITION BY currency ORDER BY sum(cost) DESC, provider, service, sub_account, model) AS n
			FROM (
				` + strings.Join(driverArms, "\n\t\t\t\tUNION ALL\n\t\t\t\t") + `
			) d
			GROUP BY 2, 3, 4, 5, 6
			HAVING sum(rows) <> 0
		) t
		WHERE n <= $` + strconv.Itoa(len(args))
		}
		query = driverRows + `
		UNION ALL
		SELECT CASE dim WHEN 'gpu_type' THEN ` + strconv.Itoa(setGPU) + ` WHEN 'model' THEN ` + strconv.Itoa(setModel) + `
				WHEN 'team' THEN ` + strconv.Itoa(setTeam) + ` WHEN 'source' THEN ` + strconv.Itoa(setSource) + `
				ELSE ` + strconv.Itoa(setCategory) + ` END,
			'', '', '', CASE dim WHEN 'model' THEN value ELSE '' END, CASE dim WHEN 'gpu_type' THEN value ELSE '' END,
			CASE dim WHEN 'team' THEN value ELSE '' END, CASE dim WHEN 'source' THEN value ELSE '' END,
			CASE dim WHEN 'charge_category' THEN value ELSE '' END, currency,
			sum(cost), sum(gpu_hours), sum(input_tokens)::bigint, sum(output_tokens)::bigint,
			sum(cached_tokens)::bigint, sum(requests)::bigint
		FROM (
			` + strings.Join(facets, "\n\t\t\tUNION ALL\n\t\t\t") + `
		) s
		GROUP BY dim, value, currency
		HAVING sum(rows) <> 0
		ORDER BY 11 DESC`
	}
	var (
		b                               Breakdown
		set                             int
		amount, hours                   decimal.Decimal
		input, output, cached, requests int64
		// The names are read in place and kept once each (a few hundred
		// drivers name a few dozen providers, services and accounts),
		// not allocated anew for every row.
		raw   [9]pgtype.DriverBytes
		names = map[string]string{}
	)
	name := func(i int) string {
		if s, ok := names[string(raw[i])]; ok {
			return s
		}
		s := string(raw[i])
		names[s] = s
		return s
	}
	b.Facets = map[Dimension][]string{}
	seen := map[Dimension]map[string]bool{}
	facet := func(d Dimension, v string) {
		if v == "" || seen[d][v] {
			return
		}
		if seen[d] == nil {
			seen[d] = map[string]bool{}
		}
		seen[d][v] = true
		b.Facets[d] = append(b.Facets[d], v)
	}
	// The dashboard's breakdown is one statement for every range, planned
	// once. Not the largest drivers of a day's report, planned for its few
	// periods: the generic plan of that statement (a window over the
	// drivers) takes 300 ms where a custom one takes a few.
	plannedOnce := unfiltered(f) && drivers == 0
	err := s.forEachRow(ctx, plannedOnce, query, args, []any{&set, &raw[0], &raw[1], &raw[2], &raw[3], &raw[4], &raw[5], &raw[6], &raw[7], &raw[8],
		&amount, &hours, &input, &output, &cached, &requests}, func() error {
		provider, service, account, model, gpu := name(0), name(1), name(2), name(3), name(4)
		team, source, cat, cur := name(5), name(6), name(7), name(8)
		switch set {
		case setDrivers:
			b.Drivers = append(b.Drivers, Driver{Provider: provider, Service: service, Account: account, Model: model, Currency: cur, Amount: amount})
			facet(DimProvider, provider)
			facet(DimService, service)
			facet(DimAccount, account)
		case setGPU:
			if gpu != "" {
				b.GPUs = append(b.GPUs, GPUUsage{GPUType: gpu, Currency: cur, Amount: amount, GPUHours: hours})
			}
		case setModel:
			if model != "" {
				b.Models = append(b.Models, ModelUsage{Model: model, Currency: cur, Amount: amount,
					InputTokens: input, OutputTokens: output, CachedTokens: cached, Requests: requests})
			}
			facet(DimModel, model)
		case setTeam:
			facet(DimTeam, team)
		case setSource:
			facet(DimSource, source)
		case setCategory:
			facet(DimCategory, cat)
		}
		return nil
	})
	for _, vs := range b.Facets {
		slices.Sort(vs)
	}
	if drivers > 0 {
		// Drivers come largest first; the facets of provider, service and
		// account were read from them, so there are none to trust.
		kept, per := b.Drivers[:0], map[string]int{}
		for _, dr := range b.Drivers {
			if per[dr.Currency]++; per[dr.Currency] <= drivers {
				kept = append(kept, dr)
			}
		}
		b.Drivers, b.Facets = kept, nil
	}
	return b, err
}

// monthToDate are the days whose month-to-date rows (month_to_date_drivers,
// month_to_date_spend_by) sum to a range: those of plus, less those of
// minus.
type monthToDate struct {
	plus, minus []time.Time
}

// monthToDateReads gives the days whose month-to-date rows sum to from..to
// (both included): the last day of each month from from's to the one
// before to's, and to itself, less the day before from unless from is the
// 1st. A range is so at most its months and one day more, wherever it
// starts and ends (docs/data-model.md, "Rollups"). A range with its first
// day after its last reads no day.
func monthToDateReads(from, to time.Time) monthToDate {
	var p monthToDate
	if from.After(to) {
		return p
	}
	for m := time.Date(from.Year(), from.Month(), 1, 0, 0, 0, 0, time.UTC); ; m = m.AddDate(0, 1, 0) {
		end := m.AddDate(0, 1, -1)
		if !end.Before(to) {
			break
		}
		p.plus = append(p.plus, end)
	}
	p.plus = append(p.plus, to)
	if from.Day() != 1 {
		p.minus = append(p.minus, from.AddDate(0, 0, -1))
	}
	return p
}

// periodRead is one read of a monthToDate: its days added, or with sign
// "-" taken away, the query parameter param ("$n::date[]").
type periodRead struct {
	sign, param string
}

// days matches the read's days.
func (r periodRead) days() string { return "day = ANY(" + r.param + ")" }

// reads lists p's reads, each one's days appended to args. With all, an
// empty one too: every range then asks the same statement, which each
// connection parses and plans once (forEachPlannedOnce). Without, a
// statement planned for each call's parameters leaves out the empty arm,
// which would only cost planning time.
func (p monthToDate) reads(args *[]any, all bool) []periodRead {
	var out []periodRead
	for _, r := range []struct {
		days []time.Time
		sign string
	}{{p.plus, ""}, {p.minus, "-"}} {
		if len(r.days) == 0 && !all {
			continue
		}
		*args = append(*args, r.days)
		out = append(out, periodRead{sign: r.sign, param: "$" + strconv.Itoa(len(*args)) + "::date[]"})
	}
	return out
}

// drivers is the FROM and WHERE of r's rows of month_to_date_drivers. The
// org is $1.
func (r periodRead) drivers() string {
	return `month_to_date_drivers WHERE org_id = $1 AND ` + r.days()
}

// spendBy is the FROM and WHERE of r's rows of month_to_date_spend_by,
// those matching cond (on dim and value). The org is $1.
func (r periodRead) spendBy(cond string) string {
	return `month_to_date_spend_by WHERE org_id = $1 AND ` + r.days() + ` AND ` + cond
}

// unfiltered reports whether f selects every dimension's values.
func unfiltered(f SpendFilter) bool {
	for _, v := range f.Values() {
		if v != "" {
			return false
		}
	}
	return true
}

// HasSpend reports whether orgID has any rolled-up spend at all.
func (s *Store) HasSpend(ctx context.Context, orgID int64) (bool, error) {
	var ok bool
	err := s.q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM daily_spend WHERE org_id = $1)`, orgID).Scan(&ok)
	return ok, mapError("has spend", err)
}

// SpendVersion changes whenever orgID's rolled-up spend or budgets may have
// changed: daily_spend is written only by imports (and rebuilt when the
// org's time zone changes), each of which commits with its finished_at,
// and every budget write moves updated_at or the count. The dashboard keys
// its cache on it.
func (s *Store) SpendVersion(ctx context.Context, orgID int64) (string, error) {
	var imports, budgets string
	err := s.q.QueryRow(ctx, `SELECT `+spendVersionColumns, orgID).Scan(&imports, &budgets)
	return imports + "|" + budgets, mapError("spend version", err)
}

// spendVersionColumns are SpendVersion's two parts, of org $1.
const spendVersionColumns = `
	(SELECT count(*) || '/' || coalesce(max(finished_at)::text, '') FROM imports WHERE org_id = $1 AND status = 'succeeded'),
	(SELECT count(*) || '/' || coalesce(max(updated_at)::text, '') FROM budgets WHERE org_id = $1)`
