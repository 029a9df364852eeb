package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

func sameGPURollup(t *testing.T, st *store.Store, org store.Org, when string, wantKeys int) {
	t.Helper()
	want, got := storetest.GPUDaysFromCharges(t, st, org), storetest.GPUDaysFromRollup(t, st, org)
	if !slices.Equal(want, got) {
		t.Errorf("%s: gpu_resource_daily differs from charges:\n got %q\nwant %q", when, got, want)
	}
	if len(want) != wantKeys {
		t.Errorf("%s: %d resource days, want %d: %q", when, len(want), wantKeys, want)
	}
}

// gpuRollupRows counts org's rows in gpu_resource_daily.
func gpuRollupRows(t *testing.T, st *store.Store, orgID int64) int {
	t.Helper()
	var n int
	if err := st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM gpu_resource_daily WHERE org_id = $1`, orgID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// importFenced writes rows as an import does: fenced to org, in one
// transaction, with days in the org's time zone.
func importFenced(t *testing.T, st *store.Store, org store.Org, dedupe store.Dedupe, rows ...store.Charge) store.Import {
	t.Helper()
	ctx := context.Background()
	var imp store.Import
	err := st.Fenced(ctx, org.ID, 0, func(fenced *store.Store) error {
		return fenced.InTx(ctx, func(tx *store.Store) error {
			var err error
			imp, err = tx.CreateImport(ctx, store.NewImport{OrgID: org.ID, FileName: "f.csv",
				SHA256: []byte(t.Name() + time.Now().String()), Via: "test"})
			if err != nil {
				return err
			}
			defer tx.EndImport(ctx, org.ID, imp.ID)
			_, err = tx.WriteCharges(ctx, org.ID, imp.ID, org.Location(), dedupe, &sliceSource{rows: rows})
			return err
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return imp
}

// gpu makes c a GPU instance row of resource id res.
func gpu(res, instance string, count, hours int64) func(*store.Charge) {
	return func(c *store.Charge) {
		c.ResourceID, c.InstanceType, c.GPUType = res, instance, "A10G"
		c.GPUCount, c.GPUHours = decimal.NewFromInt(count), decimal.NewFromInt(hours)
		c.SKU = "USE1-BoxUsage:" + instance
	}
}

// TestGPURollupWrittenByImports: the GPU rollup an import writes itself
// (no trigger on charges' INSERT) says what grouping the charges says, by
// the COPY path (in memory and spilled to disk), the keyed paths, after a
// restated period, a deleted import and an org's deletion; and a restated
// or deleted import leaves no rows of keys it emptied behind.
func TestGPURollupWrittenByImports(t *testing.T) {
	// Not parallel: it lowers the rollup's key limit, a package variable.
	defer store.SetGPURollupMaxKeys(3)()
	ctx := context.Background()
	st := storetest.New(t)
	org, _ := storetest.Org(t, st, storetest.OrgOpts{Name: "GPU"})
	other, _ := storetest.Org(t, st, storetest.OrgOpts{Name: "Other"})
	berlin, _ := time.LoadLocation("Europe/Berlin")
	org, err := st.UpdateOrg(ctx, org.ID, store.OrgUpdate{Name: org.Name, TimeZone: berlin.String(), Currency: "USD", TeamTagKey: "team"})
	if err != nil {
		t.Fatal(err)
	}

	// A cloud export: more keys than the limit, so part of it is spilled.
	november := []store.Charge{
		charge(1, "2026-11-01 10:00", "10", gpu("i-a", "g5.xlarge", 1, 1)),
		charge(2, "2026-11-01 11:00", "10", gpu("i-a", "g5.xlarge", 1, 1)), // same key as line 1
		charge(3, "2026-11-01 23:30", "10", gpu("i-a", "g5.xlarge", 1, 1)), // 00:30 on the 2nd in Berlin
		charge(4, "2026-11-01 10:00", "7.5", gpu("i-b", "g5.12xlarge", 4, 4), func(c *store.Charge) {
			c.SKU = "USE1-SPOTUsage:g5.12xlarge"
		}),
		charge(5, "2026-11-01 10:00", "20", gpu("i-c", "g5.xlarge", 1, 1), func(c *store.Charge) {
			c.EffectiveCost = decimal.RequireFromString("12.25") // a savings plan covered it
			c.Tags, c.Team = map[string]string{"team": "ml"}, "ml"
		}),
		charge(6, "2026-11-01 10:00", "20", gpu("i-c", "g5.xlarge", 1, 1), func(c *store.Charge) {
			c.Tags, c.Team = map[string]string{"env": "dev"}, ""
		}),
		charge(7, "2026-11-02 10:00", "-3", gpu("i-a", "g5.xlarge", 1, 1), func(c *store.Charge) { c.ChargeCategory = "Credit" }),
		charge(8, "2026-11-02 10:00", "4", gpu("i-d", "", 0, 0)), // no GPU-hours
		charge(9, "2026-11-03 10:00", "1.123456789012345678901", gpu("i-a", "g5.xlarge", 1, 1)),
	}
	first := importFenced(t, st, org, store.DedupeNone, november...)
	sameGPURollup(t, st, org, "after a cloud export", 6)
	importFenced(t, st, other, store.DedupeNone, charge(1, "2026-11-01 10:00", "10", gpu("i-z", "g5.xlarge", 1, 1)))
	sameGPURollup(t, st, other, "another org", 1)

	// Another account's export on the same days: its keys add to the days'.
	second := importFenced(t, st, org, store.DedupeNone,
		charge(1, "2026-11-01 12:00", "10", gpu("i-a", "g5.xlarge", 1, 1), func(c *store.Charge) {
			c.BillingAccountID, c.Tags, c.Team = "222", map[string]string{"team": "ml"}, "ml" // i-a's day: mixed teams
		}),
		charge(2, "2026-11-01 12:00", "10", gpu("i-e", "g5.xlarge", 1, 1), func(c *store.Charge) { c.BillingAccountID = "222" }))
	sameGPURollup(t, st, org, "after a second account's export", 7)

	// The first export restated: its rows are replaced, i-b's key is gone.
	importFenced(t, st, org, store.DedupeNone,
		charge(1, "2026-11-01 10:00", "11", gpu("i-a", "g5.xlarge", 1, 2)),
		charge(2, "2026-11-04 10:00", "11", gpu("i-a", "g5.xlarge", 1, 2)))
	sameGPURollup(t, st, org, "after a restated period", 3)
	if n := gpuRollupRows(t, st, org.ID); n > 5 {
		t.Errorf("after a restated period: %d rows in gpu_resource_daily, want at most 5 (compacted days)", n)
	}

	// Keyed sources: events skipped when known, buckets replaced.
	keyed := func(key string, hours int64) func(*store.Charge) {
		return func(c *store.Charge) {
			c.Source, c.DedupeKey, c.BillingPeriodStart = "oci-cost", key, time.Time{}
			c.GPUHours = decimal.NewFromInt(hours)
		}
	}
	importFenced(t, st, org, store.DedupeSkip,
		charge(1, "2026-11-05 10:00", "3", gpu("ocid-1", "BM.GPU.A10.4", 4, 4), keyed("k1", 4)),
		charge(2, "2026-11-05 11:00", "3", gpu("ocid-1", "BM.GPU.A10.4", 4, 4), keyed("k2", 4)))
	importFenced(t, st, org, store.DedupeSkip,
		charge(1, "2026-11-05 11:00", "3", gpu("ocid-1", "BM.GPU.A10.4", 4, 4), keyed("k2", 4)), // known: skipped
		charge(2, "2026-11-05 12:00", "3", gpu("ocid-1", "BM.GPU.A10.4", 4, 4), keyed("k3", 4)))
	sameGPURollup(t, st, org, "after keyed events", 4)
	bucket := func(key string) func(*store.Charge) {
		return func(c *store.Charge) { c.Source, c.DedupeKey, c.BillingPeriodStart = "litellm-daily", key, time.Time{} }
	}
	importFenced(t, st, org, store.DedupeReplace,
		charge(1, "2026-11-06 10:00", "5", gpu("r-1", "g6.xlarge", 1, 5), bucket("b1")),
		charge(2, "2026-11-06 10:00", "5", gpu("r-1", "g6.xlarge", 1, 5), bucket("b1"))) // one bucket, merged
	importFenced(t, st, org, store.DedupeReplace,
		charge(1, "2026-11-06 10:00", "6", gpu("r-1", "g6.xlarge", 1, 6), bucket("b1"))) // restates it
	sameGPURollup(t, st, org, "after keyed buckets", 5)

	// An Azure actual-cost export, then the amortized export of its slice:
	// the actual-cost row keeps no effective cost (its purchase kind
	// follows) and the amortized row no GPU-hours, in the same statement
	// that zeroes them.
	azure := func(basis store.CostBasis, cost string) {
		t.Helper()
		imp, err := st.CreateImport(ctx, store.NewImport{OrgID: org.ID, FileName: "azure.csv", SHA256: []byte(t.Name() + cost), Via: "test"})
		if err != nil {
			t.Fatal(err)
		}
		row := charge(1, "2026-11-07 10:00", cost, gpu("vm-1", "Standard_NV36ads_A10_v5", 1, 3), func(c *store.Charge) {
			c.Source, c.BillingAccountID = "azure-cost", "az"
		})
		if err := st.InTx(ctx, func(tx *store.Store) error {
			_, err := tx.WriteCharges(ctx, org.ID, imp.ID, org.Location(), store.DedupeNone,
				&basisSource{sliceSource: sliceSource{rows: []store.Charge{row}}, basis: basis})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	azure(store.CostBilled, "9")
	sameGPURollup(t, st, org, "after an Azure actual-cost export", 6)
	azure(store.CostAmortized, "8")
	sameGPURollup(t, st, org, "after its amortized export", 6)

	// Deleted imports: i-a's first day is untagged again, no team.
	if err := st.DeleteImport(ctx, org.ID, second.ID); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteImport(ctx, org.ID, first.ID); err != nil { // already replaced: nothing left of it
		t.Fatal(err)
	}
	sameGPURollup(t, st, org, "after deleting imports", 5)
	imports, err := st.Imports(ctx, org.ID, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range imports {
		if err := st.DeleteImport(ctx, org.ID, imp.ID); err != nil {
			t.Fatal(err)
		}
	}
	sameGPURollup(t, st, org, "after deleting every import", 0)
	if n := gpuRollupRows(t, st, org.ID); n != 0 {
		t.Errorf("after deleting every import: %d rows left in gpu_resource_daily", n)
	}
	sameGPURollup(t, st, other, "another org, after the first's changes", 1)

	// An org deleted takes its rows with it.
	if n := gpuRollupRows(t, st, other.ID); n == 0 {
		t.Fatal("the other org has no GPU rollup to delete")
	}
	if err := st.DeleteOrg(ctx, other.ID); err != nil {
		t.Fatal(err)
	}
	if n := gpuRollupRows(t, st, other.ID); n != 0 {
		t.Errorf("after deleting the org: %d rows left in gpu_resource_daily", n)
	}
}
