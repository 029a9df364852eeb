package connect

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/burnrate/burnrate/jobs"
	"github.com/burnrate/burnrate/store"
)

// ScheduleEvery is how often the scheduler looks for connections due.
const ScheduleEvery = 5 * time.Minute

// SyncTimeout bounds one sync job: a year's backfill of a busy org, with
// every call's retries, fits well within it.
const SyncTimeout = 30 * time.Minute

// Register adds the connection jobs' workers.
func Register(w *river.Workers, s *Service, q *jobs.Queue) {
	river.AddWorker(w, &ScheduleWorker{svc: s, queue: q})
	river.AddWorker(w, &SyncWorker{svc: s})
}

// Periodic is the scheduler's pass, unique per ScheduleEvery so that
// however many processes run, one pass runs each time.
func Periodic() []*river.PeriodicJob {
	return []*river.PeriodicJob{jobs.Every(ScheduleEvery, ScheduleArgs{}, true)}
}

// ScheduleArgs is the pass that enqueues a sync of each connection due.
type ScheduleArgs struct{}

// Kind is the job's kind, as stored.
func (ScheduleArgs) Kind() string { return "connection_schedule" }

// ScheduleWorker enqueues one SyncArgs per connection due, of every org.
type ScheduleWorker struct {
	river.WorkerDefaults[ScheduleArgs]
	svc   *Service
	queue *jobs.Queue
}

// Work implements river.Worker.
func (w *ScheduleWorker) Work(ctx context.Context, _ *river.Job[ScheduleArgs]) error {
	due, err := w.svc.Store.DueConnections(ctx, w.svc.now())
	if err != nil {
		return err
	}
	for _, c := range due {
		if _, err := Enqueue(ctx, w.queue, w.svc.Store, c.OrgID, c.ID); err != nil {
			return err
		}
	}
	return nil
}

// Enqueue asks for a sync of orgID's connection id, in st's transaction.
// While one is queued, running or waiting to retry, another is not
// enqueued (inserted is false): a connection syncs once at a time.
func Enqueue(ctx context.Context, q *jobs.Queue, st *store.Store, orgID, id int64) (inserted bool, err error) {
	return q.Insert(ctx, st, SyncArgs{OrgID: orgID, ConnectionID: id}, nil)
}

// SyncArgs is one sync of one connection. Each connection is a job of its
// own, in a queue of its own: one org's slow or broken connection holds up
// nobody else's.
type SyncArgs struct {
	OrgID        int64 `json:"org_id"`
	ConnectionID int64 `json:"connection_id"`
}

// Kind is the job's kind, as stored.
func (SyncArgs) Kind() string { return "connection_sync" }

// InsertOpts: unique per connection among the jobs not yet finished.
func (SyncArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{
		Queue:       jobs.QueueConnections,
		MaxAttempts: 4,
		UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: []rivertype.JobState{
			rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
			rivertype.JobStateRetryable, rivertype.JobStateScheduled,
		}},
	}
}

// SyncWorker runs a sync. A provider that was busy or failing (429, 5xx,
// no answer) is retried by River with backoff; a refusal that needs a
// person (a revoked key, a bad file) is recorded on the connection and not
// retried.
type SyncWorker struct {
	river.WorkerDefaults[SyncArgs]
	svc *Service
}

// Timeout implements river.Worker: River's default minute is too short for
// a backfill.
func (w *SyncWorker) Timeout(*river.Job[SyncArgs]) time.Duration { return SyncTimeout }

// Work implements river.Worker.
func (w *SyncWorker) Work(ctx context.Context, job *river.Job[SyncArgs]) error {
	res, err := w.svc.Sync(ctx, job.Args.OrgID, job.Args.ConnectionID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // deleted since
	}
	if err != nil {
		if Transient(err) {
			return err
		}
		return nil // recorded on the connection for a person to see
	}
	w.svc.log().InfoContext(ctx, "connection synced", slog.Int64("org_id", job.Args.OrgID),
		slog.Int64("connection_id", job.Args.ConnectionID), slog.Int64("rows", res.Rows), slog.Int("imports", len(res.Imports)))
	return nil
}
