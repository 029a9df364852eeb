package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/burnrate/burnrate/jobs"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestWorker runs 'burnrate worker' on a database: it enqueues and runs the
// periodic maintenance jobs, works a job another process enqueued, and
// stops cleanly when told to.
func TestWorker(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t)
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logs bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"worker"}, env(map[string]string{"DATABASE_URL": url, "LOG_LEVEL": "info"}), &bytes.Buffer{}, &logs)
	}()
	waitJob(t, st, "sweep_imports")
	waitJob(t, st, "cleanup")

	// A session expired since: deleted by a cleanup another process
	// (the CLI, say) enqueues.
	org, owner := storetest.Org(t, st, storetest.OrgOpts{})
	sess, _, err := st.CreateSession(context.Background(), owner.ID, org.ID, "test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool().Exec(context.Background(), `UPDATE sessions SET expires_at = now() WHERE id = $1`, sess.ID); err != nil {
		t.Fatal(err)
	}
	other, err := jobs.New(st, jobs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Queue().Insert(context.Background(), st, jobs.CleanupArgs{}, nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		if err := st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM sessions WHERE id = $1`, sess.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the worker did not run the enqueued cleanup within 30s")
		}
		time.Sleep(50 * time.Millisecond)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("worker: %v", err)
		}
	case <-time.After(jobs.DefaultStopTimeout + 10*time.Second):
		t.Fatal("the worker did not stop")
	}
	for _, want := range []string{"Burnrate worker is ready", "Burnrate worker stopped"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the worker's log lacks %q:\n%s", want, logs.String())
		}
	}
}
