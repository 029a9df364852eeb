package store

import (
	"context"
	"fmt"
	"time"
)

// rollupChecks compare each rollup of org $1 with what it is made from,
// days in the time zone $2: two relations, truth and rollup, of the same
// columns, compared as multisets.
var rollupChecks = []struct{ table, truth, rollup string }{
	{"daily_spend", `
		SELECT (charge_period_start AT TIME ZONE $2)::date, source, provider_name, service_name, sub_account_id, team,
			x_model, charge_category, x_gpu_type, billing_currency, sum(billed_cost), sum(effective_cost),
			sum(x_gpu_hours), sum(x_input_tokens)::numeric, sum(x_output_tokens)::numeric,
			sum(x_cached_tokens)::numeric, sum(x_requests)::numeric, count(*)::numeric
		FROM charges WHERE org_id = $1
		GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10`, `
		SELECT day, source, provider, service, sub_account, team, model, charge_category, gpu_type, currency, billed,
			effective, gpu_hours, input_tokens::numeric, output_tokens::numeric, cached_tokens::numeric,
			requests::numeric, rows::numeric
		FROM daily_spend WHERE org_id = $1`},
	{"daily_spend_by", `
		SELECT k.dim, d.day, k.value, d.currency, sum(d.billed), sum(d.effective), sum(d.gpu_hours),
			sum(d.input_tokens), sum(d.output_tokens), sum(d.cached_tokens), sum(d.requests), sum(d.rows)
		FROM daily_spend d
		` + eachDim + `
		WHERE d.org_id = $1 AND $2::text IS NOT NULL
		GROUP BY 1, 2, 3, 4`, `
		SELECT dim, day, value, currency, billed, effective, gpu_hours, input_tokens::numeric, output_tokens::numeric,
			cached_tokens::numeric, requests::numeric, rows::numeric
		FROM daily_spend_by WHERE org_id = $1`},
	// A day's month to date: the day and every earlier day of its month,
	// joined on a calendar rather than spread as the store spreads them.
	{"month_to_date_drivers", `
		SELECT c.day, d.provider, d.service, d.sub_account, d.model, d.currency, sum(d.billed), sum(d.effective),
			sum(d.rows)
		FROM daily_spend d
		JOIN ` + calendar + `
		WHERE d.org_id = $1 AND $2::text IS NOT NULL
		GROUP BY 1, 2, 3, 4, 5, 6`, `
		SELECT day, provider, service, sub_account, model, currency, billed, effective, rows::numeric
		FROM month_to_date_drivers WHERE org_id = $1`},
	{"month_to_date_spend_by", `
		SELECT c.day, k.dim, k.value, d.currency, sum(d.billed), sum(d.effective), sum(d.gpu_hours),
			sum(d.input_tokens), sum(d.output_tokens), sum(d.cached_tokens), sum(d.requests), sum(d.rows)
		FROM daily_spend d
		JOIN ` + calendar + `
		` + eachDim + `
		WHERE d.org_id = $1 AND $2::text IS NOT NULL
		GROUP BY 1, 2, 3, 4`, `
		SELECT day, dim, value, currency, billed, effective, gpu_hours, input_tokens::numeric, output_tokens::numeric,
			cached_tokens::numeric, requests::numeric, rows::numeric
		FROM month_to_date_spend_by WHERE org_id = $1`},
	// A key of gpu_resource_daily may have several rows (signed deltas):
	// what it holds is their sum.
	{"gpu_resource_daily", `
		SELECT (charge_period_start AT TIME ZONE $2)::date, provider_name, resource_id, x_instance_type, x_gpu_type,
			x_gpu_count, billing_currency,
			` + PurchaseSQL("sku", "effective_cost", "billed_cost") + `,
			team, (tags IS NULL OR tags = '{}'::jsonb), sum(x_gpu_hours), sum(effective_cost), count(*)::numeric
		FROM charges WHERE org_id = $1 AND x_gpu_hours > 0 AND charge_category = 'Usage'
		GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10`, `
		SELECT day, provider, resource_id, instance_type, gpu_type, gpu_count, currency, purchase, team, untagged,
			sum(gpu_hours), sum(cost), sum(rows)
		FROM gpu_resource_daily WHERE org_id = $1
		GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10`},
	{"llm_hourly", `
		SELECT date_trunc('hour', charge_period_start, 'UTC'), sum(x_input_tokens + x_output_tokens)::numeric,
			count(*)::numeric
		FROM charges WHERE org_id = $1 AND ` + llmHourlyCounts + ` AND $2::text IS NOT NULL
		GROUP BY 1`, `
		SELECT hour, tokens::numeric, rows::numeric FROM llm_hourly WHERE org_id = $1`},
}

// calendar is the days of org $1's spend, and a month around them, as c,
// joined to daily_spend d on the days of d's month from d's day on.
const calendar = `(SELECT b.lo + i AS day
		FROM (SELECT min(day) - 31 AS lo, max(day) + 31 AS hi FROM daily_spend WHERE org_id = $1) b,
			generate_series(0, b.hi - b.lo) i) c
		ON c.day >= d.day AND extract(year FROM c.day) = extract(year FROM d.day)
			AND extract(month FROM c.day) = extract(month FROM d.day)`

// RollupsDiffer compares every rollup of orgID with what it is made from,
// to the last digit, with days in loc: daily_spend, gpu_resource_daily and
// llm_hourly with the org's charges, daily_spend_by and the month-to-date
// rollups with daily_spend. It returns one line for each that differs, and
// none when all are exact. It reads all of the org's charges: for checks
// (tests, scripts/citus-check), not for requests.
func (s *Store) RollupsDiffer(ctx context.Context, orgID int64, loc *time.Location) ([]string, error) {
	var diffs []string
	for _, c := range rollupChecks {
		var missing, extra, rows int64
		err := s.q.QueryRow(ctx, `
			WITH truth AS (`+c.truth+`), rollup AS (`+c.rollup+`)
			SELECT (SELECT count(*) FROM (SELECT * FROM truth EXCEPT ALL SELECT * FROM rollup) x),
				(SELECT count(*) FROM (SELECT * FROM rollup EXCEPT ALL SELECT * FROM truth) x),
				(SELECT count(*) FROM rollup)`, orgID, loc.String()).Scan(&missing, &extra, &rows)
		if err != nil {
			return diffs, mapError("check "+c.table, err)
		}
		if missing != 0 || extra != 0 {
			diffs = append(diffs, fmt.Sprintf("%s: %d keys missing or different, %d extra (of %d rows)", c.table, missing, extra, rows))
		}
	}
	return diffs, nil
}
