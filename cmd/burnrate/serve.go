package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/burnrate/burnrate/notify"
	"github.com/burnrate/burnrate/store"
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
	// openDatabase swept once; this keeps sweeping while serve runs, for
	// the imports of other servers that die meanwhile.
	sweepCtx, stopSweeping := context.WithCancel(ctx)
	var sweeping sync.WaitGroup
	sweeping.Go(func() { sweepInterruptedImports(sweepCtx, db.store, log, importSweepEvery) })
	defer func() {
		stopSweeping()
		sweeping.Wait()
	}()
	// Email goes through the mail.Sender passed here; with none, email
	// deliveries are recorded as failed ("email is not set up"). With no
	// Enqueuer, deliveries are sent at once rather than by a job queue.
	notifier := notify.New(db.store, nil, notify.Config{
		BaseURL:      cfg.BaseURL,
		AllowPrivate: cfg.WebhookAllowPrivate,
		Log:          log,
	})
	srv := web.NewServer(log, db.store, web.Config{
		BaseURL:        cfg.BaseURL,
		MaxUploadBytes: cfg.MaxUploadBytes,
		Version:        version,
		TrustedProxies: cfg.TrustedProxies,
		MetricsToken:   cfg.MetricsToken,
		Notifier:       notifier,
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

// importSweepEvery is how often serve looks for imports whose importer died
// elsewhere (another server crashed mid-file): such an import shows
// "processing" for at most this long after.
const importSweepEvery = time.Minute

// sweepInterruptedImports fails interrupted imports every interval until
// ctx ends.
func sweepInterruptedImports(ctx context.Context, st *store.Store, log *slog.Logger, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			failInterruptedImports(ctx, st, log)
		}
	}
}
