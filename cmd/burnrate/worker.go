package main

import (
	"context"
	"log/slog"
)

// runWorker is 'burnrate worker': the background jobs without the web app,
// for installs that run them apart. Any number of workers and serve
// processes share the jobs of one database. It stops on SIGINT or SIGTERM,
// letting running jobs finish (jobs.DefaultStopTimeout).
func runWorker(ctx context.Context, cfg Config, log *slog.Logger, args []string) error {
	db, a, err := openBackground(ctx, cfg, log, "worker", args)
	if err != nil {
		return err
	}
	defer db.close()
	log.Info("Burnrate worker is ready")
	if err := a.Jobs.Run(ctx); err != nil {
		return err
	}
	log.Info("Burnrate worker stopped")
	return nil
}
