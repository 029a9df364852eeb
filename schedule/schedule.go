// Package schedule runs the daily loop as River jobs: each org's digest at
// its local hour, budget evaluation after every import and every hour, and
// the delivery of what they produce (docs/digest.md, docs/notifications.md).
// Package app registers the workers (Register) and the periodic jobs
// (Periodic) in every process that works jobs; River's leader enqueues the
// periodic ones, and unique jobs make each digest and each evaluation run
// once however many processes there are.
package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/burnrate/burnrate/digest"
	"github.com/burnrate/burnrate/jobs"
	"github.com/burnrate/burnrate/notify"
	"github.com/burnrate/burnrate/store"
)

// Loop is what the jobs work with: the store (not fenced: jobs visit every
// org), the notifier digests and alerts go out through, the queue jobs
// enqueue more jobs in, and the base URL links are made from.
type Loop struct {
	Store    *store.Store
	Notifier *notify.Notifier
	Queue    *jobs.Queue
	BaseURL  string
	Log      *slog.Logger
	// Now is the clock (time.Now when nil), for tests.
	Now func() time.Time
	// Notifies reports whether an org's plan has the digest and budget
	// alerts (billing.Config.Notifies); nil: every org has them.
	Notifies func(org store.Org) bool
}

func (l *Loop) notifies(org store.Org) bool { return l.Notifies == nil || l.Notifies(org) }

func (l *Loop) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

// Register adds the loop's workers.
func Register(w *river.Workers, l *Loop) {
	river.AddWorker(w, &DeliverWorker{loop: l})
	river.AddWorker(w, &DigestHourWorker{loop: l})
	river.AddWorker(w, &DigestWorker{loop: l})
	river.AddWorker(w, &EvaluateAllWorker{loop: l})
	river.AddWorker(w, &EvaluateWorker{loop: l})
}

// Periodic are the loop's periodic jobs: the digest pass and budget
// evaluation, each hourly (unique per hour, so two processes enqueue one).
func Periodic() []*river.PeriodicJob {
	return []*river.PeriodicJob{jobs.Every(time.Hour, DigestHourArgs{}, true), jobs.Every(time.Hour, EvaluateAllArgs{}, true)}
}

// Enqueuer is the notifier's way into the job queue: each recorded
// delivery becomes a DeliverArgs job.
type Enqueuer struct {
	Queue *jobs.Queue
	Store *store.Store
}

// EnqueueDelivery implements notify.Enqueuer.
func (e Enqueuer) EnqueueDelivery(ctx context.Context, orgID, deliveryID int64) error {
	_, err := e.Queue.Insert(ctx, e.Store, DeliverArgs{OrgID: orgID, DeliveryID: deliveryID}, nil)
	return err
}

// DeliverArgs is one delivery of a notification over one channel.
type DeliverArgs struct {
	OrgID      int64 `json:"org_id"`
	DeliveryID int64 `json:"delivery_id"`
}

// Kind is the job's kind, as stored.
func (DeliverArgs) Kind() string { return "notify_delivery" }

// InsertOpts: deliveries wait in the mail queue, beside the outbox's.
func (DeliverArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: jobs.QueueMail, MaxAttempts: notify.DefaultMaxAttempts + 1}
}

// DeliverWorker sends a delivery; notify keeps it to once, and says when
// retrying cannot help.
type DeliverWorker struct {
	river.WorkerDefaults[DeliverArgs]
	loop *Loop
}

// Work implements river.Worker.
func (w *DeliverWorker) Work(ctx context.Context, job *river.Job[DeliverArgs]) error {
	err := w.loop.Notifier.DeliverOne(ctx, job.Args.OrgID, job.Args.DeliveryID)
	if errors.Is(err, notify.ErrGaveUp) {
		return river.JobCancel(err)
	}
	return err
}

// DigestHourArgs is the hourly pass that finds the orgs whose local hour is
// their digest's.
type DigestHourArgs struct{}

// Kind is the job's kind, as stored.
func (DigestHourArgs) Kind() string { return "digest_hour" }

// DigestHourWorker enqueues one DigestArgs for each org whose digest is due
// now, in its own time zone, for its yesterday.
type DigestHourWorker struct {
	river.WorkerDefaults[DigestHourArgs]
	loop *Loop
}

// Work implements river.Worker.
func (w *DigestHourWorker) Work(ctx context.Context, _ *river.Job[DigestHourArgs]) error {
	orgs, err := w.loop.Store.AllOrgs(ctx)
	if err != nil {
		return err
	}
	now := w.loop.now()
	for _, org := range orgs {
		set, err := w.loop.Store.DigestSettings(ctx, org.ID)
		if err != nil {
			return err
		}
		if !Due(set, org, now) || !w.loop.notifies(org) {
			continue
		}
		day := digest.Yesterday(now, org.Location())
		if _, err := w.loop.Queue.Insert(ctx, w.loop.Store, DigestArgs{OrgID: org.ID, Day: day.Format(time.DateOnly)}, nil); err != nil {
			return err
		}
	}
	return nil
}

// Due reports whether org's digest is due in the hour of now: it is on, and
// now is its send hour in the org's time zone.
func Due(set store.DigestSettings, org store.Org, now time.Time) bool {
	return set.Enabled && now.In(org.Location()).Hour() == set.SendHour
}

// DigestArgs is one org's digest of one day. It is unique by its
// arguments for as long as River keeps finished jobs, and the notifier's
// keys make the mail itself once per day and recipient in any case.
type DigestArgs struct {
	OrgID int64  `json:"org_id" river:"unique"`
	Day   string `json:"day" river:"unique"` // YYYY-MM-DD in the org's time zone
}

// Kind is the job's kind, as stored.
func (DigestArgs) Kind() string { return "digest" }

// InsertOpts makes a digest unique per org and day in River's default
// states, completed included.
func (DigestArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// WaitStep is how often a digest waiting for its day's data looks again.
const WaitStep = 30 * time.Minute

// DigestWorker builds and sends one digest, waiting for its day's data
// until the org's wait-until hour (digest.WaitUntil).
type DigestWorker struct {
	river.WorkerDefaults[DigestArgs]
	loop *Loop
}

// Work implements river.Worker.
func (w *DigestWorker) Work(ctx context.Context, job *river.Job[DigestArgs]) error {
	org, err := w.loop.Store.Org(ctx, job.Args.OrgID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // deleted since
	}
	if err != nil {
		return err
	}
	if !w.loop.notifies(org) {
		return nil // moved to a plan without the digest since it was enqueued
	}
	day, err := time.Parse(time.DateOnly, job.Args.Day)
	if err != nil {
		return river.JobCancel(fmt.Errorf("digest day %q: %w", job.Args.Day, err))
	}
	set, err := w.loop.Store.DigestSettings(ctx, org.ID)
	if err != nil {
		return err
	}
	now := w.loop.now()
	until := digest.WaitUntil(set, day, org.Location())
	out, err := digest.Send(ctx, w.loop.Store, w.loop.Notifier, org, day, now, digest.Plan{When: set.When, WaitUntil: until})
	if err != nil {
		return err
	}
	if out.Waiting {
		// Looked at again every WaitStep, and at the wait's end, when it
		// goes out whatever is missing.
		return river.JobSnooze(min(WaitStep, until.Sub(now)))
	}
	if w.loop.Log != nil {
		w.loop.Log.InfoContext(ctx, "digest", slog.Int64("org_id", org.ID), slog.String("day", job.Args.Day), slog.Any("outcome", out))
	}
	return nil
}

// EvaluateAllArgs is the hourly budget evaluation of every org: spend that
// crosses a threshold without an import (a new day's pro-rating) alerts too.
type EvaluateAllArgs struct{}

// Kind is the job's kind, as stored.
func (EvaluateAllArgs) Kind() string { return "budget_evaluate_all" }

// EvaluateAllWorker enqueues one EvaluateArgs per org.
type EvaluateAllWorker struct {
	river.WorkerDefaults[EvaluateAllArgs]
	loop *Loop
}

// Work implements river.Worker.
func (w *EvaluateAllWorker) Work(ctx context.Context, _ *river.Job[EvaluateAllArgs]) error {
	orgs, err := w.loop.Store.AllOrgs(ctx)
	if err != nil {
		return err
	}
	for _, org := range orgs {
		if err := EnqueueEvaluation(ctx, w.loop.Queue, w.loop.Store, org.ID); err != nil {
			return err
		}
	}
	return nil
}

// EvaluateArgs evaluates one org's budgets.
// Evaluations are not unique: one that runs while an import commits must
// not swallow the import's, and claims make a repeated one harmless.
type EvaluateArgs struct {
	OrgID int64 `json:"org_id"`
}

// Kind is the job's kind, as stored.
func (EvaluateArgs) Kind() string { return "budget_evaluate" }

// EnqueueEvaluation enqueues orgID's budget evaluation in st's transaction:
// after an import, in the import's own, so it runs exactly when the import
// commits.
func EnqueueEvaluation(ctx context.Context, q *jobs.Queue, st *store.Store, orgID int64) error {
	_, err := q.Insert(ctx, st, EvaluateArgs{OrgID: orgID}, nil)
	return err
}

// EvaluateWorker evaluates an org's budgets and sends the alerts.
type EvaluateWorker struct {
	river.WorkerDefaults[EvaluateArgs]
	loop *Loop
}

// Work implements river.Worker.
func (w *EvaluateWorker) Work(ctx context.Context, job *river.Job[EvaluateArgs]) error {
	org, err := w.loop.Store.Org(ctx, job.Args.OrgID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return Evaluate(ctx, w.loop, org)
}

// Evaluate claims org's new threshold crossings and records their
// notifications in one transaction, so that a crossing is claimed exactly
// when its alert is recorded for delivery (and again, should the
// transaction roll back).
func Evaluate(ctx context.Context, l *Loop, org store.Org) error {
	if !l.notifies(org) {
		// No alerts on this plan; no crossing is claimed either, so the
		// alerts due are sent once the org is on a plan with them.
		return nil
	}
	return l.Store.InTx(ctx, func(tx *store.Store) error {
		alerts, err := BudgetAlerts(ctx, tx, org, l.now())
		if err != nil {
			return err
		}
		for _, a := range alerts {
			m, err := a.Message(ctx, l.BaseURL)
			if err != nil {
				return err
			}
			_, err = l.Notifier.With(tx).Deliver(ctx, notify.Notification{
				Kind:     notify.KindBudgetAlert,
				OrgID:    org.ID,
				BudgetID: a.Budget().ID,
				Key:      notify.AlertKey(a.Budget().ID, a.Status.First, a.Threshold),
				Subject:  m.Subject,
				Text:     m.Text,
				HTML:     m.HTML,
				Link:     m.Link,
				Payload:  m.Payload,
				Email:    m.Recipients,
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
}
