package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"
)

// runCitus is 'burnrate citus distribute': the conversion of a database on a
// Citus coordinator to tables distributed by org (store.Distribute;
// docs/operations.md, "Distributing by org"). It migrates first, as the
// other commands do with RUN_MIGRATIONS=1, and may run again: what is done
// already is skipped, and tables that migrations added since are
// distributed.
func runCitus(ctx context.Context, cfg Config, log *slog.Logger, args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "distribute" {
		return errors.New("citus: want 'citus distribute'")
	}
	fs := flag.NewFlagSet("citus distribute", flag.ContinueOnError)
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return errors.New("citus distribute: takes no arguments")
	}
	if cfg.DatabaseURL == "" {
		return errors.New("citus distribute: set DATABASE_URL to the database on the Citus coordinator (the private cluster has no workers)")
	}
	db, err := openDatabase(ctx, cfg, log, cfg.RunMigrations)
	if err != nil {
		return err
	}
	defer db.close()
	start := time.Now()
	err = db.store.Distribute(ctx, func(what string, took time.Duration) {
		fmt.Fprintf(stdout, "%-64s %8s\n", what, took.Round(time.Millisecond))
	})
	if err != nil {
		return fmt.Errorf("citus %w", err)
	}
	fmt.Fprintf(stdout, "distributed in %s\n", time.Since(start).Round(time.Millisecond))
	return nil
}
