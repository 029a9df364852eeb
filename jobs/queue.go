package jobs

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/burnrate/burnrate/store"
)

// Queue enqueues jobs. Processes that only enqueue (the CLI) have one too:
// the jobs wait in the database for a serve or worker process.
type Queue struct {
	river *river.Client[pgx.Tx]
}

// NewQueue returns a queue that works once New has built its client
// (Config.Queue). Workers that enqueue more work (a digest queueing its
// mail) are built before the client they are registered with, so they are
// handed this queue first.
func NewQueue() *Queue { return &Queue{} }

// Insert enqueues a job in st's transaction, or in a transaction of its own
// when st is not in one, so that the job exists exactly when the work around
// it commits. st may be fenced to an org. For a unique job (opts.UniqueOpts,
// or the args' InsertOpts) that is already queued, nothing is inserted and
// inserted is false.
func (q *Queue) Insert(ctx context.Context, st *store.Store, args river.JobArgs, opts *river.InsertOpts) (inserted bool, err error) {
	if q.river == nil {
		return false, fmt.Errorf("enqueue %s: the queue's job client is not built yet (jobs.New with Config.Queue)", args.Kind())
	}
	err = st.Unfenced(ctx, func(tx pgx.Tx) error {
		res, err := q.river.InsertTx(ctx, tx, args, opts)
		if err != nil {
			return err
		}
		inserted = !res.UniqueSkippedAsDuplicate
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("enqueue %s: %w", args.Kind(), err)
	}
	return inserted, nil
}
