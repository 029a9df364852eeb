package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// Outbox statuses: what became of a queued email.
const (
	// MailQueued waits for its job, or for its next try after a failure.
	MailQueued = "queued"
	// MailSent was accepted by the mail server.
	MailSent = "sent"
	// MailFailed was given up: refused for good, or out of attempts.
	MailFailed = "failed"
	// MailNotSent was kept in the outbox because mail is not configured.
	MailNotSent = "not_sent"
)

// OutboxMail is one email in the outbox: to whom, what, and how its
// delivery went. OrgID is 0 for account mail, which belongs to no org.
type OutboxMail struct {
	ID        int64
	OrgID     int64
	Kind      string
	To        []string
	Subject   string
	Status    string
	Attempts  int
	LastError string
	CreatedAt time.Time
	UpdatedAt time.Time
	SentAt    *time.Time
}

// NewOutboxMail is an email to queue. Message is the whole message, encoded
// as JSON by package mail; the store keeps it as it is.
type NewOutboxMail struct {
	OrgID   int64 // 0: account mail
	Kind    string
	To      []string
	Subject string
	Message []byte
}

const outboxColumns = "id, coalesce(org_id, 0), kind, recipients, subject, status, attempts, last_error, created_at, updated_at, sent_at"

func scanOutboxMail(row pgx.Row, extra ...any) (OutboxMail, error) {
	var m OutboxMail
	err := row.Scan(append([]any{&m.ID, &m.OrgID, &m.Kind, &m.To, &m.Subject, &m.Status, &m.Attempts, &m.LastError,
		&m.CreatedAt, &m.UpdatedAt, &m.SentAt}, extra...)...)
	return m, err
}

// CreateOutboxMail queues an email, in s's transaction if it is in one.
func (s *Store) CreateOutboxMail(ctx context.Context, n NewOutboxMail) (OutboxMail, error) {
	m, err := scanOutboxMail(s.q.QueryRow(ctx, `
		INSERT INTO outbox (org_id, kind, recipients, subject, message)
		VALUES (NULLIF($1, 0), $2, $3, $4, $5)
		RETURNING `+outboxColumns, n.OrgID, n.Kind, n.To, n.Subject, n.Message))
	return m, mapError("create outbox mail", err)
}

// OutboxMessage returns an email of orgID (0: account mail) with its
// message. Returns ErrNotFound if there is none.
func (s *Store) OutboxMessage(ctx context.Context, orgID, id int64) (OutboxMail, []byte, error) {
	var msg []byte
	m, err := scanOutboxMail(s.q.QueryRow(ctx, `
		SELECT `+outboxColumns+`, message FROM outbox
		WHERE org_id IS NOT DISTINCT FROM NULLIF($1, 0) AND id = $2`, orgID, id), &msg)
	return m, msg, mapError("get outbox mail", err)
}

// OutboxMails lists orgID's most recent emails, newest first, at most limit.
func (s *Store) OutboxMails(ctx context.Context, orgID int64, limit int) ([]OutboxMail, error) {
	rows, err := s.q.Query(ctx, `
		SELECT `+outboxColumns+` FROM outbox
		WHERE org_id = $1 ORDER BY id DESC LIMIT $2`, orgID, limit)
	if err != nil {
		return nil, mapError("list outbox", err)
	}
	ms, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (OutboxMail, error) { return scanOutboxMail(row) })
	return ms, mapError("list outbox", err)
}

// OutboxUpdate is what a delivery attempt (or the decision not to make one)
// did to an email.
type OutboxUpdate struct {
	Status    string
	Error     string // empty once sent
	Attempted bool   // a delivery was tried: count it
}

// UpdateOutboxMail records what became of an email of orgID (0: account
// mail). Returns ErrNotFound if there is none.
func (s *Store) UpdateOutboxMail(ctx context.Context, orgID, id int64, u OutboxUpdate) error {
	tag, err := s.q.Exec(ctx, `
		UPDATE outbox SET
			status = $3, last_error = $4,
			attempts = attempts + CASE WHEN $5 THEN 1 ELSE 0 END,
			sent_at = CASE WHEN $3 = 'sent' THEN now() ELSE sent_at END,
			updated_at = now()
		WHERE org_id IS NOT DISTINCT FROM NULLIF($1, 0) AND id = $2`,
		orgID, id, u.Status, u.Error, u.Attempted)
	if err == nil && tag.RowsAffected() == 0 {
		err = ErrNotFound
	}
	return mapError("update outbox mail", err)
}

// DeleteOldOutboxMail deletes the emails, of every org, created more than
// olderThan ago and no longer queued, and says how many.
func (s *Store) DeleteOldOutboxMail(ctx context.Context, olderThan time.Duration) (int64, error) {
	tag, err := s.q.Exec(ctx, `
		DELETE FROM outbox WHERE created_at < now() - $1::interval AND status <> 'queued'`, olderThan)
	return tag.RowsAffected(), mapError("delete old outbox mail", err)
}
