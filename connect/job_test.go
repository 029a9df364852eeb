package connect_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/burnrate/burnrate/connect"
	"github.com/burnrate/burnrate/jobs"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// The periodic pass enqueues one sync per connection due, each a job of
// its own: an org whose provider keeps failing is retried with backoff,
// and another org's connection is pulled meanwhile.
func TestScheduledSyncs(t *testing.T) {
	b := newBundle(t)
	b.now = time.Now() // the scheduler compares with the database's clock
	f := newFakeOpenAI(t, b)
	good := b.create(t, connect.Input{Name: "good", Kind: connect.KindOpenAI, APIKey: f.key, StartDate: b.now.UTC().AddDate(0, 0, -5).Format(time.DateOnly)})

	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadGateway) }))
	t.Cleanup(broken.Close)
	org2, _ := storetest.Org(t, b.st, storetest.OrgOpts{})
	// The second org's connection is Anthropic's, which is down.
	var bad store.Connection
	err := b.st.Fenced(context.Background(), org2.ID, 0, func(st *store.Store) error {
		var err error
		bad, err = b.svc.Create(context.Background(), st, org2.ID, 0, connect.Input{Name: "bad", Kind: connect.KindAnthropic, APIKey: "sk-ant-admin-000000000"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	b.svc.AnthropicURL = broken.URL
	b.now = time.Now().Add(time.Second) // both due

	q := jobs.NewQueue()
	workers := river.NewWorkers()
	connect.Register(workers, b.svc, q)
	client, err := jobs.New(b.st, jobs.Config{Workers: workers, Periodic: connect.Periodic(), Queue: q})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- client.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()

	deadline := time.Now().Add(30 * time.Second)
	for {
		g := b.connection(t, good.ID)
		bd, err := b.st.Connection(context.Background(), org2.ID, bad.ID)
		if err != nil {
			t.Fatal(err)
		}
		if g.LastStatus == "ok" && bd.LastStatus == "failed" {
			if g.LastRows != 6*5 {
				t.Fatalf("good connection pulled %d rows, want 30", g.LastRows)
			}
			if bd.LastError != "502 from Anthropic: Anthropic is failing; will try again later" {
				t.Fatalf("broken connection's error %q", bd.LastError)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30s: good %q %q, bad %q %q", g.LastStatus, g.LastError, bd.LastStatus, bd.LastError)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The broken one is retried by River with backoff.
	var state string
	var attempt int
	err = b.st.Pool().QueryRow(context.Background(), `SELECT state, attempt FROM river_job WHERE kind = 'connection_sync' AND (args->>'connection_id')::bigint = $1`, bad.ID).Scan(&state, &attempt)
	if err != nil {
		t.Fatal(err)
	}
	// (River's first retry comes a second later, so it may be under way.)
	if (state != "retryable" && state != "available" && state != "running") || attempt < 1 {
		t.Fatalf("the broken sync is %s after %d attempts, want it waiting to be retried", state, attempt)
	}
	// And the pass does not queue it again meanwhile.
	if ok, err := connect.Enqueue(context.Background(), q, b.st, org2.ID, bad.ID); err != nil || ok {
		t.Fatalf("enqueued a second sync of a connection waiting to retry: %v %v", ok, err)
	}
}
