package main

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// waitStatus waits until the import has status, or fails after 30 seconds.
func waitStatus(t *testing.T, st *store.Store, imp store.Import, status string) store.Import {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := st.Import(context.Background(), imp.OrgID, imp.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status == status {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("import %d is %q after 30s, want %q", imp.ID, got.Status, status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestServeFailsInterruptedImportsAtStart starts 'serve' on a database where
// a crashed server left an import processing, while another server is in
// the middle of one: the new server fails the first at once (well before
// its periodic sweep) and leaves the other alone.
func TestServeFailsInterruptedImportsAtStart(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t)
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	org, _ := storetest.Org(t, st, storetest.OrgOpts{})
	dead := storetest.AbandonedImport(t, st, org.ID)

	// The other server's import, on its connection until the test ends.
	started, finish := make(chan store.Import), make(chan struct{})
	var other sync.WaitGroup
	other.Go(func() {
		err := st.Conn(context.Background(), func(c *store.Store) error {
			imp, err := c.CreateImport(context.Background(), store.NewImport{OrgID: org.ID, FileName: "live.csv", Via: "test"})
			if err != nil {
				return err
			}
			started <- imp
			<-finish
			return c.EndImport(context.Background(), org.ID, imp.ID)
		})
		if err != nil {
			t.Error(err)
			close(started)
		}
	})
	live := <-started
	defer func() { close(finish); other.Wait() }()

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	served := make(chan error, 1)
	go func() {
		served <- run(ctx, []string{"serve"}, env(map[string]string{"DATABASE_URL": url, "ADDR": "127.0.0.1:0", "LOG_LEVEL": "error"}), io.Discard, io.Discard)
	}()
	got := waitStatus(t, st, dead, store.ImportFailed)
	if got.Error != ingest.InterruptedMessage {
		t.Errorf("interrupted import's error = %q, want %q", got.Error, ingest.InterruptedMessage)
	}
	if got, _ := st.Import(context.Background(), org.ID, live.ID); got.Status != store.ImportProcessing {
		t.Errorf("the other server's running import is %q, want processing", got.Status)
	}
	// And serve runs the periodic sweep as a job from then on.
	waitJob(t, st, "sweep_imports")
	if got, _ := st.Import(context.Background(), org.ID, live.ID); got.Status != store.ImportProcessing {
		t.Errorf("the sweep job failed the other server's running import: %q", got.Status)
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("serve: %v", err)
	}
}

// waitJob waits until a job of kind has completed, or fails after 30
// seconds.
func waitJob(t *testing.T, st *store.Store, kind string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		err := st.Pool().QueryRow(context.Background(),
			`SELECT count(*) FROM river_job WHERE kind = $1 AND state = 'completed'`, kind).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s job completed after 30s", kind)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
