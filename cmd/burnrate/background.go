package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"runtime"

	"github.com/burnrate/burnrate/app"
	"github.com/burnrate/burnrate/connect"
	"github.com/burnrate/burnrate/spend"
	"github.com/burnrate/burnrate/store"
)

// newApp builds the App (package app, the one composition root) from the
// environment's configuration.
func newApp(st *store.Store, cfg Config, log *slog.Logger) (*app.App, error) {
	return app.New(st, cfg.app(), log)
}

// openBackground is where serve and worker start: command name takes no
// flags (args are parsed for -h), then the database and the jobs, with where
// mail goes logged. On an error nothing stays open; otherwise the caller
// closes db.
func openBackground(ctx context.Context, cfg Config, log *slog.Logger, name string, args []string) (*database, *app.App, error) {
	if err := flag.NewFlagSet(name, flag.ContinueOnError).Parse(args); err != nil {
		return nil, nil, err
	}
	db, err := openDatabaseWith(ctx, cfg, log, cfg.RunMigrations, poolOptions(log, name == "serve"))
	if err != nil {
		return nil, nil, err
	}
	a, err := newApp(db.store, cfg, log)
	if err != nil {
		db.close()
		return nil, nil, err
	}
	logMailConfig(cfg, log)
	return db, a, nil
}

// poolOptions keep a long-running process's connections open and ready: a
// few per CPU (a dashboard view holds two at once), opened at start; a web
// server's are each warmed with the dashboard's reads before they serve a
// request (docs/operations.md, "Database connections").
func poolOptions(log *slog.Logger, web bool) store.Options {
	opts := store.Options{MinConns: int32(min(4*runtime.NumCPU(), 32))}
	if web {
		opts.Warm = func(ctx context.Context, st *store.Store) {
			if err := spend.Warm(ctx, st); err != nil && ctx.Err() == nil {
				log.Warn("cannot warm a new database connection", slog.Any("error", err))
			}
		}
	}
	return opts
}

// logMailConfig says at start where mail goes.
func logMailConfig(cfg Config, log *slog.Logger) {
	if cfg.SMTPURL == "" {
		log.Info("mail is not configured (SMTP_URL): emails are kept in the outbox (Settings → Mail), not sent")
		return
	}
	log.Info("mail goes out by SMTP", slog.String("from", cfg.MailFrom))
}

// sealChannels seals, at start-up, the Slack and webhook URLs stored in
// clear (before URLs were sealed, or while no SECRET_KEY was set). See
// docs/notifications.md.
func sealChannels(ctx context.Context, st *store.Store, cfg Config, log *slog.Logger) error {
	if cfg.SecretKey == nil {
		return nil
	}
	n, err := connect.SealChannels(ctx, st, cfg.SecretKey)
	if err != nil {
		return fmt.Errorf("sealing channel URLs under SECRET_KEY: %w", err)
	}
	if n > 0 {
		log.Info("sealed channel URLs stored in clear", slog.Int("channels", n), slog.String("key", cfg.SecretKey.ID()))
	}
	return nil
}
