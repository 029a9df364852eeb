package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/burnrate/burnrate/store"
)

// Queues jobs run in. A queue must be listed in Config.Queues (as it is in
// DefaultQueues) for any process to work it.
const (
	// QueueDefault is where jobs go unless they say otherwise.
	QueueDefault = river.QueueDefault
	// QueueMail holds mail deliveries, so that a slow mail server does not
	// hold up other work.
	QueueMail = "mail"
	// QueueConnections holds connection pulls, which wait on providers
	// for minutes at worst: they never hold up digests, alerts or mail.
	QueueConnections = "connections"
)

// DefaultQueues is how many jobs of each queue one process runs at once.
// The numbers are small: jobs share the process's database pool with web
// requests.
func DefaultQueues() map[string]river.QueueConfig {
	return map[string]river.QueueConfig{
		QueueDefault:     {MaxWorkers: 4},
		QueueMail:        {MaxWorkers: 2},
		QueueConnections: {MaxWorkers: 2},
	}
}

// DefaultStopTimeout is how long running jobs get to finish when a process
// stops, before their contexts are cancelled.
const DefaultStopTimeout = 30 * time.Second

// Config is what a Client runs.
type Config struct {
	Log *slog.Logger
	// Workers are the kinds of job this process can run, registered by the
	// caller with river.AddWorker. Nil makes a client that only enqueues
	// (the CLI's), which must not be Run.
	Workers *river.Workers
	// Periodic jobs are enqueued on their schedule by the process River
	// elects leader; every process should list the same ones.
	Periodic []*river.PeriodicJob
	// Queues and how many of their jobs run at once; nil means
	// DefaultQueues.
	Queues map[string]river.QueueConfig
	// StopTimeout bounds a graceful stop; zero means DefaultStopTimeout.
	StopTimeout time.Duration
	// Queue, when set (see NewQueue), is bound to the client and becomes
	// its Queue.
	Queue *Queue
}

// Client runs jobs with River on the store's database, through its pool:
// River works on the connecting role, never fenced to an org.
type Client struct {
	river       *river.Client[pgx.Tx]
	queue       *Queue
	works       bool // has workers: Run may start it
	log         *slog.Logger
	stopTimeout time.Duration
}

// New builds a client. It starts nothing: see Run.
func New(st *store.Store, cfg Config) (*Client, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.StopTimeout <= 0 {
		cfg.StopTimeout = DefaultStopTimeout
	}
	rc := &river.Config{
		Logger:       slog.New(riverHandler{cfg.Log.Handler()}).With(slog.String("component", "river")),
		Workers:      cfg.Workers,
		PeriodicJobs: cfg.Periodic,
	}
	if cfg.Workers != nil {
		rc.Queues = cfg.Queues
		if rc.Queues == nil {
			rc.Queues = DefaultQueues()
		}
	}
	rv, err := river.NewClient(riverpgxv5.New(st.Pool()), rc)
	if err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	q := cfg.Queue
	if q == nil {
		q = NewQueue()
	}
	q.river = rv
	return &Client{river: rv, queue: q, log: cfg.Log, stopTimeout: cfg.StopTimeout, works: cfg.Workers != nil}, nil
}

// Queue enqueues jobs with this client.
func (c *Client) Queue() *Queue { return c.queue }

// River is the underlying River client, for what this package does not
// wrap (subscribing to job events in tests, listing jobs).
func (c *Client) River() *river.Client[pgx.Tx] { return c.river }

// Run works jobs until ctx ends, then stops gracefully: no new jobs are
// fetched, and running ones get the stop timeout to finish before their
// contexts are cancelled (a cancelled job is retried later, here or
// elsewhere). When River cannot start because the database is away (being
// restarted, say), Run logs it and tries again with backoff, so that a web
// app serving beside it is not taken down with it; the error is returned
// only for a client without workers, which can never work jobs.
func (c *Client) Run(ctx context.Context) error {
	if !c.works {
		return errors.New("jobs: this client has no workers: it only enqueues")
	}
	wait := time.Second
	for {
		// Cancelling the context River starts with would cancel running
		// jobs at once; the stop below is the graceful one.
		err := c.river.Start(context.WithoutCancel(ctx))
		if err == nil {
			break
		}
		c.log.Error("cannot start background jobs; trying again", slog.Duration("retry_in", wait), slog.Any("error", err))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = min(2*wait, 30*time.Second)
	}
	<-ctx.Done()
	return c.stop()
}

func (c *Client) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), c.stopTimeout)
	defer cancel()
	err := c.river.Stop(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	c.log.Warn("jobs still running at shutdown: cancelling them (they will be retried)", slog.Duration("waited", c.stopTimeout))
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.river.StopAndCancel(ctx); err != nil {
		return fmt.Errorf("jobs: stop: jobs did not end within %s of being cancelled: %w", 10*time.Second, err)
	}
	return nil
}
