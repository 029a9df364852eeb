package store

import (
	"time"

	"github.com/jackc/pgx/v5"
)

// llm_hourly holds LLM tokens per UTC hour for the peak-hour factor
// (LLMPeakFactor), so that it reads a few hundred rows instead of grouping
// the org's charges. It counts the charges isLLMHourly accepts; every path
// that writes or deletes charges keeps it, as daily_spend is kept.

// llmHourlyCounts is which charges llm_hourly counts, as SQL over charges
// (alias-free): isLLMHourly's rule.
const llmHourlyCounts = `x_model <> '' AND charge_period_end - charge_period_start <= interval '1 hour'`

// isLLMHourly reports whether llm_hourly counts ch: a model's usage over
// at most an hour, fine enough to show the busiest hour.
func isLLMHourly(ch *Charge) bool {
	return ch.Model != "" && !ch.ChargePeriodEnd.After(ch.ChargePeriodStart.Add(time.Hour))
}

// llmHourlyAdd adds (sign "") or subtracts (sign "-") the llm_hourly rollup
// of the charges-shaped relation from, restricted by where; $1 is the org.
func llmHourlyAdd(from, where, sign string) string {
	return `
		INSERT INTO llm_hourly AS h (org_id, hour, tokens, rows)
		SELECT $1, date_trunc('hour', charge_period_start, 'UTC'), ` + sign + `sum(x_input_tokens + x_output_tokens)::bigint, ` + sign + `count(*)
		FROM ` + from + `
		WHERE ` + where + ` AND ` + llmHourlyCounts + `
		GROUP BY 2
		ON CONFLICT (org_id, hour) DO UPDATE SET tokens = h.tokens + EXCLUDED.tokens, rows = h.rows + EXCLUDED.rows`
}

// llmHours sums streamed charges per UTC hour for llm_hourly.
type llmHours map[time.Time]*llmHour

type llmHour struct{ tokens, rows int64 }

func (h llmHours) add(ch *Charge) {
	if !isLLMHourly(ch) {
		return
	}
	hour := ch.ChargePeriodStart.UTC().Truncate(time.Hour)
	s := h[hour]
	if s == nil {
		s = &llmHour{}
		h[hour] = s
	}
	s.tokens += ch.InputTokens + ch.OutputTokens
	s.rows++
}

// queue queues the upsert of the sums into llm_hourly.
func (h llmHours) queue(b *pgx.Batch, orgID int64) {
	hours := make([]time.Time, 0, len(h))
	tokens := make([]int64, 0, len(h))
	rows := make([]int64, 0, len(h))
	for hour, s := range h {
		hours, tokens, rows = append(hours, hour), append(tokens, s.tokens), append(rows, s.rows)
	}
	b.Queue(`
		INSERT INTO llm_hourly AS h (org_id, hour, tokens, rows)
		SELECT $1, * FROM unnest($2::timestamptz[], $3::bigint[], $4::bigint[])
		ORDER BY 2
		ON CONFLICT (org_id, hour) DO UPDATE SET tokens = h.tokens + EXCLUDED.tokens, rows = h.rows + EXCLUDED.rows`,
		orgID, hours, tokens, rows)
}
