package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestUnfenced: a request fenced to an org cannot read River's tables (they
// hold every org's jobs), but can write them through Unfenced, in its own
// transaction, and is fenced again afterwards.
func TestUnfenced(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	org, _ := storetest.Org(t, st, storetest.OrgOpts{})
	queues := func(name string) int {
		t.Helper()
		var n int
		if err := storetest.Pool(st).QueryRow(ctx, `SELECT count(*) FROM river_queue WHERE name = $1`, name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	user := func(s *store.Store) string {
		t.Helper()
		var u string
		if err := store.RawQueryRow(ctx, s, `SELECT current_user::text`).Scan(&u); err != nil {
			t.Fatal(err)
		}
		return u
	}
	errBoom := errors.New("boom")
	err := st.Fenced(ctx, org.ID, 0, func(f *store.Store) error {
		var n int
		err := store.RawQueryRow(ctx, f, `SELECT count(*) FROM river_job`).Scan(&n)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "42501" {
			t.Errorf("fenced read of river_job: %v, want permission denied", err)
		}
		return f.InTx(ctx, func(tx *store.Store) error {
			err := tx.Unfenced(ctx, func(ptx pgx.Tx) error {
				_, err := ptx.Exec(ctx, `INSERT INTO river_queue (name) VALUES ('kept')`)
				return err
			})
			if err != nil {
				t.Fatalf("unfenced insert: %v", err)
			}
			if u := user(tx); u != "burnrate_app" {
				t.Errorf("after Unfenced the transaction runs as %q, want burnrate_app", u)
			}
			err = tx.Unfenced(ctx, func(ptx pgx.Tx) error {
				if _, err := ptx.Exec(ctx, `INSERT INTO river_queue (name) VALUES ('dropped')`); err != nil {
					return err
				}
				return errBoom
			})
			if !errors.Is(err, errBoom) {
				t.Fatalf("failing Unfenced: %v", err)
			}
			if u := user(tx); u != "burnrate_app" {
				t.Errorf("after a failed Unfenced the transaction runs as %q, want burnrate_app", u)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if queues("kept") != 1 || queues("dropped") != 0 {
		t.Fatalf("kept = %d, dropped = %d; want 1, 0", queues("kept"), queues("dropped"))
	}
}

// TestForgetLoginFailures deletes the failures older than the age given,
// whatever their key, and keeps the others.
func TestForgetLoginFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	if _, err := storetest.Pool(st).Exec(ctx, `
		INSERT INTO login_failures (key, at) VALUES
			('email:a@example.com', now() - interval '2 days'),
			('ip:192.0.2.1', now() - interval '25 hours'),
			('email:b@example.com', now() - interval '1 minute')`); err != nil {
		t.Fatal(err)
	}
	n, err := st.ForgetLoginFailures(ctx, 24*time.Hour)
	if err != nil || n != 2 {
		t.Fatalf("forgot %d, %v; want 2", n, err)
	}
	var left string
	if err := storetest.Pool(st).QueryRow(ctx, `SELECT string_agg(key, ',') FROM login_failures`).Scan(&left); err != nil || left != "email:b@example.com" {
		t.Fatalf("left %q, %v", left, err)
	}
}
