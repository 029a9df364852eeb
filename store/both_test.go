package store_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// session is what a connection is: its backend, role and fence.
type session struct {
	pid       int
	role, org string
	theirs    int // another org's charges it can see
}

func sessionOf(t *testing.T, ctx context.Context, st *store.Store, theirs int64) session {
	t.Helper()
	var s session
	err := store.RawQueryRow(ctx, st, `SELECT pg_backend_pid(), current_user, current_setting('burnrate.org_id', true),
		(SELECT count(*) FROM charges WHERE org_id = $1)`, theirs).Scan(&s.pid, &s.role, &s.org, &s.theirs)
	if err != nil {
		t.Error(err) // not Fatal: b runs on a goroutine of its own
	}
	return s
}

// TestBothRunsBesideOnAFencedConnection checks store.Both: fenced, with
// connections idle, b runs on a second connection fenced to the same org
// (another org's rows stay out of sight) at the same time as a, and that
// connection goes back to the pool unfenced; in a transaction both run on
// it, one after the other; a's error comes first, then b's, and a panic in
// b reaches the caller once b's connection is back.
func TestBothRunsBesideOnAFencedConnection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	ours, _ := storetest.Org(t, st, storetest.OrgOpts{Name: "Ours"})
	theirs, _ := storetest.Org(t, st, storetest.OrgOpts{Name: "Theirs"})
	importRows(t, st, theirs, store.DedupeNone, charge(1, "2026-03-01 10:00", "99"))
	// Two idle connections: one to fence, one for Both to find.
	var held []*pgxpool.Conn
	for range 2 {
		c, err := storetest.Pool(st).Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	for _, c := range held {
		c.Release()
	}

	var a, b session
	inB := make(chan struct{})
	err := st.Fenced(ctx, ours.ID, 0, func(fenced *store.Store) error {
		return fenced.Both(ctx, func(st *store.Store) error {
			select { // b runs while a waits: they are beside each other
			case <-inB:
			case <-time.After(5 * time.Second):
				t.Error("b did not start while a ran")
			}
			a = sessionOf(t, ctx, st, theirs.ID)
			return nil
		}, func(st *store.Store) error {
			close(inB)
			b = sessionOf(t, ctx, st, theirs.ID)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	want := session{role: "burnrate_app", org: strconv.FormatInt(ours.ID, 10)}
	for name, s := range map[string]session{"a": a, "b": b} {
		if s.role != want.role || s.org != want.org || s.theirs != 0 {
			t.Errorf("%s ran as %q fenced to %q seeing %d of another org's charges; want %q, %q and none", name, s.role, s.org, s.theirs, want.role, want.org)
		}
	}
	if a.pid == b.pid {
		t.Errorf("a and b ran on one connection (%d)", a.pid)
	}
	// Every connection back in the pool is unfenced.
	idle := storetest.Pool(st).AcquireAllIdle(ctx)
	for _, c := range idle {
		var role, org string
		if err := c.QueryRow(ctx, `SELECT current_user, coalesce(current_setting('burnrate.org_id', true), '')`).Scan(&role, &org); err != nil {
			t.Fatal(err)
		}
		if role == "burnrate_app" || org != "" {
			t.Errorf("an idle connection is still fenced: role %q, org %q", role, org)
		}
		c.Release()
	}

	// In a transaction, one connection, in order.
	var order []int
	err = st.Fenced(ctx, ours.ID, 0, func(fenced *store.Store) error {
		return fenced.InTx(ctx, func(tx *store.Store) error {
			return tx.Both(ctx, func(st *store.Store) error {
				order = append(order, sessionOf(t, ctx, st, theirs.ID).pid)
				return nil
			}, func(st *store.Store) error {
				order = append(order, -sessionOf(t, ctx, st, theirs.ID).pid)
				return nil
			})
		})
	})
	if err != nil || len(order) != 2 || order[0] != -order[1] {
		t.Errorf("in a transaction: %v, pids %v; want a then b on one connection", err, order)
	}

	errA, errB := errors.New("a failed"), errors.New("b failed")
	err = st.Fenced(ctx, ours.ID, 0, func(fenced *store.Store) error {
		return fenced.Both(ctx, func(*store.Store) error { return errA }, func(*store.Store) error { return errB })
	})
	if !errors.Is(err, errA) {
		t.Errorf("both failing: %v, want a's error", err)
	}
	err = st.Fenced(ctx, ours.ID, 0, func(fenced *store.Store) error {
		return fenced.Both(ctx, func(*store.Store) error { return nil }, func(*store.Store) error { return errB })
	})
	if !errors.Is(err, errB) {
		t.Errorf("b failing: %v, want b's error", err)
	}

	func() {
		defer func() {
			if r := recover(); r != "b panicked" {
				t.Errorf("recovered %v, want b's panic", r)
			}
		}()
		_ = st.Fenced(ctx, ours.ID, 0, func(fenced *store.Store) error {
			return fenced.Both(ctx, func(*store.Store) error { return nil }, func(*store.Store) error { panic("b panicked") })
		})
	}()
}
