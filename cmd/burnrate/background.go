package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"runtime"

	"github.com/riverqueue/river"

	"github.com/burnrate/burnrate/account"
	"github.com/burnrate/burnrate/billing"
	"github.com/burnrate/burnrate/connect"
	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/jobs"
	"github.com/burnrate/burnrate/mail"
	"github.com/burnrate/burnrate/notify"
	"github.com/burnrate/burnrate/pricing"
	"github.com/burnrate/burnrate/savings"
	"github.com/burnrate/burnrate/schedule"
	"github.com/burnrate/burnrate/seal"
	"github.com/burnrate/burnrate/spend"
	"github.com/burnrate/burnrate/store"
)

// background is the job client every process uses (serve and worker run
// it, the other commands only enqueue with it) and the outbox mail is
// queued in.
type background struct {
	*jobs.Client
	outbox      *mail.Outbox
	notifier    *notify.Notifier
	connections *connect.Service
	billing     *billing.Service
}

// newJobs builds the background. It lists every kind of job Burnrate has: a
// new kind registers its worker here, and a new periodic job joins the list
// below (see package jobs). Workers that queue mail get the outbox.
func newJobs(st *store.Store, cfg Config, log *slog.Logger) (*background, error) {
	var sender mail.Sender // nil: mail is kept in the outbox
	if cfg.SMTPURL != "" {
		s, err := mail.NewSMTP(cfg.SMTPURL, cfg.MailFrom)
		if err != nil {
			return nil, fmt.Errorf("SMTP_URL: %w", err)
		}
		sender = s
	}
	queue := jobs.NewQueue()
	outbox := mail.NewOutbox(queue, sender != nil)
	workers := river.NewWorkers()
	river.AddWorker(workers, &jobs.CleanupWorker{Store: st, Log: log})
	river.AddWorker(workers, &jobs.SweepImportsWorker{Store: st, Log: log})
	river.AddWorker(workers, &mail.SendWorker{Store: st, Sender: sender, Log: log})
	river.AddWorker(workers, &account.ResetRequestWorker{Store: st, Mailer: &account.Mailer{Outbox: outbox, BaseURL: cfg.BaseURL}, Log: log})
	river.AddWorker(workers, &savings.RefreshWorker{Store: st})
	// Digests and alerts are recorded per channel by the notifier and sent
	// by jobs; their email goes through the outbox like all mail.
	notifier := notify.New(st, nil, notify.Config{
		BaseURL:      cfg.BaseURL,
		AllowPrivate: cfg.WebhookAllowPrivate,
		Enqueuer:     schedule.Enqueuer{Queue: queue, Store: st},
		Mailer:       outboxMailer{outbox: outbox, store: st},
		Log:          log,
		Secrets:      channelSecrets(cfg.SecretKey),
	})
	bill := billing.New(cfg.billing(), st, log)
	// On the Free plan there is no digest and no budget alert (every org
	// has both with billing off).
	schedule.Register(workers, &schedule.Loop{Store: st, Notifier: notifier, Queue: queue, BaseURL: cfg.BaseURL, Log: log,
		Notifies: bill.Cfg().Notifies})
	// Connections pull through the same importer as uploads, under the
	// same plan quota, and start the same work after each import.
	importer := ingest.NewImporter(st, ingest.PriceTable(pricing.DefaultLLMPrices()), pricing.DefaultCatalog())
	importer.AfterImport = afterImport(queue)
	importer.Timeout = cfg.ImportTimeout
	if bill.Enabled() {
		importer.RowQuota = bill.RowQuota
	}
	// A connection that starts failing, or stalls, is told to the org's
	// admins by the notifier, as alerts are.
	conns := &connect.Service{Store: st, Importer: importer, Key: cfg.SecretKey, Log: log,
		OpenAIURL: cfg.OpenAIURL, AnthropicURL: cfg.AnthropicURL, BigQueryURL: cfg.BigQueryURL, GoogleTokenURL: cfg.GoogleTokenURL,
		Notifier:             notifier,
		AllowHostCredentials: cfg.ConnectionsAllowHostCredentials, Egress: cfg.ConnectionsEgress}
	connect.Register(workers, conns, queue)
	periodic := append(jobs.Maintenance(jobs.MaintenanceIntervals{}), schedule.Periodic()...)
	periodic = append(periodic, connect.Periodic()...)
	if bill.Enabled() {
		river.AddWorker(workers, &billing.GraceWorker{Service: bill})
		periodic = append(periodic, billing.Periodic()...)
	}
	c, err := jobs.New(st, jobs.Config{Log: log, Workers: workers, Periodic: periodic, Queue: queue})
	if err != nil {
		return nil, err
	}
	return &background{Client: c, outbox: outbox, notifier: notifier, connections: conns, billing: bill}, nil
}

// openBackground is where serve and worker start: command name takes no
// flags (args are parsed for -h), then the database and the jobs, with where
// mail goes logged. On an error nothing stays open; otherwise the caller
// closes db.
func openBackground(ctx context.Context, cfg Config, log *slog.Logger, name string, args []string) (*database, *background, error) {
	if err := flag.NewFlagSet(name, flag.ContinueOnError).Parse(args); err != nil {
		return nil, nil, err
	}
	db, err := openDatabaseWith(ctx, cfg, log, cfg.RunMigrations, poolOptions(log, name == "serve"))
	if err != nil {
		return nil, nil, err
	}
	bg, err := newJobs(db.store, cfg, log)
	if err != nil {
		db.close()
		return nil, nil, err
	}
	logMailConfig(cfg, log)
	return db, bg, nil
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

// outboxMailer hands the notifier's email to the outbox, as the org's mail.
type outboxMailer struct {
	outbox *mail.Outbox
	store  *store.Store
}

func (m outboxMailer) Mail(ctx context.Context, orgID int64, kind string, msg mail.Message) error {
	_, err := m.outbox.Queue(ctx, m.store, orgID, kind, msg)
	return err
}

// logMailConfig says at start where mail goes.
func logMailConfig(cfg Config, log *slog.Logger) {
	if cfg.SMTPURL == "" {
		log.Info("mail is not configured (SMTP_URL): emails are kept in the outbox (Settings → Mail), not sent")
		return
	}
	log.Info("mail goes out by SMTP", slog.String("from", cfg.MailFrom))
}

// afterImport is what every import does inside its own transaction, from
// every way in (upload, API, 'burnrate import', 'burnrate demo'): it
// enqueues the org's budget evaluation and the refresh of its stored
// savings report, which therefore exist exactly when the import commits.
func afterImport(q *jobs.Queue) func(ctx context.Context, tx *store.Store, orgID, importID int64) error {
	return func(ctx context.Context, tx *store.Store, orgID, _ int64) error {
		if err := schedule.EnqueueEvaluation(ctx, q, tx, orgID); err != nil {
			return err
		}
		return savings.EnqueueRefresh(ctx, q, tx, orgID)
	}
}

// channelSecrets is what opens sealed channel URLs: SECRET_KEY, if set.
func channelSecrets(key *seal.Key) notify.Opener {
	if key == nil {
		return nil // not a typed nil: the notifier tests for none
	}
	return key
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
