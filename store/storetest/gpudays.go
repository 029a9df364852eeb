package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/burnrate/burnrate/store"
)

// GPUDaysFromCharges is what the savings finders read, grouped straight from
// org's charges as they did before gpu_resource_daily: the truth the rollup
// must match. Each day is one string, sorted, as GPUDaysFromRollup gives.
func GPUDaysFromCharges(t testing.TB, st *store.Store, org store.Org) []string {
	t.Helper()
	rows, err := st.Pool().Query(context.Background(), `
		SELECT provider_name, resource_id, x_instance_type, x_gpu_type, max(x_gpu_count), billing_currency, purchase,
			(charge_period_start AT TIME ZONE $2)::date, sum(x_gpu_hours), sum(effective_cost), count(*),
			CASE WHEN bool_and(team <> '') AND min(team) = max(team) THEN min(team) ELSE '' END,
			bool_and(tags IS NULL OR tags = '{}'::jsonb)
		FROM (SELECT *, `+store.PurchaseSQL("sku", "effective_cost", "billed_cost")+` AS purchase
			FROM charges WHERE org_id = $1 AND x_gpu_hours > 0 AND charge_category = 'Usage') c
		GROUP BY 1, 2, 3, 4, 6, 7, 8`, org.ID, org.Location().String())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		var d store.GPUResourceDay
		if err := rows.Scan(&d.Provider, &d.ResourceID, &d.InstanceType, &d.GPUType, &d.GPUCount, &d.Currency, &d.Purchase,
			&d.Day, &d.GPUHours, &d.Cost, &d.Charges, &d.Team, &d.Untagged); err != nil {
			t.Fatal(err)
		}
		out = append(out, gpuDayKey(d))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func gpuDayKey(d store.GPUResourceDay) string {
	return fmt.Sprintf("%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%d|%s|%v", d.Provider, d.ResourceID, d.InstanceType, d.GPUType,
		d.GPUCount.String(), d.Currency, d.Purchase, d.Day.Format(time.DateOnly), d.GPUHours.String(), d.Cost.String(),
		d.Charges, d.Team, d.Untagged)
}

// GPUDaysFromRollup is org's gpu_resource_daily as the finders read it.
func GPUDaysFromRollup(t testing.TB, st *store.Store, org store.Org) []string {
	t.Helper()
	ds, err := st.GPUResourceDays(context.Background(), org.ID, time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, 0, len(ds))
	for _, d := range ds {
		out = append(out, gpuDayKey(d))
	}
	slices.Sort(out)
	return out
}
