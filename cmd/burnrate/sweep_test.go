package main

import (
	"context"
	"io"
	"log/slog"
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
			return c.EndImport(context.Background(), imp.ID)
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
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("serve: %v", err)
	}
}

// TestServeSweepsPeriodically runs serve's sweep on a short period: an
// import whose server dies after the start is failed on a later tick.
func TestServeSweepsPeriodically(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	org, _ := storetest.Org(t, st, storetest.OrgOpts{})
	ctx, cancel := context.WithCancel(context.Background())
	var sweeping sync.WaitGroup
	sweeping.Go(func() {
		sweepInterruptedImports(ctx, st, slog.New(slog.NewTextHandler(io.Discard, nil)), 50*time.Millisecond)
	})
	defer func() { cancel(); sweeping.Wait() }()
	dead := storetest.AbandonedImport(t, st, org.ID)
	if got := waitStatus(t, st, dead, store.ImportFailed); got.Error != ingest.InterruptedMessage {
		t.Fatalf("error = %q, want %q", got.Error, ingest.InterruptedMessage)
	}
}
