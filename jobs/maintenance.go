package jobs

import (
	"context"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/store"
)

// Every is a periodic job that enqueues args every interval, unique per
// interval: when two processes both enqueue it (a leader change, a process
// starting with RunOnStart), it still runs once per interval. runOnStart
// also enqueues it when a process becomes leader, for jobs whose interval
// is longer than a process may live. The job's kind identifies it among the
// periodic jobs, so a kind is enqueued by one periodic job at most.
func Every(interval time.Duration, args river.JobArgs, runOnStart bool) *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(interval), func() (river.JobArgs, *river.InsertOpts) {
		return args, &river.InsertOpts{UniqueOpts: river.UniqueOpts{ByPeriod: interval}}
	}, &river.PeriodicJobOpts{ID: args.Kind(), RunOnStart: runOnStart})
}

// MaintenanceIntervals are how often the maintenance jobs run; zero fields
// take the defaults (tests shorten them).
type MaintenanceIntervals struct {
	Cleanup      time.Duration // default: hourly
	SweepImports time.Duration // default: every minute
}

// Maintenance is the periodic housekeeping every process lists: CleanupArgs
// hourly and SweepImportsArgs every minute.
func Maintenance(iv MaintenanceIntervals) []*river.PeriodicJob {
	if iv.Cleanup <= 0 {
		iv.Cleanup = time.Hour
	}
	if iv.SweepImports <= 0 {
		iv.SweepImports = time.Minute
	}
	return []*river.PeriodicJob{
		Every(iv.Cleanup, CleanupArgs{}, true),
		Every(iv.SweepImports, SweepImportsArgs{}, true),
	}
}

// LoginFailureAge is how long a failed log-in (or a counted reset request
// or invite) is kept. It is longer than every window a limit counts over
// (15 minutes for log-ins, an hour for password resets, a day for
// invites), so deleting never lifts a limit early.
const LoginFailureAge = 25 * time.Hour

// OutboxRetention is how long the outbox keeps mail that is no longer
// queued: the record of what was sent, with the messages themselves.
const OutboxRetention = 90 * 24 * time.Hour

// StaleUploadAge is how long an upload's progress row may go unwritten
// before cleanup takes its importer for dead. A live import writes every
// 10,000 rows, seconds apart.
const StaleUploadAge = time.Hour

// CleanupArgs deletes what has expired: sessions past their end, log-in
// failures no limit counts any more, password reset links that no longer
// work, outbox mail and notification deliveries older than
// OutboxRetention, and the progress of uploads
// whose importer died (StaleUploadAge).
type CleanupArgs struct{}

// Kind is the job's kind, as stored.
func (CleanupArgs) Kind() string { return "cleanup" }

// CleanupWorker works CleanupArgs.
type CleanupWorker struct {
	river.WorkerDefaults[CleanupArgs]
	Store *store.Store
	Log   *slog.Logger
}

// Work deletes expired rows; a failure is retried by River.
func (w *CleanupWorker) Work(ctx context.Context, _ *river.Job[CleanupArgs]) error {
	sessions, err := w.Store.DeleteExpiredSessions(ctx)
	if err != nil {
		return err
	}
	failures, err := w.Store.ForgetLoginFailures(ctx, LoginFailureAge)
	if err != nil {
		return err
	}
	resets, err := w.Store.DeleteExpiredPasswordResets(ctx)
	if err != nil {
		return err
	}
	signups, err := w.Store.DeleteExpiredSignups(ctx)
	if err != nil {
		return err
	}
	mails, err := w.Store.DeleteOldOutboxMail(ctx, OutboxRetention)
	if err != nil {
		return err
	}
	deliveries, err := w.Store.DeleteOldDeliveries(ctx, OutboxRetention)
	if err != nil {
		return err
	}
	uploads, err := w.Store.DeleteStaleUploadProgress(ctx, StaleUploadAge)
	if err != nil {
		return err
	}
	w.Log.DebugContext(ctx, "cleanup", slog.Int64("expired_sessions", sessions), slog.Int64("old_login_failures", failures),
		slog.Int64("expired_password_resets", resets), slog.Int64("expired_signups", signups), slog.Int64("old_outbox_mail", mails), slog.Int64("old_deliveries", deliveries), slog.Int64("stale_upload_progress", uploads))
	return nil
}

// SweepImportsArgs fails the imports whose importer is gone (a server that
// crashed mid-file): see ingest.FailInterrupted.
type SweepImportsArgs struct{}

// Kind is the job's kind, as stored.
func (SweepImportsArgs) Kind() string { return "sweep_imports" }

// SweepImportsWorker works SweepImportsArgs.
type SweepImportsWorker struct {
	river.WorkerDefaults[SweepImportsArgs]
	Store *store.Store
	Log   *slog.Logger
}

// Work sweeps; a failure is retried by River, and the next sweep comes
// within a minute anyway.
func (w *SweepImportsWorker) Work(ctx context.Context, _ *river.Job[SweepImportsArgs]) error {
	return SweepInterruptedImports(ctx, w.Store, w.Log)
}

// SweepInterruptedImports marks failed the imports whose importer is gone
// (ingest.FailInterrupted), and logs each. Every process runs it when it
// starts, and SweepImportsWorker every minute after.
func SweepInterruptedImports(ctx context.Context, st *store.Store, log *slog.Logger) error {
	failed, err := ingest.FailInterrupted(ctx, st)
	if err != nil {
		return err
	}
	for _, imp := range failed {
		log.WarnContext(ctx, "an import was interrupted (its server stopped mid-file); marked it failed",
			slog.Int64("org_id", imp.OrgID), slog.Int64("import_id", imp.ID), slog.String("file", imp.FileName))
	}
	return nil
}
