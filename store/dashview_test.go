package store_test

import (
	"context"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/access"
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

// TestDashboardState reads, in one statement, whether an org has spend,
// its spend version (as SpendVersion says it, moving with a budget write)
// and the view a user last saved: none for another user or for no user.
func TestDashboardState(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	org, owner := storetest.Org(t, st, storetest.OrgOpts{})
	other := storetest.Member(t, st, org, access.Viewer)
	state := func(userID int64) store.DashboardState {
		t.Helper()
		s, err := st.DashboardState(ctx, org.ID, userID)
		if err != nil {
			t.Fatal(err)
		}
		v, err := st.SpendVersion(ctx, org.ID)
		if err != nil || s.Version != v {
			t.Fatalf("version %q, SpendVersion says %q (%v)", s.Version, v, err)
		}
		return s
	}
	empty := state(owner.ID)
	if empty.HasSpend || empty.Saved != "" {
		t.Fatalf("a new org: %+v", empty)
	}
	importRows(t, st, org, store.DedupeNone, charge(1, "2026-11-02 10:00", "12.50"))
	if err := st.SaveDashboardView(ctx, org.ID, owner.ID, "range=90d&group=model"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateBudget(ctx, org.ID, owner.ID, store.BudgetInput{Name: "b", Amount: decimal.NewFromInt(100), Currency: "USD",
		Period: "monthly", Thresholds: []int{100}}); err != nil {
		t.Fatal(err)
	}
	got := state(owner.ID)
	if !got.HasSpend || got.Saved != "range=90d&group=model" || got.Version == empty.Version {
		t.Fatalf("after an import, a saved view and a budget: %+v (version before %q)", got, empty.Version)
	}
	for _, id := range []int64{other.ID, 0} {
		if s := state(id); s.Saved != "" || !s.HasSpend {
			t.Errorf("user %d: %+v, want spend and no saved view", id, s)
		}
	}
}
