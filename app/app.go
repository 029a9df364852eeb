// Package app is Burnrate's composition root: New builds, once, from the
// configuration, everything a process works with — the importer with its
// price table and GPU catalog, the job client and the list of every job,
// the mail outbox, the notifier, connections and billing. 'burnrate serve',
// 'burnrate worker', the other commands and the tests take the App as it
// is; nothing else constructs these parts, and nothing below builds a
// default for a part it was not given.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/burnrate/burnrate/account"
	"github.com/burnrate/burnrate/billing"
	"github.com/burnrate/burnrate/connect"
	"github.com/burnrate/burnrate/connect/egress"
	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/jobs"
	"github.com/burnrate/burnrate/mail"
	"github.com/burnrate/burnrate/notify"
	"github.com/burnrate/burnrate/pricing"
	"github.com/burnrate/burnrate/savings"
	"github.com/burnrate/burnrate/schedule"
	"github.com/burnrate/burnrate/seal"
	"github.com/burnrate/burnrate/store"
)

// Config is what the App is built from (cmd/burnrate reads it from the
// environment; docs/operations.md, "Configuration", lists the variables).
type Config struct {
	// BaseURL is where users reach Burnrate, for links in mail.
	BaseURL string
	// SMTPURL is where mail goes (empty: mail is kept in the outbox, not
	// sent); MailFrom is who it is from. Sender, when set, delivers mail
	// instead (a test's SMTP server, with its own From).
	SMTPURL, MailFrom string
	Sender            mail.Sender
	// ImportTimeout bounds one import's wall-clock time
	// (ingest.DefaultImportTimeout when 0).
	ImportTimeout time.Duration
	// Billing is Stripe billing's; without a secret key billing is off and
	// every feature unlocked.
	Billing billing.Config
	// WebhookAllowPrivate lets Slack and webhook URLs reach addresses that
	// are not public (self-hosted receivers inside).
	WebhookAllowPrivate bool
	// ConnectionsAllowHostCredentials lets a connection without a key of
	// its own sign in as this server; ConnectionsEgress is where
	// connections' endpoints may reach.
	ConnectionsAllowHostCredentials bool
	ConnectionsEgress               egress.Policy
	// SecretKey seals connections' credentials and channel URLs; nil
	// when SECRET_KEY is not set, which refuses new connections.
	SecretKey *seal.Key
	// OpenAIURL, AnthropicURL, BigQueryURL and GoogleTokenURL replace the
	// providers' addresses for every connection; empty means theirs.
	OpenAIURL, AnthropicURL     string
	BigQueryURL, GoogleTokenURL string
}

// App is one process's Burnrate, wired.
type App struct {
	Store *store.Store
	Log   *slog.Logger
	// BaseURL is Config.BaseURL, for the links pages show.
	BaseURL string
	// Jobs runs the background work (serve and worker Run it; the other
	// commands only enqueue); Queue enqueues in the caller's transaction.
	Jobs  *jobs.Client
	Queue *jobs.Queue
	// Outbox queues every mail; Mailer writes the mail about accounts.
	Outbox *mail.Outbox
	Mailer *account.Mailer
	// Notifier sends alerts, digests and test notifications to channels.
	Notifier *notify.Notifier
	// Importer is the one importer: uploads, the API, connections, the
	// import and demo commands all import through it (fenced per request
	// with Importer.With), under the plan's quota, starting the same work
	// after each import (AfterImport).
	Importer *ingest.Importer
	// Connections adds, tests and syncs connections.
	Connections *connect.Service
	// Billing is Stripe billing; Enabled says whether it is on.
	Billing *billing.Service
}

// New builds the App on st. It lists every kind of job Burnrate has: a new
// kind registers its worker here, and a new periodic job joins the list
// (see package jobs). It starts nothing and touches no database.
func New(st *store.Store, cfg Config, log *slog.Logger) (*App, error) {
	sender := cfg.Sender // nil: mail is kept in the outbox
	if sender == nil && cfg.SMTPURL != "" {
		s, err := mail.NewSMTP(cfg.SMTPURL, cfg.MailFrom)
		if err != nil {
			return nil, fmt.Errorf("SMTP_URL: %w", err)
		}
		sender = s
	}
	a := &App{Store: st, Log: log, BaseURL: cfg.BaseURL, Queue: jobs.NewQueue()}
	a.Outbox = mail.NewOutbox(a.Queue, sender != nil)
	a.Mailer = &account.Mailer{Outbox: a.Outbox, BaseURL: cfg.BaseURL}
	// Digests and alerts are recorded per channel by the notifier and sent
	// by jobs; their email goes through the outbox like all mail.
	a.Notifier = notify.New(st, nil, notify.Config{
		BaseURL:      cfg.BaseURL,
		AllowPrivate: cfg.WebhookAllowPrivate,
		Enqueuer:     schedule.Enqueuer{Queue: a.Queue, Store: st},
		Mailer:       outboxMailer{outbox: a.Outbox, store: st},
		Log:          log,
		Secrets:      channelSecrets(cfg.SecretKey),
	})
	a.Billing = billing.New(cfg.Billing, st, log)
	a.Importer = ingest.NewImporter(st, ingest.PriceTable(pricing.DefaultLLMPrices()), pricing.DefaultCatalog())
	a.Importer.AfterImport = afterImport(a.Queue)
	if cfg.ImportTimeout > 0 {
		a.Importer.Timeout = cfg.ImportTimeout
	}
	if a.Billing.Enabled() {
		a.Importer.RowQuota = a.Billing.RowQuota // the plan's monthly rows
	}
	// Connections pull through the same importer as uploads. A connection
	// that starts failing, or stalls, is told to the org's admins by the
	// notifier, as alerts are.
	a.Connections = &connect.Service{Store: st, Importer: a.Importer, Key: cfg.SecretKey, Log: log,
		OpenAIURL: cfg.OpenAIURL, AnthropicURL: cfg.AnthropicURL, BigQueryURL: cfg.BigQueryURL, GoogleTokenURL: cfg.GoogleTokenURL,
		Notifier:             a.Notifier,
		AllowHostCredentials: cfg.ConnectionsAllowHostCredentials, Egress: cfg.ConnectionsEgress}

	workers := river.NewWorkers()
	river.AddWorker(workers, &jobs.CleanupWorker{Store: st, Log: log})
	river.AddWorker(workers, &jobs.SweepImportsWorker{Store: st, Log: log})
	river.AddWorker(workers, &mail.SendWorker{Store: st, Sender: sender, Log: log})
	river.AddWorker(workers, &account.ResetRequestWorker{Store: st, Mailer: a.Mailer, Log: log})
	river.AddWorker(workers, &savings.RefreshWorker{Store: st})
	// On the Free plan there is no digest and no budget alert (every org
	// has both with billing off).
	schedule.Register(workers, &schedule.Loop{Store: st, Notifier: a.Notifier, Queue: a.Queue, BaseURL: cfg.BaseURL, Log: log,
		Notifies: a.Billing.Cfg().Notifies})
	connect.Register(workers, a.Connections, a.Queue)
	periodic := append(jobs.Maintenance(jobs.MaintenanceIntervals{}), schedule.Periodic()...)
	periodic = append(periodic, connect.Periodic()...)
	if a.Billing.Enabled() {
		river.AddWorker(workers, &billing.GraceWorker{Service: a.Billing})
		periodic = append(periodic, billing.Periodic()...)
	}
	c, err := jobs.New(st, jobs.Config{Log: log, Workers: workers, Periodic: periodic, Queue: a.Queue})
	if err != nil {
		return nil, err
	}
	a.Jobs = c
	return a, nil
}

// afterImport is what every import does inside its own transaction, from
// every way in (upload, API, connection, 'burnrate import', 'burnrate
// demo'): it enqueues the org's budget evaluation and the refresh of its
// stored savings report, which therefore exist exactly when the import
// commits.
func afterImport(q *jobs.Queue) func(ctx context.Context, tx *store.Store, orgID, importID int64) error {
	return func(ctx context.Context, tx *store.Store, orgID, _ int64) error {
		if err := schedule.EnqueueEvaluation(ctx, q, tx, orgID); err != nil {
			return err
		}
		return savings.EnqueueRefresh(ctx, q, tx, orgID)
	}
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

// channelSecrets is what opens sealed channel URLs: SECRET_KEY, if set.
func channelSecrets(key *seal.Key) notify.Opener {
	if key == nil {
		return nil // not a typed nil: the notifier tests for none
	}
	return key
}
