package ingest

import (
	"context"
	"errors"
	"os"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/burnrate/burnrate/store"
)

// TestAfterImport: the hook runs once per successful import, in the
// import's transaction (what it writes commits with the import), not for a
// duplicate or a bad file, and its failure fails the import, leaving
// nothing written.
func TestAfterImport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupImport(t)
	type call struct{ org, imp int64 }
	var calls []call
	var fail error
	b.im.AfterImport = func(ctx context.Context, tx *store.Store, orgID, importID int64) error {
		calls = append(calls, call{orgID, importID})
		// Written the way jobs.Queue.Insert writes River's tables.
		err := tx.Unfenced(ctx, func(ptx pgx.Tx) error {
			_, err := ptx.Exec(ctx, `INSERT INTO river_queue (name) VALUES ($1)`, "after-"+strconv.FormatInt(importID, 10))
			return err
		})
		return errors.Join(err, fail)
	}
	written := func(importID int64) bool {
		t.Helper()
		var n int
		if err := b.st.Pool().QueryRow(ctx, `SELECT count(*) FROM river_queue WHERE name = $1`, "after-"+strconv.FormatInt(importID, 10)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}

	body, _ := os.ReadFile("testdata/exports/focus/focus_sample_1.0.csv")
	res, err := b.importFile(t, "focus.csv", body)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 1 || calls[0] != (call{b.org.ID, res.ID}) || !written(res.ID) {
		t.Fatalf("after one import: calls %v, written %v", calls, written(res.ID))
	}
	if _, err := b.importFile(t, "focus-again.csv", body); err != nil {
		t.Fatal(err)
	}
	if _, err := b.importFile(t, "bad.csv", []byte("BilledCost,ChargePeriodStart\n")); err == nil {
		t.Fatal("a header-only file imported")
	}
	if len(calls) != 1 {
		t.Fatalf("hook called for a duplicate or a failed import: %v", calls)
	}

	fail = errors.New("the queue is down")
	cur, _ := os.ReadFile("testdata/exports/aws/test_cur.csv")
	_, err = b.importFile(t, "cur.csv", cur)
	if err == nil {
		t.Fatal("an import whose hook failed succeeded")
	}
	failed := calls[len(calls)-1].imp
	imp, err := b.st.Import(ctx, b.org.ID, failed)
	if err != nil || imp.Status != store.ImportFailed || imp.Rows != 0 {
		t.Fatalf("import whose hook failed: %+v, %v; want failed with no rows", imp, err)
	}
	var charges int
	if err := b.st.Pool().QueryRow(ctx, `SELECT count(*) FROM charges WHERE import_id = $1`, failed).Scan(&charges); err != nil || charges != 0 {
		t.Fatalf("%d charges kept (%v) from an import whose hook failed", charges, err)
	}
	if written(failed) {
		t.Fatal("the hook's write outlived the import's rollback")
	}
}
