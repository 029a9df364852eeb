package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"

	"github.com/golang-migrate/migrate/v4"

	"github.com/burnrate/burnrate/migrations"
)

var migrateErrNilVersion = migrate.ErrNilVersion

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
	m, err := migrations.New(url)
	if err != nil {
		return err
	}
	defer m.Close()
	switch args[0] {
	case "up":
		if err := m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
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
		if err := m.Steps(-n); err != nil {
			return err
		}
	case "version":
	default:
		return fmt.Errorf("migrate: unknown subcommand %q: want up, down N, or version", args[0])
	}
	v, dirty, err := m.Version()
	if errors.Is(err, migrate.ErrNilVersion) {
		fmt.Fprintln(stdout, "version: none (empty database)")
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "version: %d dirty: %v\n", v, dirty)
	return nil
}
