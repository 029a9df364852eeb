package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"

	"github.com/burnrate/burnrate/migrations"
)

// runMigrate moves the schema: the app's migrations and River's together
// (see package migrations).
func runMigrate(ctx context.Context, cfg Config, log *slog.Logger, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New("migrate: want up, down N, or version")
	}
	url := cfg.DatabaseURL
	if url == "" {
		u, stop, err := privatePostgres(ctx, cfg, log)
		if err != nil {
			return err
		}
		defer stop()
		url = u
	}
	switch args[0] {
	case "up":
		if err := migrations.Up(url); err != nil {
			return err
		}
	case "down":
		if len(args) != 2 {
			return errors.New("migrate down: say how many steps, e.g. 'burnrate migrate down 1'")
		}
		n, err := strconv.Atoi(args[1])
		if err != nil || n <= 0 {
			return fmt.Errorf("migrate down: %q is not a positive number of steps", args[1])
		}
		if err := migrations.Down(url, n); err != nil {
			return err
		}
	case "version":
	default:
		return fmt.Errorf("migrate: unknown subcommand %q: want up, down N, or version", args[0])
	}
	st, err := migrations.StatusOf(url)
	if err != nil {
		return err
	}
	if st.None {
		fmt.Fprintln(stdout, "version: none (empty database)")
	} else {
		fmt.Fprintf(stdout, "version: %d dirty: %v\n", st.Version, st.Dirty)
	}
	if st.River == 0 {
		fmt.Fprintln(stdout, "river: none")
	} else {
		fmt.Fprintf(stdout, "river: %d\n", st.River)
	}
	return nil
}
