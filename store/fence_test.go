package store_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestFenceInEachTransaction runs a fenced connection as on Citus
// (store.Options.FenceInTransactions): each statement outside a transaction
// runs in one of its own that sets the fence first, and each transaction
// sets it as it begins. It still confines the connection to its org;
// statements that write commit at once, as they did alone; one that fails
// leaves no transaction open; rows read to the end, or closed early, end
// theirs; a batch commits when closed; a transaction rolls back on error.
// And the orgs the person belongs to (the org switcher) are what the
// own_orgs policy shows, without a subquery.
func TestFenceInEachTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.URL(t)
	st, err := store.OpenWith(ctx, url, store.Options{FenceInTransactions: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ours, user := storetest.Org(t, st, storetest.OrgOpts{Name: "Ours"})
	theirs, _ := storetest.Org(t, st, storetest.OrgOpts{Name: "Theirs"})
	second, _ := storetest.Org(t, st, storetest.OrgOpts{Name: "Second of ours", Owner: &user})
	importRows(t, st, theirs, store.DedupeNone, charge(1, "2026-03-01 10:00", "99"))
	importRows(t, st, ours, store.DedupeNone, charge(1, "2026-03-01 10:00", "1"))

	status := func(f *store.Store) byte {
		var s byte
		_ = store.RawConn(f, func(c *pgx.Conn) { s = c.PgConn().TxStatus() })
		return s
	}
	err = st.Fenced(ctx, ours.ID, user.ID, func(f *store.Store) error {
		var mine, others int
		if err := store.RawQueryRow(ctx, f, `SELECT count(*) FILTER (WHERE org_id = $1), count(*) FILTER (WHERE org_id <> $1) FROM charges`, ours.ID).
			Scan(&mine, &others); err != nil {
			return err
		}
		if mine != 1 || others != 0 {
			t.Errorf("fenced: %d of our charges and %d of others' visible, want 1 and 0", mine, others)
		}
		if s := status(f); s != 'I' {
			t.Errorf("after a statement the connection's transaction status is %q, want idle", s)
		}
		// The org switcher's orgs: the person's two, not the third.
		orgs, err := f.OrgsForUser(ctx, user.ID)
		if err != nil {
			return err
		}
		if len(orgs) != 2 || orgs[0].ID != second.ID && orgs[1].ID != second.ID {
			t.Errorf("the person's orgs, fenced: %+v, want %q and %q", orgs, ours.Name, second.Name)
		}

		// A write commits at once: another connection sees it.
		if _, err := f.CreateBudget(ctx, ours.ID, user.ID, store.BudgetInput{Name: "B", Amount: decimal.NewFromInt(10), Currency: "USD", Period: "monthly"}); err != nil {
			return err
		}
		var budgets int
		if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM budgets WHERE org_id = $1`, ours.ID).Scan(&budgets); err != nil || budgets != 1 {
			t.Errorf("the budget seen from another connection: %d (%v), want 1", budgets, err)
		}
		// A failing statement leaves no transaction behind.
		if _, err := store.RawExec(ctx, f, `SELECT 1/0`); err == nil || !strings.Contains(err.Error(), "division by zero") {
			t.Errorf("a failing statement: %v", err)
		}
		if s := status(f); s != 'I' {
			t.Errorf("after a failing statement the transaction status is %q, want idle", s)
		}
		// QueryRow with no row, and rows closed early.
		if _, err := f.Import(ctx, ours.ID, 123456); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a missing import: %v, want ErrNotFound", err)
		}
		rows, err := store.RawQuery(ctx, f, `SELECT generate_series(1, 1000)`)
		if err != nil {
			return err
		}
		rows.Next()
		rows.Close()
		if err := rows.Err(); err != nil || status(f) != 'I' {
			t.Errorf("rows closed early: %v, transaction status %q", err, status(f))
		}
		// A batch (a session's lookup and touch, say) commits when closed.
		if err := store.RawBatch(ctx, f, `UPDATE budgets SET name = 'C' WHERE org_id = $1`, ours.ID); err != nil {
			return err
		}
		var name string
		if err := st.Pool().QueryRow(ctx, `SELECT name FROM budgets WHERE org_id = $1`, ours.ID).Scan(&name); err != nil || name != "C" {
			t.Errorf("after the batch the budget is %q (%v), want C", name, err)
		}
		// A transaction sets the fence as it begins, and rolls back on error.
		errRollback := errors.New("roll back")
		err = f.InTx(ctx, func(tx *store.Store) error {
			var org string
			var others int
			if err := store.RawQueryRow(ctx, tx, `SELECT current_setting('burnrate.org_id'), (SELECT count(*) FROM charges WHERE org_id <> $1)`, ours.ID).
				Scan(&org, &others); err != nil {
				return err
			}
			if org != strconv.FormatInt(ours.ID, 10) || others != 0 {
				t.Errorf("in a transaction: fenced to %q, %d of others' charges visible", org, others)
			}
			if _, err := store.RawExec(ctx, tx, `UPDATE budgets SET name = 'D' WHERE org_id = $1`, ours.ID); err != nil {
				return err
			}
			return errRollback
		})
		if !errors.Is(err, errRollback) {
			t.Errorf("InTx: %v", err)
		}
		if err := st.Pool().QueryRow(ctx, `SELECT name FROM budgets WHERE org_id = $1`, ours.ID).Scan(&name); err != nil || name != "C" {
			t.Errorf("after the rollback the budget is %q (%v), want C", name, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
