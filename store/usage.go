package store

import (
	"context"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"
)

// PaidGPURate is what an org actually paid per GPU-hour for one provider's
// instance type and GPU, learned from its imported bills: the sum of billed
// cost over the sum of GPU-hours of the charges that carry GPU-hours. Rates
// are per currency and never mixed; only USD rates can stand in for catalog
// prices, which are USD.
type PaidGPURate struct {
	Provider     string // as the bill names it: AWS, Google Cloud, …
	InstanceType string
	GPUType      string
	GPUCount     decimal.Decimal // GPUs per instance (the largest seen)
	Currency     string
	Billed       decimal.Decimal
	GPUHours     decimal.Decimal
	PerGPUHour   decimal.Decimal // Billed / GPUHours, 6 decimal places
	Rows         int64
	PeriodStart  time.Time
	PeriodEnd    time.Time
}

// PaidGPURates returns orgID's effective $/GPU-hour per provider × instance
// type × GPU type × currency, over charges that start in [from, to) and have
// x_gpu_hours > 0. Credits and refunds usually carry no GPU-hours and so do
// not lower the rate; discounts billed on the usage line do.
func (s *Store) PaidGPURates(ctx context.Context, orgID int64, from, to time.Time) ([]PaidGPURate, error) {
	rows, err := s.q.Query(ctx, `
		SELECT provider_name, x_instance_type, x_gpu_type, max(x_gpu_count), billing_currency,
			sum(billed_cost), sum(x_gpu_hours), count(*), min(charge_period_start), max(charge_period_end)
		FROM charges
		WHERE org_id = $1 AND x_gpu_hours > 0 AND charge_period_start >= $2 AND charge_period_start < $3
		GROUP BY provider_name, x_instance_type, x_gpu_type, billing_currency
		ORDER BY provider_name, x_instance_type, x_gpu_type, billing_currency`, orgID, from, to)
	if err != nil {
		return nil, mapError("paid gpu rates", err)
	}
	rates, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (PaidGPURate, error) {
		var r PaidGPURate
		err := row.Scan(&r.Provider, &r.InstanceType, &r.GPUType, &r.GPUCount, &r.Currency,
			&r.Billed, &r.GPUHours, &r.Rows, &r.PeriodStart, &r.PeriodEnd)
		if err == nil && r.GPUHours.IsPositive() {
			r.PerGPUHour = r.Billed.DivRound(r.GPUHours, 6)
		}
		return r, err
	})
	return rates, mapError("paid gpu rates", err)
}

// LLMUsage is an org's LLM API usage of one model over a window, from the
// daily rollup. InputTokens includes CachedTokens (ingest's convention:
// cached reads are a subset of the input), so the uncached input is
// InputTokens − CachedTokens.
type LLMUsage struct {
	Model        string
	InputTokens  int64
	OutputTokens int64
	CachedTokens int64
	Requests     int64
	Billed       map[string]decimal.Decimal // per currency
}

// UncachedInputTokens is the input that was not a cache read.
func (u LLMUsage) UncachedInputTokens() int64 { return max(u.InputTokens-u.CachedTokens, 0) }

// TotalTokens is input (cached included) plus output.
func (u LLMUsage) TotalTokens() int64 { return u.InputTokens + u.OutputTokens }

// LLMUsageByModel returns orgID's LLM usage per model for the days in
// [from, to) (days in the org's time zone, as the rollup keeps them), the
// biggest model first.
func (s *Store) LLMUsageByModel(ctx context.Context, orgID int64, from, to time.Time) ([]LLMUsage, error) {
	rows, err := s.q.Query(ctx, `
		SELECT value, currency, sum(input_tokens), sum(output_tokens), sum(cached_tokens), sum(requests), sum(billed)
		FROM daily_spend_by
		WHERE org_id = $1 AND dim = 'model' AND value <> '' AND day >= $2::date AND day < $3::date
		GROUP BY value, currency`, orgID, from.Format(time.DateOnly), to.Format(time.DateOnly))
	if err != nil {
		return nil, mapError("llm usage", err)
	}
	defer rows.Close()
	byModel := map[string]*LLMUsage{}
	var out []*LLMUsage
	for rows.Next() {
		var (
			model, currency         string
			in, outTok, cached, req int64
			billed                  decimal.Decimal
		)
		if err := rows.Scan(&model, &currency, &in, &outTok, &cached, &req, &billed); err != nil {
			return nil, mapError("llm usage", err)
		}
		u := byModel[model]
		if u == nil {
			u = &LLMUsage{Model: model, Billed: map[string]decimal.Decimal{}}
			byModel[model] = u
			out = append(out, u)
		}
		u.InputTokens += in
		u.OutputTokens += outTok
		u.CachedTokens += cached
		u.Requests += req
		u.Billed[currency] = u.Billed[currency].Add(billed)
	}
	if err := rows.Err(); err != nil {
		return nil, mapError("llm usage", err)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if a, b := out[i].TotalTokens(), out[j].TotalTokens(); a != b {
			return a > b
		}
		return out[i].Model < out[j].Model
	})
	res := make([]LLMUsage, len(out))
	for i, u := range out {
		res[i] = *u
	}
	return res, nil
}

// LLMPeak is how bursty an org's LLM traffic is: the busiest hour's tokens
// over the mean tokens per hour, measured on charges whose period is at most
// an hour (request logs and hourly buckets; daily buckets cannot show an
// hourly peak and are left out).
type LLMPeak struct {
	HoursWithData     int64     // hours that had any tokens
	SpanHours         int64     // from the first to the last such hour, inclusive
	MaxTokensPerHour  int64     // the busiest hour
	MeanTokensPerHour float64   // all tokens / SpanHours
	Factor            float64   // MaxTokensPerHour / MeanTokensPerHour; 0 when not measurable
	BusiestHour       time.Time // start of the busiest hour (UTC)
}

// LLMPeakFactor measures orgID's peak-hour factor over LLM charges (x_model
// set) of the UTC hours starting in [from, to), from llm_hourly. Factor is 0
// when there are no hourly-or-finer rows to measure.
func (s *Store) LLMPeakFactor(ctx context.Context, orgID int64, from, to time.Time) (LLMPeak, error) {
	var p LLMPeak
	var first, last, busiest *time.Time
	var total int64
	err := s.q.QueryRow(ctx, `
		WITH hourly AS (
			SELECT hour, tokens FROM llm_hourly
			WHERE org_id = $1 AND hour >= $2 AND hour < $3 AND tokens > 0
		)
		SELECT count(*), coalesce(max(tokens), 0)::bigint, coalesce(sum(tokens), 0)::bigint, min(hour), max(hour),
			(SELECT hour FROM hourly ORDER BY tokens DESC, hour LIMIT 1)
		FROM hourly`, orgID, from, to).Scan(&p.HoursWithData, &p.MaxTokensPerHour, &total, &first, &last, &busiest)
	if err != nil {
		return LLMPeak{}, mapError("llm peak factor", err)
	}
	if first == nil || last == nil || p.MaxTokensPerHour == 0 {
		return p, nil
	}
	p.SpanHours = int64(last.Sub(*first)/time.Hour) + 1
	p.MeanTokensPerHour = float64(total) / float64(p.SpanHours)
	p.Factor = float64(p.MaxTokensPerHour) / p.MeanTokensPerHour
	p.BusiestHour = busiest.UTC()
	return p, nil
}
