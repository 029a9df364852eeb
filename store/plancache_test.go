package store_test

import (
	"context"
	"testing"

	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// A statement read through ForEachPlannedOnce runs on the prepared
// statement's generic plan, and the connection is left as it was, whether
// the statement succeeds, fails in Postgres or fails while its rows are
// read.
func TestForEachPlannedOnceUsesTheGenericPlanAndResets(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	const query = `SELECT n FROM generate_series(1, $1::int) n WHERE 10 / (n - $2::int) > 0`
	err := st.Conn(ctx, func(st *store.Store) error {
		mode := func() string {
			t.Helper()
			var m string
			if err := store.RawQueryRow(ctx, st, `SHOW plan_cache_mode`).Scan(&m); err != nil {
				t.Fatal(err)
			}
			return m
		}
		sum := 0
		for range 3 {
			var n int
			if err := store.ForEachPlannedOnce(ctx, st, query, []any{4, 0}, []any{&n}, func() error { sum += n; return nil }); err != nil {
				return err
			}
		}
		if sum != 3*(1+2+3+4) {
			t.Errorf("sum of the rows read = %d, want %d", sum, 3*(1+2+3+4))
		}
		var generic, custom int64
		if err := store.RawQueryRow(ctx, st, `SELECT generic_plans, custom_plans FROM pg_prepared_statements
			WHERE statement = $1`, query).Scan(&generic, &custom); err != nil {
			return err
		}
		if generic != 3 || custom != 0 {
			t.Errorf("the statement ran on %d generic and %d custom plans, want 3 and 0", generic, custom)
		}
		if m := mode(); m != "auto" {
			t.Errorf("plan_cache_mode after a read = %q, want auto", m)
		}

		// Division by zero on the third row: Postgres fails the statement.
		var n int
		if err := store.ForEachPlannedOnce(ctx, st, query, []any{4, 3}, []any{&n}, func() error { return nil }); err == nil {
			t.Error("a statement that fails in Postgres: no error")
		}
		if m := mode(); m != "auto" {
			t.Errorf("plan_cache_mode after a failed statement = %q, want auto", m)
		}
		// The caller stops on the first row.
		stop := context.Canceled
		if err := store.ForEachPlannedOnce(ctx, st, query, []any{4, 0}, []any{&n}, func() error { return stop }); err != stop {
			t.Errorf("error of a read its caller stopped = %v, want %v", err, stop)
		}
		if m := mode(); m != "auto" {
			t.Errorf("plan_cache_mode after a stopped read = %q, want auto", m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
