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
		if err := c.EndImport(ctx, live.ID); err != nil {
			return err
		}
		failed, err = peer.FailInterruptedImports(ctx, msg)
		if err != nil {
			return err
		}
		if len(failed) != 1 || failed[0].ID != live.ID {
			t.Errorf("sweep after the lock went = %+v, want import %d", failed, live.ID)
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
