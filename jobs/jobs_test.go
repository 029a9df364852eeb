package jobs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	neturl "net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/burnrate/burnrate/jobs"
	"github.com/burnrate/burnrate/poll"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

func quiet() *slog.Logger {
	if os.Getenv("JOBS_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// tickArgs is a job the tests count runs of.
type tickArgs struct {
	N int `json:"n"`
}

func (tickArgs) Kind() string { return "test_tick" }

// tickRun is one run of a tickArgs job: which client ran which job, and
// when it was scheduled.
type tickRun struct {
	client    string
	jobID     int64
	scheduled time.Time
}

type recorder struct {
	mu   sync.Mutex
	runs []tickRun
}

func (r *recorder) all() []tickRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]tickRun(nil), r.runs...)
}

type tickWorker struct {
	river.WorkerDefaults[tickArgs]
	client string
	rec    *recorder
	hold   time.Duration
}

func (w *tickWorker) Work(ctx context.Context, job *river.Job[tickArgs]) error {
	if w.hold > 0 {
		time.Sleep(w.hold)
	}
	w.rec.mu.Lock()
	defer w.rec.mu.Unlock()
	w.rec.runs = append(w.rec.runs, tickRun{client: w.client, jobID: job.ID, scheduled: job.ScheduledAt})
	return nil
}

// server is one process's job client on a database, running until the test
// ends.
type server struct {
	st     *store.Store
	client *jobs.Client
	stop   func() error
}

func startServer(t *testing.T, url string, cfg jobs.Config) *server {
	t.Helper()
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Log == nil {
		cfg.Log = quiet()
	}
	c, err := jobs.New(st, cfg)
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	var once sync.Once
	var runErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			runErr = <-done
			st.Close()
		})
		return runErr
	}
	t.Cleanup(func() { _ = stop() })
	return &server{st: st, client: c, stop: stop}
}

func tickWorkers(name string, rec *recorder) *river.Workers {
	w := river.NewWorkers()
	river.AddWorker(w, &tickWorker{client: name, rec: rec})
	return w
}

// TestUniquePeriodicJobRunsOncePerPeriod runs two job clients, as two
// servers would, on one database, both listing the same periodic job: it
// runs once per period in all, not once per server. And a unique job both
// servers enqueue at once is inserted, and run, once.
func TestUniquePeriodicJobRunsOncePerPeriod(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t)
	rec := &recorder{}
	const period = time.Second
	periodic := func() []*river.PeriodicJob { return []*river.PeriodicJob{jobs.Every(period, tickArgs{}, true)} }
	a := startServer(t, url, jobs.Config{Workers: tickWorkers("a", rec), Periodic: periodic()})
	b := startServer(t, url, jobs.Config{Workers: tickWorkers("b", rec), Periodic: periodic()})

	const want = 5
	poll.Until(t, 30*time.Second, fmt.Sprintf("%d runs", want), func() bool { return len(rec.all()) >= want })
	if err := a.stop(); err != nil {
		t.Fatal(err)
	}
	if err := b.stop(); err != nil {
		t.Fatal(err)
	}
	runs := rec.all()
	perPeriod := map[time.Time][]tickRun{}
	jobsRun := map[int64]int{}
	for _, r := range runs {
		k := r.scheduled.Truncate(period)
		perPeriod[k] = append(perPeriod[k], r)
		jobsRun[r.jobID]++
	}
	for k, rs := range perPeriod {
		if len(rs) != 1 {
			t.Errorf("period %s ran %d times: %+v", k.Format(time.RFC3339Nano), len(rs), rs)
		}
	}
	for id, n := range jobsRun {
		if n != 1 {
			t.Errorf("job %d ran %d times", id, n)
		}
	}
	if len(perPeriod) < want {
		t.Errorf("%d periods ran, want at least %d", len(perPeriod), want)
	}

	// Both servers enqueue the same once-an-hour job.
	rec2 := &recorder{}
	c := startServer(t, url, jobs.Config{Workers: tickWorkers("c", rec2)})
	d := startServer(t, url, jobs.Config{Workers: tickWorkers("d", rec2)})
	once := &river.InsertOpts{UniqueOpts: river.UniqueOpts{ByPeriod: time.Hour, ByArgs: true}}
	var wg sync.WaitGroup
	inserted := make([]bool, 2)
	for i, s := range []*server{c, d} {
		wg.Go(func() {
			ok, err := s.client.Queue().Insert(context.Background(), s.st, tickArgs{N: 7}, once)
			if err != nil {
				t.Error(err)
			}
			inserted[i] = ok
		})
	}
	wg.Wait()
	if inserted[0] == inserted[1] {
		t.Fatalf("inserted = %v, want exactly one", inserted)
	}
	waitFor(t, func() bool { return len(rec2.all()) == 1 })
	time.Sleep(500 * time.Millisecond) // room for a second run, were there one
	if n := len(rec2.all()); n != 1 {
		t.Fatalf("the unique job ran %d times", n)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	poll.Until(t, 30*time.Second, "the condition", cond)
}

// work enqueues args on s and waits for the job to end; it fails the test
// unless the job completed.
func work(t *testing.T, s *server, args river.JobArgs) {
	t.Helper()
	events, cancel := s.client.River().Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed)
	defer cancel()
	res, err := s.client.River().Insert(context.Background(), args, nil)
	if err != nil {
		t.Fatal(err)
	}
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.Job.ID != res.Job.ID {
				continue
			}
			if ev.Job.State != rivertype.JobStateCompleted {
				t.Fatalf("%s job ended %s: %v", args.Kind(), ev.Job.State, ev.Job.Errors)
			}
			return
		case <-timeout:
			t.Fatalf("%s job did not end within 30s", args.Kind())
		}
	}
}

func maintenanceWorkers(st func() *store.Store) *river.Workers {
	w := river.NewWorkers()
	river.AddWorker(w, &jobs.CleanupWorker{Store: st(), Log: quiet()})
	river.AddWorker(w, &jobs.SweepImportsWorker{Store: st(), Log: quiet()})
	return w
}

// TestCleanupJobs: the cleanup job deletes expired sessions, log-in
// failures older than any limit counts, expired reset links and outbox mail
// past its retention, and keeps the rest; the import
// sweep fails an import whose server died, and leaves a running one alone.
func TestCleanupJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.URL(t)
	st, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := startServer(t, url, jobs.Config{Workers: maintenanceWorkers(func() *store.Store { return st })})
	pool := storetest.Pool(st)

	org, owner := storetest.Org(t, st, storetest.OrgOpts{})
	expired, _, err := st.CreateSession(ctx, owner.ID, org.ID, "old browser")
	if err != nil {
		t.Fatal(err)
	}
	live, _, err := st.CreateSession(ctx, owner.ID, org.ID, "new browser")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE sessions SET expires_at = now() - interval '1 minute' WHERE id = $1`, expired.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `
		INSERT INTO login_failures (key, at) VALUES
			('email:old@example.com', now() - interval '25 hours'),
			('email:new@example.com', now() - interval '1 minute')`); err != nil {
		t.Fatal(err)
	}
	reset, err := st.CreatePasswordReset(ctx, owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE password_resets SET expires_at = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	for _, age := range []string{"91 days", "1 day"} {
		if _, err := pool.Exec(ctx, `
			INSERT INTO outbox (org_id, kind, recipients, subject, message, status, created_at)
			VALUES ($1, 'test', '{a@example.com}', $2::text, '{}', 'sent', now() - $2::text::interval)`, org.ID, age); err != nil {
			t.Fatal(err)
		}
	}
	work(t, s, jobs.CleanupArgs{})
	if _, err := st.PasswordResetUser(ctx, reset); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("expired reset link: %v", err)
	}
	var subjects string
	if err := pool.QueryRow(ctx, `SELECT string_agg(subject, ',') FROM outbox`).Scan(&subjects); err != nil || subjects != "1 day" {
		t.Errorf("outbox left = %q, %v; want the day-old mail only", subjects, err)
	}
	var sessions []int64
	rows, _ := pool.Query(ctx, `SELECT id FROM sessions ORDER BY id`)
	for rows.Next() {
		var id int64
		_ = rows.Scan(&id)
		sessions = append(sessions, id)
	}
	if rows.Err() != nil || len(sessions) != 1 || sessions[0] != live.ID {
		t.Errorf("sessions left = %v (%v), want only the live one %d", sessions, rows.Err(), live.ID)
	}
	var keys string
	if err := pool.QueryRow(ctx, `SELECT string_agg(key, ',') FROM login_failures`).Scan(&keys); err != nil || keys != "email:new@example.com" {
		t.Errorf("login failures left = %q, %v; want only the recent one", keys, err)
	}

	dead := storetest.AbandonedImport(t, st, org.ID)
	// The running import's importer: a connection of its own, named by the
	// import's row, alive until the test ends.
	err = st.Conn(ctx, func(c *store.Store) error {
		held, err := c.CreateImport(ctx, store.NewImport{OrgID: org.ID, FileName: "held.csv", Via: "test"})
		if err != nil {
			return err
		}
		work(t, s, jobs.SweepImportsArgs{})
		if got, _ := st.Import(ctx, org.ID, held.ID); got.Status != store.ImportProcessing {
			t.Errorf("an import still being read was swept: %q", got.Status)
		}
		return c.EndImport(ctx, org.ID, held.ID)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Import(ctx, org.ID, dead.ID); got.Status != store.ImportFailed {
		t.Errorf("the interrupted import is %q, want failed", got.Status)
	}
}

// TestInsertInTransaction: a job enqueued in a request's transaction,
// fenced to its org, exists if the transaction commits and not if it rolls
// back; the request stays fenced around the insert.
func TestInsertInTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	org, _ := storetest.Org(t, st, storetest.OrgOpts{})
	other, _ := storetest.Org(t, st, storetest.OrgOpts{})
	c, err := jobs.New(st, jobs.Config{Workers: tickWorkers("x", &recorder{})})
	if err != nil {
		t.Fatal(err)
	}
	q := c.Queue()
	count := func(n int) int {
		t.Helper()
		var got int
		if err := storetest.Pool(st).QueryRow(ctx, `SELECT count(*) FROM river_job WHERE (args->>'n')::int = $1`, n).Scan(&got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	errRollback := errors.New("roll back")
	err = st.Fenced(ctx, org.ID, 0, func(f *store.Store) error {
		err := f.InTx(ctx, func(tx *store.Store) error {
			if _, err := q.Insert(ctx, tx, tickArgs{N: 1}, nil); err != nil {
				return err
			}
			return errRollback
		})
		if !errors.Is(err, errRollback) {
			return err
		}
		return f.InTx(ctx, func(tx *store.Store) error {
			if _, err := q.Insert(ctx, tx, tickArgs{N: 2}, nil); err != nil {
				return err
			}
			// Still fenced: another org's rows stay out of sight.
			if _, err := tx.Org(ctx, other.ID); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("after the insert, another org reads as %v, want not found", err)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if count(1) != 0 || count(2) != 1 {
		t.Fatalf("jobs: rolled back %d, committed %d; want 0, 1", count(1), count(2))
	}
	// Kinds nobody can work are refused at once, not left to rot.
	if _, err := q.Insert(ctx, st, unknownArgs{}, nil); err == nil {
		t.Fatal("a job of a kind no worker runs was enqueued")
	}
}

type unknownArgs struct{}

func (unknownArgs) Kind() string { return "test_unknown" }

// TestRunStopsGracefully: a job running when the process is told to stop
// finishes, and Run returns once it has.
func TestRunStopsGracefully(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t)
	rec := &recorder{}
	w := river.NewWorkers()
	river.AddWorker(w, &tickWorker{client: "slow", rec: rec, hold: 500 * time.Millisecond})
	s := startServer(t, url, jobs.Config{Workers: w})
	res, err := s.client.River().Insert(context.Background(), tickArgs{N: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		j, err := s.client.River().JobGet(context.Background(), res.Job.ID)
		return err == nil && j.State == rivertype.JobStateRunning
	})
	start := time.Now()
	if err := s.stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if runs := rec.all(); len(runs) != 1 {
		t.Fatalf("the running job did not finish before Run returned (%d runs, stopped in %s)", len(runs), time.Since(start))
	}
}

// TestRunWaitsForTheDatabase: with the database away when the process
// starts, Run keeps trying to start (and says so) rather than failing, and
// works jobs once the database is back.
func TestRunWaitsForTheDatabase(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t)
	target, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	// A door to the database that refuses connections until opened.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var open atomic.Bool
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			if !open.Load() {
				conn.Close()
				continue
			}
			go func() {
				defer conn.Close()
				db, err := net.Dial("tcp", target.Host)
				if err != nil {
					return
				}
				defer db.Close()
				go func() { _, _ = io.Copy(db, conn) }()
				_, _ = io.Copy(conn, db)
			}()
		}
	}()
	viaDoor := *target
	viaDoor.Host = ln.Addr().String()
	st, err := store.Open(context.Background(), viaDoor.String())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	logs := &bytes.Buffer{}
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), nil))
	rec := &recorder{}
	c, err := jobs.New(st, jobs.Config{Workers: tickWorkers("x", rec), Log: log})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	waitFor(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(logs.String(), "cannot start background jobs; trying again")
	})
	select {
	case err := <-done:
		t.Fatalf("Run gave up while the database was away: %v", err)
	default:
	}
	open.Store(true)
	other, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	enqueuer, err := jobs.New(other, jobs.Config{Workers: tickWorkers("y", &recorder{})})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := enqueuer.Queue().Insert(context.Background(), other, tickArgs{N: 9}, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return len(rec.all()) == 1 })
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(jobs.DefaultStopTimeout + 10*time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	// A client without workers cannot run at all.
	insertOnly, err := jobs.New(st, jobs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := insertOnly.Run(context.Background()); err == nil {
		t.Fatal("an enqueue-only client ran")
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
