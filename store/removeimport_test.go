package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// finishedImport writes rows as one import of org and marks it succeeded,
// as the importer does, returning its id.
func finishedImport(t *testing.T, st *store.Store, org store.Org, name string, rows ...store.Charge) int64 {
	t.Helper()
	ctx := context.Background()
	imp, err := st.CreateImport(ctx, store.NewImport{OrgID: org.ID, FileName: name, SHA256: []byte(t.Name() + name), Via: "test"})
	if err != nil {
		t.Fatal(err)
	}
	err = st.InTx(ctx, func(tx *store.Store) error {
		res, err := tx.WriteCharges(ctx, org.ID, imp.ID, time.UTC, store.DedupeNone, &sliceSource{rows: rows})
		if err != nil {
			return err
		}
		return tx.FinishImport(ctx, org.ID, imp.ID, store.ImportResult{Source: "aws-cur", Rows: res.Rows, SHA256: []byte(t.Name() + name)})
	})
	if err != nil {
		t.Fatal(err)
	}
	return imp.ID
}

// TestRemoveImport removes a succeeded import: its rows leave charges and
// every rollup (to the last digit, the other import's rows stay), it stays
// in the history as removed and in the month's quota, and another org is
// untouched. A second removal, a running import and a failed one are
// answered as the docs say.
func TestRemoveImport(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	org, user := storetest.Org(t, st, storetest.OrgOpts{})
	other, _ := storetest.Org(t, st, storetest.OrgOpts{})
	gpu := func(c *store.Charge) {
		c.ResourceID, c.InstanceType, c.GPUType = "i-1", "p5.48xlarge", "H100"
		c.GPUCount, c.GPUHours = decimal.NewFromInt(8), decimal.NewFromInt(8)
	}
	keep := finishedImport(t, st, org, "keep.csv",
		charge(1, "2026-11-01 00:00", "10.25"), charge(2, "2026-11-02 00:00", "3.5", gpu))
	// Another account's bill, so that it restates nothing of the first.
	account := func(c *store.Charge) { c.BillingAccountID = "222" }
	mistake := finishedImport(t, st, org, "mistake.csv",
		charge(1, "2026-11-02 00:00", "1000.123456789", gpu, account),
		charge(2, "2026-11-03 00:00", "7", account, func(c *store.Charge) { c.ServiceName = "S3" }))
	finishedImport(t, st, other, "other.csv", charge(1, "2026-11-02 00:00", "99", gpu))
	wantTotals(t, st, org.ID, "1020.873456789")
	since := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	quotaBefore, err := st.RowsImportedSince(ctx, org.ID, since)
	if err != nil {
		t.Fatal(err)
	}

	imp, err := st.RemoveImport(ctx, org.ID, mistake, user.ID, "web")
	if err != nil {
		t.Fatal(err)
	}
	if imp.FileName != "mistake.csv" || imp.Rows != 2 {
		t.Fatalf("removed %+v", imp)
	}
	wantTotals(t, st, org.ID, "13.75")
	wantSpendByMatchesCube(t, st, org.ID, org.Location(), "after removing an import")
	var gpuHours decimal.Decimal
	var services int
	if err := st.Pool().QueryRow(ctx, `SELECT coalesce(sum(gpu_hours), 0) FROM gpu_resource_daily WHERE org_id = $1`, org.ID).Scan(&gpuHours); err != nil {
		t.Fatal(err)
	}
	if !gpuHours.Equal(decimal.NewFromInt(8)) {
		t.Errorf("gpu_resource_daily holds %s GPU-hours after the removal, want the kept import's 8", gpuHours)
	}
	// A value only the removed import spent on is no filter choice any more.
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM daily_spend WHERE org_id = $1 AND service = 'S3'`, org.ID).Scan(&services); err != nil {
		t.Fatal(err)
	}
	if services != 0 {
		t.Errorf("daily_spend keeps %d S3 rows with no charges", services)
	}
	wantTotals(t, st, other.ID, "99")

	got, err := st.Import(ctx, org.ID, mistake)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.ImportRemoved || got.RemovedAt == nil || got.RemoverEmail != user.Email {
		t.Errorf("removed import reads %q removed %v by %q, want removed by %s", got.Status, got.RemovedAt, got.RemoverEmail, user.Email)
	}
	if quota, err := st.RowsImportedSince(ctx, org.ID, since); err != nil || quota != quotaBefore {
		t.Errorf("quota counts %d rows after the removal (%v), want still %d", quota, err, quotaBefore)
	}
	if _, err := st.RemoveImport(ctx, org.ID, mistake, user.ID, "web"); !errors.Is(err, store.ErrImportRemoved) {
		t.Errorf("second removal: %v, want ErrImportRemoved", err)
	}
	if _, err := st.RemoveImport(ctx, other.ID, keep, 0, "api"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another org's import: %v, want ErrNotFound", err)
	}
	wantTotals(t, st, org.ID, "13.75")

	running, err := st.CreateImport(ctx, store.NewImport{OrgID: org.ID, FileName: "running.csv", SHA256: []byte("running"), Via: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.RemoveImport(ctx, org.ID, running.ID, 0, "cli"); !errors.Is(err, store.ErrImportRunning) {
		t.Errorf("running import: %v, want ErrImportRunning", err)
	}
	if err := st.FailImport(ctx, org.ID, running.ID, "aws-cur", "bad file", 3, "cost"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.RemoveImport(ctx, org.ID, running.ID, 0, "cli"); err != nil {
		t.Fatalf("failed import: %v", err)
	}
	if _, err := st.Import(ctx, org.ID, running.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a removed failed import is still in the history: %v", err)
	}
	wantTotals(t, st, org.ID, "13.75")
}
