package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestLoginAttemptWindow: only failures inside the window count, and a
// successful attempt is taken back while earlier failures of other keys
// stay.
func TestLoginAttemptWindow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	age := func(key string, n int, ago time.Duration) {
		t.Helper()
		if _, err := storetest.Pool(st).Exec(ctx, `
			INSERT INTO login_failures (key, at) SELECT $1, now() - $2::interval FROM generate_series(1, $3)`,
			key, ago, n); err != nil {
			t.Fatal(err)
		}
	}
	count := func(key string) int {
		t.Helper()
		var n int
		if err := storetest.Pool(st).QueryRow(ctx, `SELECT count(*) FROM login_failures WHERE key = $1`, key).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	limit := func(key string) store.LoginLimit { return store.LoginLimit{Key: key, Max: 3} }

	age("email:old", 3, 20*time.Minute)
	if _, err := st.BeginLoginAttempt(ctx, 15*time.Minute, limit("email:old")); err != nil {
		t.Fatalf("failures older than the window still count: %v", err)
	}
	if n := count("email:old"); n != 1 {
		t.Fatalf("after one attempt past old failures, %d rows, want 1 (old ones forgotten)", n)
	}

	age("email:recent", 3, 5*time.Minute)
	if _, err := st.BeginLoginAttempt(ctx, 15*time.Minute, limit("email:recent"), limit("ip:192.0.2.1")); !errors.Is(err, store.ErrTooManyAttempts) {
		t.Fatalf("three recent failures: err = %v, want ErrTooManyAttempts", err)
	}
	if n := count("ip:192.0.2.1"); n != 0 {
		t.Fatalf("a refused attempt was counted against the other key (%d)", n)
	}

	age("ip:192.0.2.2", 1, time.Minute)
	a, err := st.BeginLoginAttempt(ctx, 15*time.Minute, limit("email:ok"), limit("ip:192.0.2.2"))
	if err != nil {
		t.Fatal(err)
	}
	age("email:ok", 1, time.Minute)
	if err := st.LoginSucceeded(ctx, a, "email:ok"); err != nil {
		t.Fatal(err)
	}
	if e, ip := count("email:ok"), count("ip:192.0.2.2"); e != 0 || ip != 1 {
		t.Fatalf("after success: email rows %d (want 0), address rows %d (want the 1 earlier failure)", e, ip)
	}
}
