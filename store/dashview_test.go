package store_test

import (
	"context"
	"testing"

	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestSaveDashboardViewCommitsAsynchronously checks that saving the view
// does not wait for its commit to reach disk, in its own transaction only:
// inside a transaction synchronous_commit is off after the save, and on a
// connection saving outside one the setting is back on for what follows.
// The view saved is read back.
func TestSaveDashboardViewCommitsAsynchronously(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	org, owner := storetest.Org(t, st, storetest.OrgOpts{})
	err := st.InTx(ctx, func(tx *store.Store) error {
		if err := tx.SaveDashboardView(ctx, org.ID, owner.ID, "range=7d"); err != nil {
			return err
		}
		if sc := setting(t, tx); sc != "off" {
			t.Errorf("synchronous_commit in the saving transaction = %q, want off", sc)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = st.Conn(ctx, func(c *store.Store) error {
		if err := c.SaveDashboardView(ctx, org.ID, owner.ID, "range=90d&group=model"); err != nil {
			return err
		}
		if sc := setting(t, c); sc != "on" {
			t.Errorf("synchronous_commit after the save, outside a transaction = %q, want on", sc)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if q, err := st.DashboardView(ctx, org.ID, owner.ID); err != nil || q != "range=90d&group=model" {
		t.Fatalf("saved view = %q, %v", q, err)
	}
}

func setting(t *testing.T, s *store.Store) string {
	t.Helper()
	var v string
	if err := store.RawQueryRow(context.Background(), s, "SELECT current_setting('synchronous_commit')").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}
