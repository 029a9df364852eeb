package store_test

import (
	"context"
	"testing"

	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestFailInterruptedImportsSparesLiveOnes leaves one import processing on
// a connection that is gone and holds another open on a live connection: a
// sweep, from any process, fails the first only.
func TestFailInterruptedImportsSparesLiveOnes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	org, _ := storetest.Org(t, st, storetest.OrgOpts{})
	other, _ := storetest.Org(t, st, storetest.OrgOpts{})
	dead := storetest.AbandonedImport(t, st, org.ID)
	deadElsewhere := storetest.AbandonedImport(t, st, other.ID)
	// A second server on the same database.
	peer, err := store.Open(ctx, st.Pool().Config().ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()

	const msg = "interrupted: test"
	err = st.Conn(ctx, func(c *store.Store) error {
		live, err := c.CreateImport(ctx, store.NewImport{OrgID: org.ID, FileName: "live.csv", Via: "test"})
		if err != nil {
			return err
		}
		failed, err := peer.FailInterruptedImports(ctx, msg)
		if err != nil {
			return err
		}
		if len(failed) != 2 || failed[0].ID != dead.ID || failed[1].ID != deadElsewhere.ID {
			t.Errorf("sweep failed %+v, want the two abandoned imports %d and %d", failed, dead.ID, deadElsewhere.ID)
		}
		if again, err := st.FailInterruptedImports(ctx, msg); err != nil || len(again) != 0 {
			t.Errorf("second sweep = %+v, %v; want nothing left to fail", again, err)
		}
		if got, _ := st.Import(ctx, org.ID, live.ID); got.Status != store.ImportProcessing {
			t.Errorf("live import while its connection holds it: %q, want processing", got.Status)
		}
		// Once its connection lets go without finishing it, it is as dead
		// as a crashed one.
		if err := c.EndImport(ctx, org.ID, live.ID); err != nil {
			return err
		}
		failed, err = peer.FailInterruptedImports(ctx, msg)
		if err != nil {
			return err
		}
		if len(failed) != 1 || failed[0].ID != live.ID {
			t.Errorf("sweep after the claim went = %+v, want import %d", failed, live.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.Import(ctx, org.ID, dead.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.ImportFailed || got.Error != msg || got.FinishedAt == nil {
		t.Fatalf("abandoned import after the sweep: %q %q finished %v; want failed with %q", got.Status, got.Error, got.FinishedAt, msg)
	}
}

// TestSweepKnowsAReusedBackendID: an import whose row names the process id
// of a backend that started after the import was made (the id was reused
// once its importer's backend was gone) is failed; one whose claim was let
// go (EndImport) too, while its connection still lives.
func TestSweepKnowsAReusedBackendID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	org, _ := storetest.Org(t, st, storetest.OrgOpts{})
	dead := storetest.AbandonedImport(t, st, org.ID)
	const msg = "interrupted: test"
	err := st.Conn(ctx, func(c *store.Store) error {
		var pid int32
		if err := store.RawQueryRow(ctx, c, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
			return err
		}
		// The dead import's row, backdated to before this backend started,
		// now names this live backend.
		if _, err := st.Pool().Exec(ctx, `UPDATE imports SET claim_pid = $3, created_at = now() - interval '1 day' WHERE org_id = $1 AND id = $2`,
			org.ID, dead.ID, pid); err != nil {
			return err
		}
		held, err := c.CreateImport(ctx, store.NewImport{OrgID: org.ID, FileName: "held.csv", Via: "test"})
		if err != nil {
			return err
		}
		failed, err := st.FailInterruptedImports(ctx, msg)
		if err != nil {
			return err
		}
		if len(failed) != 1 || failed[0].ID != dead.ID {
			t.Errorf("sweep failed %+v, want only the import %d whose backend id was reused", failed, dead.ID)
		}
		if err := c.EndImport(ctx, org.ID, held.ID); err != nil {
			return err
		}
		if failed, err = st.FailInterruptedImports(ctx, msg); err != nil {
			return err
		}
		if len(failed) != 1 || failed[0].ID != held.ID {
			t.Errorf("sweep after EndImport failed %+v, want the import %d its live connection let go of", failed, held.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
