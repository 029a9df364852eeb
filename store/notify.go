package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Channel kinds with a notification_channels row. Email has none: its
// recipients come with each notification.
const (
	ChannelSlack   = "slack"
	ChannelWebhook = "webhook"
	ChannelEmail   = "email"
)

// NotificationChannel is a Slack incoming webhook or a signed JSON webhook
// of an org (BudgetID 0) or of one budget, whose alerts it receives instead
// of the org's channel of the same kind. URL is a credential: pages show
// URLMasked.
type NotificationChannel struct {
	OrgID     int64
	ID        int64
	BudgetID  int64
	Kind      string
	URL       string
	URLMasked string
	CreatedBy int64
	CreatedAt time.Time
	// BudgetName is the budget's name when BudgetID is set. Set by
	// NotificationChannels only.
	BudgetName string
}

const channelColumns = "c.org_id, c.id, coalesce(c.budget_id, 0), c.kind, c.url, c.url_masked, coalesce(c.created_by, 0), c.created_at"

func scanChannel(row pgx.Row) (NotificationChannel, error) {
	var ch NotificationChannel
	err := row.Scan(&ch.OrgID, &ch.ID, &ch.BudgetID, &ch.Kind, &ch.URL, &ch.URLMasked, &ch.CreatedBy, &ch.CreatedAt)
	return ch, err
}

// SetNotificationChannel makes url orgID's channel of kind, or budgetID's
// (0: the org's), replacing the one there was. The caller checks url, and
// passes it sealed when the server has a SECRET_KEY.
// Returns ErrNotFound if orgID has no budget budgetID.
func (s *Store) SetNotificationChannel(ctx context.Context, orgID, budgetID int64, kind, url, masked string, createdBy int64) (NotificationChannel, error) {
	ch, err := scanChannel(s.q.QueryRow(ctx, `
		INSERT INTO notification_channels AS c (org_id, budget_id, kind, url, url_masked, created_by, sealed_at, created_at)
		VALUES ($1, NULLIF($2, 0), $3, $4, $5, NULLIF($6, 0), CASE WHEN $4 LIKE 'v1.%' THEN now() END, now())
		ON CONFLICT (org_id, coalesce(budget_id, 0), kind) DO UPDATE
			SET url = excluded.url, url_masked = excluded.url_masked, created_by = excluded.created_by, created_at = excluded.created_at,
				sealed_at = excluded.sealed_at
		RETURNING `+channelColumns, orgID, budgetID, kind, url, masked, createdBy))
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23503" {
		err = pgx.ErrNoRows // the budget is not orgID's
	}
	return ch, mapError("set notification channel", err)
}

// NotificationChannel returns orgID's channel id. Returns ErrNotFound if
// there is none.
func (s *Store) NotificationChannel(ctx context.Context, orgID, id int64) (NotificationChannel, error) {
	ch, err := scanChannel(s.q.QueryRow(ctx, `SELECT `+channelColumns+` FROM notification_channels c WHERE c.org_id = $1 AND c.id = $2`, orgID, id))
	return ch, mapError("get notification channel", err)
}

// NotificationChannels lists orgID's channels: the org's first, then each
// budget's by budget name.
func (s *Store) NotificationChannels(ctx context.Context, orgID int64) ([]NotificationChannel, error) {
	rows, err := s.q.Query(ctx, `
		SELECT `+channelColumns+`, coalesce(b.name, '')
		FROM notification_channels c LEFT JOIN budgets b ON b.org_id = c.org_id AND b.id = c.budget_id
		WHERE c.org_id = $1
		ORDER BY c.budget_id NULLS FIRST, lower(b.name), c.kind`, orgID)
	if err != nil {
		return nil, mapError("list notification channels", err)
	}
	chs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (NotificationChannel, error) {
		var ch NotificationChannel
		err := row.Scan(&ch.OrgID, &ch.ID, &ch.BudgetID, &ch.Kind, &ch.URL, &ch.URLMasked, &ch.CreatedBy, &ch.CreatedAt, &ch.BudgetName)
		return ch, err
	})
	return chs, mapError("list notification channels", err)
}

// ChannelsFor returns the channels a notification about budgetID (0: about
// no budget) goes to: of each kind, the budget's own if it has one, else
// the org's.
func (s *Store) ChannelsFor(ctx context.Context, orgID, budgetID int64) ([]NotificationChannel, error) {
	rows, err := s.q.Query(ctx, `
		SELECT DISTINCT ON (c.kind) `+channelColumns+`
		FROM notification_channels c
		WHERE c.org_id = $1 AND (c.budget_id IS NULL OR c.budget_id = $2)
		ORDER BY c.kind, c.budget_id NULLS LAST`, orgID, budgetID)
	if err != nil {
		return nil, mapError("channels for", err)
	}
	chs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (NotificationChannel, error) { return scanChannel(row) })
	return chs, mapError("channels for", err)
}

// BudgetChannels returns budgetID's own channels by kind.
func (s *Store) BudgetChannels(ctx context.Context, orgID, budgetID int64) (map[string]NotificationChannel, error) {
	rows, err := s.q.Query(ctx, `SELECT `+channelColumns+` FROM notification_channels c WHERE c.org_id = $1 AND c.budget_id = $2`, orgID, budgetID)
	if err != nil {
		return nil, mapError("budget channels", err)
	}
	chs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (NotificationChannel, error) { return scanChannel(row) })
	if err != nil {
		return nil, mapError("budget channels", err)
	}
	out := map[string]NotificationChannel{}
	for _, ch := range chs {
		out[ch.Kind] = ch
	}
	return out, nil
}

// AllNotificationChannels lists every org's channels, for sealing their
// URLs and re-sealing them under a new key. Unfenced: run it on the
// owner's store.
func (s *Store) AllNotificationChannels(ctx context.Context) ([]NotificationChannel, error) {
	rows, err := s.q.Query(ctx, `SELECT `+channelColumns+` FROM notification_channels c ORDER BY c.org_id, c.id FOR UPDATE`)
	if err != nil {
		return nil, mapError("all notification channels", err)
	}
	chs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (NotificationChannel, error) { return scanChannel(row) })
	return chs, mapError("all notification channels", err)
}

// SealChannelURL replaces a channel's URL, as stored, by its sealed form.
// It changes nothing when the URL was changed meanwhile (was is the value
// read), so two servers sealing at once do not seal twice.
func (s *Store) SealChannelURL(ctx context.Context, orgID, id int64, was, sealed string) error {
	_, err := s.q.Exec(ctx, `UPDATE notification_channels SET url = $4, sealed_at = now() WHERE org_id = $1 AND id = $2 AND url = $3`,
		orgID, id, was, sealed)
	return mapError("seal channel url", err)
}

// DeleteNotificationChannel removes orgID's channel id; deliveries made to
// it stay, as history. Returns ErrNotFound if there is none.
func (s *Store) DeleteNotificationChannel(ctx context.Context, orgID, id int64) error {
	tag, err := s.q.Exec(ctx, `DELETE FROM notification_channels WHERE org_id = $1 AND id = $2`, orgID, id)
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	return mapError("delete notification channel", err)
}

// DeleteBudgetChannel removes budgetID's own channel of kind, if it has one.
func (s *Store) DeleteBudgetChannel(ctx context.Context, orgID, budgetID int64, kind string) error {
	_, err := s.q.Exec(ctx, `DELETE FROM notification_channels WHERE org_id = $1 AND budget_id = $2 AND kind = $3`, orgID, budgetID, kind)
	return mapError("delete budget channel", err)
}

// WebhookSecret is the key an org's webhook bodies are signed with, and for
// a while after a rotation the key before it, which signs too.
type WebhookSecret struct {
	Secret        string
	Previous      string // "" when none, or when its time is up
	PreviousUntil time.Time
	CreatedAt     time.Time
}

// WebhookSecret returns orgID's signing key. Returns ErrNotFound if the org
// has none yet.
func (s *Store) WebhookSecret(ctx context.Context, orgID int64) (WebhookSecret, error) {
	var w WebhookSecret
	var until *time.Time
	err := s.q.QueryRow(ctx, `
		SELECT secret, CASE WHEN previous_until > now() THEN previous ELSE '' END, previous_until, created_at
		FROM webhook_secrets WHERE org_id = $1`, orgID).Scan(&w.Secret, &w.Previous, &until, &w.CreatedAt)
	if until != nil && w.Previous != "" {
		w.PreviousUntil = *until
	}
	return w, mapError("get webhook secret", err)
}

// CreateWebhookSecret gives orgID the signing key secret if it has none,
// and reports whether it did.
func (s *Store) CreateWebhookSecret(ctx context.Context, orgID int64, secret string) (bool, error) {
	tag, err := s.q.Exec(ctx, `INSERT INTO webhook_secrets (org_id, secret) VALUES ($1, $2) ON CONFLICT DO NOTHING`, orgID, secret)
	if err != nil {
		return false, mapError("create webhook secret", err)
	}
	return tag.RowsAffected() == 1, nil
}

// RotateWebhookSecret makes secret orgID's signing key. The key it
// replaces keeps signing alongside it for overlap.
func (s *Store) RotateWebhookSecret(ctx context.Context, orgID int64, secret string, overlap time.Duration) error {
	_, err := s.q.Exec(ctx, `
		INSERT INTO webhook_secrets (org_id, secret, created_at) VALUES ($1, $2, now())
		ON CONFLICT (org_id) DO UPDATE
			SET previous = webhook_secrets.secret, previous_until = excluded.created_at + $3::interval,
				secret = excluded.secret, created_at = excluded.created_at`, orgID, secret, overlap)
	return mapError("rotate webhook secret", err)
}

// Delivery statuses.
const (
	DeliveryPending  = "pending"  // recorded, not tried yet
	DeliverySending  = "sending"  // claimed by a worker
	DeliverySent     = "sent"     // done; never sent again
	DeliveryRetrying = "retrying" // an attempt failed; another may succeed
	DeliveryFailed   = "failed"   // given up on (or failed for good)
)

// Delivery is one notification sent, or to be sent, over one channel.
type Delivery struct {
	OrgID        int64
	ID           int64
	Kind         string // budget_alert, digest, test
	Channel      string // email, slack, webhook
	ChannelID    int64  // the notification_channels row; 0 for email
	Target       string // masked URL, or the email recipients
	Subject      string
	DedupeKey    string
	Body         []byte // set by ClaimDelivery only
	Status       string
	Attempts     int
	LastError    string
	ResponseCode int // 0: no HTTP response
	CreatedAt    time.Time
	UpdatedAt    time.Time
	SentAt       *time.Time
}

// NewDelivery is a delivery to record.
type NewDelivery struct {
	Kind      string
	Channel   string
	ChannelID int64
	Target    string
	Subject   string
	DedupeKey string
	Body      []byte
}

const deliveryColumns = `org_id, id, kind, channel, coalesce(channel_id, 0), target, subject, dedupe_key, status, attempts,
	last_error, coalesce(response_code, 0), created_at, updated_at, sent_at`

func scanDelivery(row pgx.Row, extra ...any) (Delivery, error) {
	var d Delivery
	err := row.Scan(append([]any{&d.OrgID, &d.ID, &d.Kind, &d.Channel, &d.ChannelID, &d.Target, &d.Subject, &d.DedupeKey,
		&d.Status, &d.Attempts, &d.LastError, &d.ResponseCode, &d.CreatedAt, &d.UpdatedAt, &d.SentAt}, extra...)...)
	return d, err
}

// RecordDelivery records a delivery as pending, unless orgID already has
// one over the same channel with the same dedupe key, which it returns
// instead; created says which.
func (s *Store) RecordDelivery(ctx context.Context, orgID int64, in NewDelivery) (d Delivery, created bool, err error) {
	d, err = scanDelivery(s.q.QueryRow(ctx, `
		INSERT INTO deliveries (org_id, kind, channel, channel_id, target, subject, dedupe_key, body)
		VALUES ($1, $2, $3, NULLIF($4, 0), $5, $6, $7, $8)
		ON CONFLICT (org_id, channel, dedupe_key) DO NOTHING
		RETURNING `+deliveryColumns, orgID, in.Kind, in.Channel, in.ChannelID, in.Target, in.Subject, in.DedupeKey, in.Body))
	if err == nil {
		return d, true, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return d, false, mapError("record delivery", err)
	}
	d, err = scanDelivery(s.q.QueryRow(ctx, `
		SELECT `+deliveryColumns+` FROM deliveries WHERE org_id = $1 AND channel = $2 AND dedupe_key = $3`,
		orgID, in.Channel, in.DedupeKey))
	return d, false, mapError("record delivery", err)
}

// Delivery returns orgID's delivery id, without its body. Returns
// ErrNotFound if there is none.
func (s *Store) Delivery(ctx context.Context, orgID, id int64) (Delivery, error) {
	d, err := scanDelivery(s.q.QueryRow(ctx, `SELECT `+deliveryColumns+` FROM deliveries WHERE org_id = $1 AND id = $2`, orgID, id))
	return d, mapError("get delivery", err)
}

// Deliveries lists orgID's latest deliveries, newest first, without their
// bodies.
func (s *Store) Deliveries(ctx context.Context, orgID int64, limit int) ([]Delivery, error) {
	rows, err := s.q.Query(ctx, `
		SELECT `+deliveryColumns+` FROM deliveries WHERE org_id = $1
		ORDER BY created_at DESC, id DESC LIMIT $2`, orgID, limit)
	if err != nil {
		return nil, mapError("list deliveries", err)
	}
	ds, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Delivery, error) { return scanDelivery(row) })
	return ds, mapError("list deliveries", err)
}

// ClaimDelivery takes orgID's delivery id for sending, counting an attempt,
// if it is pending, retrying or failed, or sending under a claim older than
// lease (its worker died). It returns the delivery with its body and
// whether it was claimed; a delivery that is sent, or being sent, is
// returned unclaimed. Returns ErrNotFound if there is none.
func (s *Store) ClaimDelivery(ctx context.Context, orgID, id int64, lease time.Duration) (Delivery, bool, error) {
	var body []byte
	d, err := scanDelivery(s.q.QueryRow(ctx, `
		UPDATE deliveries SET status = 'sending', attempts = attempts + 1, claimed_until = now() + $3::interval,
			updated_at = now()
		WHERE org_id = $1 AND id = $2
			AND (status IN ('pending', 'retrying', 'failed') OR (status = 'sending' AND claimed_until < now()))
		RETURNING `+deliveryColumns+`, body`, orgID, id, lease), &body)
	if err == nil {
		d.Body = body
		return d, true, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return d, false, mapError("claim delivery", err)
	}
	d, err = s.Delivery(ctx, orgID, id)
	return d, false, err
}

// DeliveryResult is how an attempt went.
type DeliveryResult struct {
	Status       string // sent, retrying or failed
	ResponseCode int    // 0: no HTTP response
	Error        string
}

// FinishDelivery records how attempt (the Attempts ClaimDelivery returned)
// on a claimed delivery went. Returns ErrNotFound if orgID has no delivery
// id being sent in that attempt: its claim ran out and another worker took
// it over.
func (s *Store) FinishDelivery(ctx context.Context, orgID, id int64, attempt int, r DeliveryResult) (Delivery, error) {
	d, err := scanDelivery(s.q.QueryRow(ctx, `
		UPDATE deliveries SET status = $4, response_code = NULLIF($5, 0), last_error = $6, claimed_until = NULL,
			sent_at = CASE WHEN $4 = 'sent' THEN now() END, updated_at = now()
		WHERE org_id = $1 AND id = $2 AND attempts = $3 AND status = 'sending'
		RETURNING `+deliveryColumns, orgID, id, attempt, r.Status, r.ResponseCode, r.Error))
	return d, mapError("finish delivery", err)
}

// DeleteOldDeliveries deletes the deliveries, of every org, created more
// than olderThan ago that are done (sent or failed), and says how many.
// Their dedupe keys name a day or a budget period, long past by then, so
// forgetting them cannot let a notification go out twice.
func (s *Store) DeleteOldDeliveries(ctx context.Context, olderThan time.Duration) (int64, error) {
	tag, err := s.q.Exec(ctx, `
		DELETE FROM deliveries WHERE created_at < now() - $1::interval AND status IN ('sent', 'failed')`, olderThan)
	return tag.RowsAffected(), mapError("delete old deliveries", err)
}
