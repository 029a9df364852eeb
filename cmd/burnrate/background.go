package main

import (
	"context"
	"log/slog"

	"github.com/riverqueue/river"

	"github.com/burnrate/burnrate/jobs"
	"github.com/burnrate/burnrate/store"
)

// newJobs builds the job client every process uses: serve and worker run
// it, the other commands only enqueue with it. It lists every kind of job
// Burnrate has; a new kind registers its worker here, and a new periodic
// job joins the list below (see package jobs).
func newJobs(st *store.Store, log *slog.Logger) (*jobs.Client, error) {
	workers := river.NewWorkers()
	river.AddWorker(workers, &jobs.CleanupWorker{Store: st, Log: log})
	river.AddWorker(workers, &jobs.SweepImportsWorker{Store: st, Log: log})
	periodic := jobs.Maintenance(jobs.MaintenanceIntervals{})
	return jobs.New(st, jobs.Config{Log: log, Workers: workers, Periodic: periodic})
}

// afterImport is what every import does inside its own transaction, from
// every way in (upload, API, 'burnrate import', 'burnrate demo'): nothing
// yet. Budget evaluation after an import enqueues its job here, with
// q.Insert(ctx, tx, …), so that it is enqueued exactly when the import
// commits.
func afterImport(q *jobs.Queue) func(ctx context.Context, tx *store.Store, orgID, importID int64) error {
	_ = q
	return nil
}
