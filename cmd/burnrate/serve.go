package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"net/http"

	"github.com/burnrate/burnrate/web"
)

func runServe(ctx context.Context, cfg Config, log *slog.Logger, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	db, err := openDatabase(ctx, cfg, log, cfg.RunMigrations)
	if err != nil {
		return err
	}
	defer db.close()
	srv := web.NewServer(log, db.store, web.Config{
		BaseURL:        cfg.BaseURL,
		MaxUploadBytes: cfg.MaxUploadBytes,
		Version:        version,
		TrustedProxies: cfg.TrustedProxies,
	})
	log.Info("Burnrate is ready", slog.String("url", cfg.BaseURL), slog.String("addr", cfg.Addr))
	if err := srv.ListenAndServe(ctx, cfg.Addr); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
