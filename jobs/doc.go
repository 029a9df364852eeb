// Package jobs is Burnrate's background work: a River queue in the app's own
// Postgres, worked by every 'burnrate serve' and 'burnrate worker' process on
// the database. Any number of processes share the work; River hands each job
// to one of them, and periodic jobs are enqueued by the one River elects
// leader. Jobs are retried with backoff when they fail, and a job enqueued
// in a transaction exists only if that transaction commits.
//
// # Running jobs
//
// The caller (package app, the one place the job client is built) builds
// the workers and hands them over:
//
//	workers := river.NewWorkers()
//	river.AddWorker(workers, &jobs.CleanupWorker{Store: st, Log: log})
//	schedule.Register(workers, loop)            // the daily loop's kinds
//	client, err := jobs.New(st, jobs.Config{Log: log, Workers: workers, Periodic: jobs.Maintenance(jobs.MaintenanceIntervals{})})
//	err = client.Run(ctx) // until ctx ends, then a graceful stop
//
// A job is a JSON-encodable args type with a Kind and a worker for it (see
// River's docs). Kinds are stored in the database: never rename one that may
// have jobs queued. Jobs run in queue QueueDefault unless their args' or
// insert options name another; a queue no process lists in Config.Queues
// (DefaultQueues) is never worked, so add new queues there.
//
// # Enqueueing
//
// Queue.Insert enqueues in the caller's transaction, or in one of its own:
//
//	err := st.InTx(ctx, func(tx *store.Store) error {
//		… // the work that asks for the job
//		_, err := q.Insert(ctx, tx, budget.EvaluateArgs{OrgID: org.ID}, nil)
//		return err
//	})
//
// The store may be fenced to an org (a web request's): River's tables are
// not tenant tables and the fenced role cannot read them, so Insert writes
// them through store.Store.Unfenced. Web handlers get their Queue from
// cmd/burnrate. Workers that enqueue more jobs (or queue mail, through a
// mail.Outbox) are built before their client: cmd/burnrate makes the Queue
// first with NewQueue, hands it to them, and New binds it (Config.Queue).
//
// "Once per X" is a unique job: InsertOpts.UniqueOpts ByPeriod (once per
// hour, per day) and ByArgs (once per org, per budget and period). River
// skips the insert of a duplicate, whichever process tries it. Every makes a
// periodic job that is unique per its interval.
//
// # The daily loop
//
// Package schedule holds the digest and budget evaluation jobs and the
// delivery of what they produce; package app registers them beside this
// package's own.
//
// Maintenance is this package's own periodic work: expired sessions, old
// log-in failures, dead password reset links and outbox mail past
// OutboxRetention are deleted hourly (CleanupWorker), and imports whose
// server died mid-file are failed every minute (SweepImportsWorker).
package jobs
