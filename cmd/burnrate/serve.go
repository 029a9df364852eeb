package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/burnrate/burnrate/web"
)

// runServe is 'burnrate serve': the web app, and the background jobs in the
// same process. They stop together: on a signal, or when one of them fails.
func runServe(ctx context.Context, cfg Config, log *slog.Logger, args []string) error {
	db, a, err := openBackground(ctx, cfg, log, "serve", args)
	if err != nil {
		return err
	}
	defer db.close()
	if err := sealChannels(ctx, db.store, cfg, log); err != nil {
		return err
	}
	srv := web.NewServer(log, a, web.Config{
		MaxUploadBytes: cfg.MaxUploadBytes,
		Version:        version,
		TrustedProxies: cfg.TrustedProxies,
		MetricsToken:   cfg.MetricsToken,
	})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 3)
	parts := 2
	go func() { errc <- srv.ListenAndServe(ctx, cfg.Addr) }()
	go func() { errc <- a.Jobs.Run(ctx) }()
	if cfg.MetricsAddr != "" {
		parts++
		go func() { errc <- srv.ListenAndServeMetrics(ctx, cfg.MetricsAddr) }()
		log.Info("metrics listener", slog.String("addr", cfg.MetricsAddr))
	}
	log.Info("Burnrate is ready", slog.String("url", cfg.BaseURL), slog.String("addr", cfg.Addr))
	var first error
	for range parts {
		if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) && first == nil {
			first = err
		}
		cancel()
	}
	return first
}
