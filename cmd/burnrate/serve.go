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
		MetricsToken:   cfg.MetricsToken,
	})
	// The listeners stop together: when one fails, the other shuts down.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 2)
	listeners := 1
	go func() { errc <- srv.ListenAndServe(ctx, cfg.Addr) }()
	if cfg.MetricsAddr != "" {
		listeners++
		go func() { errc <- srv.ListenAndServeMetrics(ctx, cfg.MetricsAddr) }()
		log.Info("metrics listener", slog.String("addr", cfg.MetricsAddr))
	}
	log.Info("Burnrate is ready", slog.String("url", cfg.BaseURL), slog.String("addr", cfg.Addr))
	var first error
	for range listeners {
		if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) && first == nil {
			first = err
		}
		cancel()
	}
	return first
}
