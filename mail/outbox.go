package mail

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/riverqueue/river"

	"github.com/burnrate/burnrate/jobs"
	"github.com/burnrate/burnrate/store"
)

// NotConfigured is what the outbox says of mail it kept because SMTP_URL is
// not set.
const NotConfigured = "not sent: mail is not configured (SMTP_URL)"

// Outbox queues mail. Each message is stored whole in the outbox table and
// delivered by a job (SendArgs) that carries only its id, so a large digest
// does not bloat the queue, and the outbox says what was sent, to whom,
// and how each try went.
type Outbox struct {
	queue      *jobs.Queue
	configured bool
}

// NewOutbox queues with q; configured says whether mail is delivered (SMTP_URL
// is set), for the pages that say so.
func NewOutbox(q *jobs.Queue, configured bool) *Outbox {
	return &Outbox{queue: q, configured: configured}
}

// Configured reports whether queued mail is delivered. Without SMTP_URL it
// is kept in the outbox, marked NotConfigured.
func (o *Outbox) Configured() bool { return o.configured }

// Queue stores m in the outbox and enqueues its delivery, in st's
// transaction (or a transaction of its own): the mail goes out exactly when
// the work that sends it commits. orgID is the org the mail is for (its
// admins see it in the org's outbox), or 0 for account mail (password
// resets); a st fenced to an org may queue only that org's mail. kind names
// what the mail is (invite, digest, alert…). It returns the outbox id.
func (o *Outbox) Queue(ctx context.Context, st *store.Store, orgID int64, kind string, m Message) (int64, error) {
	if len(m.To) == 0 {
		return 0, errors.New("queue mail: no recipients")
	}
	raw, err := json.Marshal(storedMessage(m))
	if err != nil {
		return 0, fmt.Errorf("queue mail: %w", err)
	}
	var id int64
	err = st.InTx(ctx, func(tx *store.Store) error {
		rec, err := tx.CreateOutboxMail(ctx, store.NewOutboxMail{OrgID: orgID, Kind: kind, To: m.To, Subject: m.Subject, Message: raw})
		if err != nil {
			return err
		}
		id = rec.ID
		_, err = o.queue.Insert(ctx, tx, SendArgs{OutboxID: rec.ID, OrgID: orgID}, nil)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("queue mail: %w", err)
	}
	return id, nil
}

// storedMessage is a Message as the outbox keeps it (JSON; inline parts'
// bytes in base64).
type storedMessage struct {
	To      []string          `json:"to"`
	Subject string            `json:"subject"`
	Text    string            `json:"text"`
	HTML    string            `json:"html,omitempty"`
	Inline  []Part            `json:"inline,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// MaxAttempts is how often a delivery is tried before the mail is given up
// as failed: with River's backoff (attempt⁴ seconds), the last try comes
// about eleven hours after the first, long enough to ride out a mail
// server's outage.
const MaxAttempts = 12

// SendArgs delivers one outbox mail.
type SendArgs struct {
	OutboxID int64 `json:"outbox_id" river:"unique"`
	OrgID    int64 `json:"org_id,omitempty"` // 0: account mail
}

// Kind is the job's kind, as stored.
func (SendArgs) Kind() string { return "mail" }

// InsertOpts puts deliveries in their own queue, and makes a second job for
// the same mail a duplicate that is never inserted.
func (SendArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: jobs.QueueMail, MaxAttempts: MaxAttempts, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// SendWorker delivers outbox mail with Sender (nil: mail is not configured,
// and mail is kept in the outbox).
type SendWorker struct {
	river.WorkerDefaults[SendArgs]
	Store  *store.Store
	Sender Sender
	Log    *slog.Logger
}

// Work tries one delivery and records how it went. A temporary failure is
// returned, for River to retry with backoff; a refusal for good (a 5xx) or
// the last attempt's failure marks the mail failed.
func (w *SendWorker) Work(ctx context.Context, job *river.Job[SendArgs]) error {
	a := job.Args
	rec, raw, err := w.Store.OutboxMessage(ctx, a.OrgID, a.OutboxID)
	if errors.Is(err, store.ErrNotFound) {
		// Deleted meanwhile, with its org: nothing to send.
		w.Log.InfoContext(ctx, "mail gone from the outbox before it was sent", slog.Int64("outbox_id", a.OutboxID))
		return nil
	}
	if err != nil {
		return err
	}
	if rec.Status != store.MailQueued {
		return nil // a retry of a delivery that was recorded already
	}
	if w.Sender == nil {
		w.Log.InfoContext(ctx, "mail not sent: mail is not configured (SMTP_URL); kept in the outbox",
			slog.Any("to", rec.To), slog.String("subject", rec.Subject), slog.Int64("outbox_id", rec.ID))
		return w.Store.UpdateOutboxMail(ctx, a.OrgID, a.OutboxID, store.OutboxUpdate{Status: store.MailNotSent, Error: NotConfigured})
	}
	var sm storedMessage
	if err := json.Unmarshal(raw, &sm); err != nil {
		return w.give(ctx, job, fmt.Errorf("stored message: %w", err), true)
	}
	if err := w.Sender.Send(ctx, Message(sm)); err != nil {
		return w.give(ctx, job, err, Permanent(err))
	}
	if err := w.Store.UpdateOutboxMail(ctx, a.OrgID, a.OutboxID, store.OutboxUpdate{Status: store.MailSent, Attempted: true}); err != nil {
		// Sent, but not recorded: retrying would send it again.
		w.Log.ErrorContext(ctx, "mail sent but not recorded as sent", slog.Int64("outbox_id", a.OutboxID), slog.Any("error", err))
		return river.JobCancel(err)
	}
	w.Log.InfoContext(ctx, "mail sent", slog.Int64("outbox_id", rec.ID), slog.String("kind", rec.Kind), slog.Int("attempt", job.Attempt))
	return nil
}

// give records a failed try; the mail is failed for good when permanent or
// out of attempts, and queued for another try otherwise.
func (w *SendWorker) give(ctx context.Context, job *river.Job[SendArgs], cause error, permanent bool) error {
	a := job.Args
	final := permanent || job.Attempt >= job.MaxAttempts
	u := store.OutboxUpdate{Status: store.MailQueued, Error: truncate(cause.Error(), 1000), Attempted: true}
	if final {
		u.Status = store.MailFailed
	}
	if err := w.Store.UpdateOutboxMail(ctx, a.OrgID, a.OutboxID, u); err != nil {
		return errors.Join(cause, err)
	}
	w.Log.WarnContext(ctx, "mail not delivered", slog.Int64("outbox_id", a.OutboxID), slog.Int("attempt", job.Attempt),
		slog.Bool("giving_up", final), slog.Any("error", cause))
	if permanent {
		return river.JobCancel(cause)
	}
	return cause
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 { // not inside a UTF-8 sequence
		n--
	}
	return s[:n] + "…"
}
