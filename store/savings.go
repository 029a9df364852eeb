package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"
)

// How a GPU usage row was bought, as far as a bill tells (docs/savings.md,
// "What the bills say"). Bills carry no pricing-model column Burnrate keeps,
// so it is read from the SKU and from amortisation.
const (
	// PurchaseSpot is spot or preemptible capacity: the SKU (AWS usage type,
	// Azure meter, GCP SKU description) names it.
	PurchaseSpot = "spot"
	// PurchaseCommitted is usage a reservation or savings plan covered: its
	// effective (amortised) cost differs from its billed cost.
	PurchaseCommitted = "committed"
	// PurchaseOnDemand is everything else.
	PurchaseOnDemand = "on-demand"
)

// GPUResourceDay is one GPU resource's instance time on one day: the
// Usage charges of one provider × resource id × instance type × GPU type ×
// currency × purchase kind whose period starts on Day (in the org's time
// zone), added up. Rows without a resource id are one resource, "".
type GPUResourceDay struct {
	Provider     string
	ResourceID   string
	InstanceType string
	GPUType      string
	GPUCount     decimal.Decimal // GPUs per instance (the largest seen)
	Currency     string
	Purchase     string    // PurchaseSpot, PurchaseCommitted or PurchaseOnDemand
	Day          time.Time // civil date, as midnight UTC
	GPUHours     decimal.Decimal
	Cost         decimal.Decimal // effective cost: what the hours really cost, commitments amortised
	Charges      int64           // charge rows behind the sums
	// Team is the team tag's value when every row had the same one, "" when
	// any row had none; Untagged is true when no row had any tag at all.
	Team     string
	Untagged bool
}

// InstanceHours is GPUHours over GPUCount: how long instances ran that day
// (more than 24 when several instances share the resource id).
func (d GPUResourceDay) InstanceHours() decimal.Decimal {
	if !d.GPUCount.IsPositive() {
		return decimal.Zero
	}
	return d.GPUHours.DivRound(d.GPUCount, 6)
}

// GPUResourceDays returns orgID's GPU instance time per resource and day,
// from Usage charges that carry GPU-hours and start in [from, to), days in
// loc, in no particular order.
func (s *Store) GPUResourceDays(ctx context.Context, orgID int64, from, to time.Time, loc *time.Location) ([]GPUResourceDay, error) {
	rows, err := s.q.Query(ctx, gpuResourceDaysSQL, orgID, from, to, loc.String())
	if err != nil {
		return nil, mapError("gpu resource days", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (GPUResourceDay, error) {
		var d GPUResourceDay
		err := row.Scan(&d.Provider, &d.ResourceID, &d.InstanceType, &d.GPUType, &d.GPUCount, &d.Currency, &d.Purchase,
			&d.Day, &d.GPUHours, &d.Cost, &d.Charges, &d.Team, &d.Untagged)
		return d, err
	})
	return out, mapError("gpu resource days", err)
}

// gpuResourceDaysSQL classifies each row's purchase (see PurchaseSpot) and
// adds up its day; no ORDER BY, which would sort the groups on disk for
// nothing: the finders sort what they show.
const gpuResourceDaysSQL = `
		SELECT provider_name, resource_id, x_instance_type, x_gpu_type, max(x_gpu_count), billing_currency, purchase,
			(charge_period_start AT TIME ZONE $4)::date AS day, sum(x_gpu_hours), sum(effective_cost), count(*),
			CASE WHEN bool_and(team <> '') AND min(team) = max(team) THEN min(team) ELSE '' END,
			bool_and(tags IS NULL OR tags = '{}'::jsonb)
		FROM (
			SELECT *, CASE
				WHEN sku ~* '(spot|preemptible)' THEN 'spot'
				WHEN effective_cost <> billed_cost THEN 'committed'
				ELSE 'on-demand' END AS purchase
			FROM charges
			WHERE org_id = $1 AND x_gpu_hours > 0 AND charge_category = 'Usage'
				AND charge_period_start >= $2 AND charge_period_start < $3
				-- Only the imports whose days reach the window (a day's margin
				-- for a time zone changed since), read through charges' primary
				-- key (org_id, import_id, line): charges has no index by time.
				AND import_id IN (
					SELECT id FROM imports
					WHERE org_id = $1 AND status = 'succeeded'
						AND (period_end IS NULL OR period_end >= ($2 AT TIME ZONE $4)::date - 1)
						AND (period_start IS NULL OR period_start <= ($3 AT TIME ZONE $4)::date + 1))
		) c
		GROUP BY provider_name, resource_id, x_instance_type, x_gpu_type, billing_currency, purchase, day`

// SpendDays returns the first and last day of orgID's daily rollup within
// [from, to] (days in the org's time zone), and false when it has none: how
// far its bills reach, read from daily_spend's primary key.
func (s *Store) SpendDays(ctx context.Context, orgID int64, from, to time.Time) (first, last time.Time, ok bool, err error) {
	var f, l *time.Time
	err = s.q.QueryRow(ctx, `
		SELECT min(day), max(day) FROM daily_spend WHERE org_id = $1 AND day >= $2::date AND day <= $3::date`,
		orgID, from.Format(time.DateOnly), to.Format(time.DateOnly)).Scan(&f, &l)
	if err != nil {
		return time.Time{}, time.Time{}, false, mapError("spend days", err)
	}
	if f == nil || l == nil {
		return time.Time{}, time.Time{}, false, nil
	}
	return f.UTC(), l.UTC(), true, nil
}
