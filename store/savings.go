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
// from Usage charges that carry GPU-hours, on the days [from, to) (civil
// dates in the org's time zone, as midnight UTC), in no particular order.
func (s *Store) GPUResourceDays(ctx context.Context, orgID int64, from, to time.Time) ([]GPUResourceDay, error) {
	rows, err := s.q.Query(ctx, gpuResourceDaysSQL, orgID, from.Format(time.DateOnly), to.Format(time.DateOnly))
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

// gpuResourceDaysSQL reads the rollup of GPU usage per resource and day
// (gpu_resource_daily, see migrations/000026), merging the teams, tag
// states and GPU counts its key keeps apart. A key may have several rows,
// but every row counts charges that are there (rows > 0: the statements
// that take charges out fold the negation into the days they touch, see
// gpuCompact), so the
// rows are merged as they are. Days are already in the org's time zone:
// $2 and $3 are civil dates. No ORDER BY: the finders sort what they show.
const gpuResourceDaysSQL = `
		SELECT provider, resource_id, instance_type, gpu_type, max(gpu_count), currency, purchase,
			day, sum(gpu_hours), sum(cost), sum(rows)::bigint,
			CASE WHEN bool_and(team <> '') AND min(team) = max(team) THEN min(team) ELSE '' END,
			bool_and(untagged)
		FROM gpu_resource_daily
		WHERE org_id = $1 AND day >= $2::date AND day < $3::date
		GROUP BY provider, resource_id, instance_type, gpu_type, currency, purchase, day`

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
