package billing

import (
	"context"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/burnrate/burnrate/jobs"
)

// GraceArgs is the periodic job that ends grace periods: an org whose
// payment failed and was not paid in time drops to Free.
type GraceArgs struct{}

// Kind is the job's kind, as stored.
func (GraceArgs) Kind() string { return "billing_grace" }

// GraceWorker drops to Free the orgs whose grace period is over.
type GraceWorker struct {
	river.WorkerDefaults[GraceArgs]
	Service *Service
}

// Work implements river.Worker.
func (w *GraceWorker) Work(ctx context.Context, _ *river.Job[GraceArgs]) error {
	_, err := w.Service.EndGrace(ctx)
	return err
}

// Periodic is the grace job, hourly (unique per hour, so that two processes
// enqueue one).
func Periodic() []*river.PeriodicJob {
	return []*river.PeriodicJob{jobs.Every(time.Hour, GraceArgs{}, true)}
}

// EndGrace drops to Free every org whose grace period ended, and returns
// them. Their data stays; paying the invoice restores the plan.
func (s *Service) EndGrace(ctx context.Context) ([]int64, error) {
	ids, err := s.store.DowngradeLapsed(ctx, s.now())
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		if s.log != nil {
			s.log.InfoContext(ctx, "billing: grace period over, org now on Free until its invoice is paid", slog.Int64("org_id", id))
		}
	}
	return ids, nil
}
