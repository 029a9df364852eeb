package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/burnrate/burnrate/spend"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// A long-running process's pool opens its connections at start and warms
// each new one as the fenced role, seeing no org's rows, and hands it out
// reset: no role, no org.
func TestOpenWithWarmsEveryNewConnection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.URL(t)
	setup, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	storetest.Org(t, setup, storetest.OrgOpts{})
	setup.Close()

	type warmed struct {
		role, org string
		orgs      int
		err       error
	}
	var (
		mu   sync.Mutex
		seen []warmed
	)
	st, err := store.OpenWith(ctx, url, store.Options{MinConns: 3, Warm: func(ctx context.Context, st *store.Store) {
		var w warmed
		w.err = spend.Warm(ctx, st)
		if w.err == nil {
			w.role, w.org, w.orgs, w.err = store.Settings(ctx, st)
		}
		mu.Lock()
		seen = append(seen, w)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	// The pool counts a connection from when it starts to connect; wait
	// for the three to be warmed, too.
	warmedCount := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(seen)
	}
	deadline := time.Now().Add(10 * time.Second)
	for st.Pool().Stat().IdleConns() < 3 || warmedCount() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections idle, %d warmed 10 s after start, want the 3 asked", st.Pool().Stat().IdleConns(), warmedCount())
		}
		time.Sleep(20 * time.Millisecond)
	}
	role, org, orgs, err := store.Settings(ctx, st)
	if err != nil || role != "none" || org != "" || orgs != 1 {
		t.Errorf("a warmed connection, handed out: role %q, org %q, %d orgs seen, %v; want role none, no org, the one org", role, org, orgs, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) < 3 {
		t.Fatalf("%d connections warmed, want every one of the 3", len(seen))
	}
	for i, w := range seen {
		if w.err != nil || w.role != "burnrate_app" || w.org != "0" || w.orgs != 0 {
			t.Errorf("warming connection %d: role %q, org %q, %d orgs seen, %v; want burnrate_app fenced to org 0, seeing none", i, w.role, w.org, w.orgs, w.err)
		}
	}
}
