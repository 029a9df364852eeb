package savings_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// fromCharges is what the savings finders read, grouped straight from
// charges as they did before the rollup: the truth the rollup must match.
func fromCharges(t *testing.T, st *store.Store, org store.Org) []string {
	t.Helper()
	rows, err := storetest.Pool(st).Query(context.Background(), `
		SELECT provider_name, resource_id, x_instance_type, x_gpu_type, max(x_gpu_count), billing_currency, purchase,
			(charge_period_start AT TIME ZONE $2)::date, sum(x_gpu_hours), sum(effective_cost), count(*),
			CASE WHEN bool_and(team <> '') AND min(team) = max(team) THEN min(team) ELSE '' END,
			bool_and(tags IS NULL OR tags = '{}'::jsonb)
		FROM (SELECT *, CASE WHEN sku ~* '(spot|preemptible)' THEN 'spot'
				WHEN effective_cost <> billed_cost THEN 'committed' ELSE 'on-demand' END AS purchase
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
		out = append(out, dayKey(d))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func dayKey(d store.GPUResourceDay) string {
	return fmt.Sprintf("%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%d|%s|%v", d.Provider, d.ResourceID, d.InstanceType, d.GPUType,
		d.GPUCount.String(), d.Currency, d.Purchase, d.Day.Format(time.DateOnly), d.GPUHours.String(), d.Cost.String(),
		d.Charges, d.Team, d.Untagged)
}

func fromRollup(t *testing.T, st *store.Store, org store.Org) []string {
	t.Helper()
	ds, err := st.GPUResourceDays(context.Background(), org.ID, time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, 0, len(ds))
	for _, d := range ds {
		out = append(out, dayKey(d))
	}
	slices.Sort(out)
	return out
}

func sameRollup(t *testing.T, st *store.Store, org store.Org, when string) {
	t.Helper()
	want, got := fromCharges(t, st, org), fromRollup(t, st, org)
	if !slices.Equal(want, got) {
		t.Errorf("%s: the rollup differs from charges:\n got %q\nwant %q", when, got, want)
	}
}

// TestGPURollupFollowsCharges: the savings finders' rollup
// (gpu_resource_daily) says what grouping charges says, after imports,
// a deleted import, a time zone change, and for another org.
func TestGPURollupFollowsCharges(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	org := newOrg(t, st, "acme")
	other := newOrg(t, st, "other")
	importFOCUS(t, st, org, append(days("2026-11-01", 3, gpuLine{resource: "i-a", usage: g548, hours: 24, price: g548Price}),
		days("2026-11-02", 2, gpuLine{resource: "i-a", usage: "USE1-SpotUsage:g5.48xlarge", hours: 5, price: "6.5",
			tags: `{"team": "ml"}`})...))
	importFOCUS(t, st, org, append(days("2026-11-02", 4, gpuLine{resource: "i-a", usage: g548, hours: 3, price: g548Price,
		tags: `{"team": "serving"}`}),
		days("2026-11-03", 2, gpuLine{resource: "i-c", usage: g548, hours: 24, price: g548Price, effective: "9.75"})...))
	importFOCUS(t, st, other, days("2026-11-01", 2, gpuLine{resource: "i-b", usage: g548, hours: 24, price: g548Price}))
	if len(fromRollup(t, st, org)) != 9 {
		t.Fatalf("rollup: %q", fromRollup(t, st, org))
	}
	sameRollup(t, st, org, "after imports")
	sameRollup(t, st, other, "other org")

	imports, err := st.Imports(ctx, org.ID, 10)
	if err != nil || len(imports) != 2 {
		t.Fatalf("imports: %v %v", imports, err)
	}
	if err := st.DeleteImport(ctx, org.ID, imports[0].ID); err != nil {
		t.Fatal(err)
	}
	sameRollup(t, st, org, "after deleting an import")

	la, _ := time.LoadLocation("America/Los_Angeles")
	org, err = st.UpdateOrg(ctx, org.ID, store.OrgUpdate{Name: org.Name, TimeZone: la.String(), Currency: "USD", TeamTagKey: "team"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.RebuildDailySpend(ctx, org.ID, la); err != nil {
		t.Fatal(err)
	}
	sameRollup(t, st, org, "after a time zone change")
	sameRollup(t, st, other, "other org, after the first's changes")
}
