package savings_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

func sameRollup(t *testing.T, st *store.Store, org store.Org, when string) {
	t.Helper()
	want, got := storetest.GPUDaysFromCharges(t, st, org), storetest.GPUDaysFromRollup(t, st, org)
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
	if len(storetest.GPUDaysFromRollup(t, st, org)) != 9 {
		t.Fatalf("rollup: %q", storetest.GPUDaysFromRollup(t, st, org))
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
