package store

import (
	"context"
	"crypto/rand"
	"time"
)

// Digest modes: when the daily digest goes out.
const (
	DigestWhenOver   = "over"   // only when a budget is over, or forecast over
	DigestWhenAlways = "always" // every day
)

// Digest recipients: who gets the daily digest by email.
const (
	DigestToAdmins  = "admins"  // the org's owners and admins
	DigestToMembers = "members" // every member
)

// DigestSettings is an org's daily digest setup. An org that never saved
// its settings gets DefaultDigestSettings.
type DigestSettings struct {
	OrgID    int64
	Enabled  bool
	SendHour int // local hour, 0–23, in the org's time zone
	// WaitUntilHour is the local hour until which the digest waits for
	// yesterday's data before it goes out anyway (at or before SendHour:
	// no waiting).
	WaitUntilHour int
	When          string // DigestWhenOver or DigestWhenAlways
	Recipients    string // DigestToAdmins or DigestToMembers
	UpdatedAt     time.Time
}

// DefaultDigestSettings are the settings of an org that saved none: on, at
// 08:00 (waiting for yesterday's data until 12:00), only when something is
// over, to the owners and admins.
func DefaultDigestSettings(orgID int64) DigestSettings {
	return DigestSettings{OrgID: orgID, Enabled: true, SendHour: 8, WaitUntilHour: 12, When: DigestWhenOver, Recipients: DigestToAdmins}
}

// DigestSettings returns orgID's digest settings, the defaults when it has
// saved none.
func (s *Store) DigestSettings(ctx context.Context, orgID int64) (DigestSettings, error) {
	d := DefaultDigestSettings(orgID)
	rows, err := s.q.Query(ctx, `
		SELECT enabled, send_hour, wait_until_hour, send_when, recipients, updated_at
		FROM digest_settings WHERE org_id = $1`, orgID)
	if err != nil {
		return d, mapError("digest settings", err)
	}
	defer rows.Close()
	if rows.Next() {
		var hour, wait int16
		if err := rows.Scan(&d.Enabled, &hour, &wait, &d.When, &d.Recipients, &d.UpdatedAt); err != nil {
			return d, mapError("digest settings", err)
		}
		d.SendHour, d.WaitUntilHour = int(hour), int(wait)
	}
	return d, mapError("digest settings", rows.Err())
}

// SaveDigestSettings stores orgID's digest settings (the database checks
// the hour, mode and recipients).
func (s *Store) SaveDigestSettings(ctx context.Context, d DigestSettings, updatedBy int64) error {
	var by *int64
	if updatedBy != 0 {
		by = &updatedBy
	}
	_, err := s.q.Exec(ctx, `
		INSERT INTO digest_settings (org_id, enabled, send_hour, send_when, recipients, updated_by, updated_at, wait_until_hour)
		VALUES ($1, $2, $3, $4, $5, $6, now(), $7)
		ON CONFLICT (org_id) DO UPDATE SET enabled = $2, send_hour = $3, send_when = $4, recipients = $5,
			updated_by = $6, updated_at = excluded.updated_at, wait_until_hour = $7`,
		d.OrgID, d.Enabled, d.SendHour, d.When, d.Recipients, by, d.WaitUntilHour)
	return mapError("save digest settings", err)
}

// DigestRecipient is a member the digest goes to.
type DigestRecipient struct {
	UserID int64
	Email  string
	Name   string
}

// DigestRecipients lists the members of orgID that its digest goes to
// (owners and admins, or every member, as to says), without those who
// unsubscribed, by email.
func (s *Store) DigestRecipients(ctx context.Context, orgID int64, to string) ([]DigestRecipient, error) {
	rows, err := s.q.Query(ctx, `
		SELECT u.id, u.email, u.name
		FROM memberships m JOIN users u ON u.id = m.user_id
		WHERE m.org_id = $1 AND ($2 = 'members' OR m.role IN ('owner', 'admin'))
			AND NOT EXISTS (SELECT 1 FROM digest_unsubscribes x WHERE x.org_id = m.org_id AND x.user_id = m.user_id)
		ORDER BY lower(u.email)`, orgID, to)
	if err != nil {
		return nil, mapError("digest recipients", err)
	}
	var out []DigestRecipient
	for rows.Next() {
		var r DigestRecipient
		if err := rows.Scan(&r.UserID, &r.Email, &r.Name); err != nil {
			rows.Close()
			return nil, mapError("digest recipients", err)
		}
		out = append(out, r)
	}
	return out, mapError("digest recipients", rows.Err())
}

// UnsubscribeDigest stops orgID's digest going to userID; doing it twice is
// the same as once. Returns ErrNotFound if the user is not a member.
func (s *Store) UnsubscribeDigest(ctx context.Context, orgID, userID int64) error {
	tag, err := s.q.Exec(ctx, `
		INSERT INTO digest_unsubscribes (org_id, user_id)
		SELECT org_id, user_id FROM memberships WHERE org_id = $1 AND user_id = $2
		ON CONFLICT (org_id, user_id) DO NOTHING`, orgID, userID)
	if err != nil {
		return mapError("unsubscribe digest", err)
	}
	if tag.RowsAffected() == 0 {
		if _, err := s.Membership(ctx, orgID, userID); err != nil {
			return mapError("unsubscribe digest", err)
		}
	}
	return nil
}

// ResubscribeDigest sends orgID's digest to userID again.
func (s *Store) ResubscribeDigest(ctx context.Context, orgID, userID int64) error {
	_, err := s.q.Exec(ctx, `DELETE FROM digest_unsubscribes WHERE org_id = $1 AND user_id = $2`, orgID, userID)
	return mapError("resubscribe digest", err)
}

// DigestUnsubscribed reports whether userID unsubscribed from orgID's digest.
func (s *Store) DigestUnsubscribed(ctx context.Context, orgID, userID int64) (bool, error) {
	var yes bool
	err := s.q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM digest_unsubscribes WHERE org_id = $1 AND user_id = $2)`,
		orgID, userID).Scan(&yes)
	return yes, mapError("digest unsubscribed", err)
}

// AppSecret returns the install's random key named name, making it (32
// random bytes) on first use; of two processes making it at once, both get
// the one that was stored first. It needs the owner role: the fenced role
// cannot read app_secrets.
func (s *Store) AppSecret(ctx context.Context, name string) ([]byte, error) {
	key := make([]byte, 32)
	rand.Read(key) // never fails (crypto/rand panics on failure since Go 1.24)
	if _, err := s.q.Exec(ctx, `INSERT INTO app_secrets (name, secret) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`,
		name, key); err != nil {
		return nil, mapError("app secret", err)
	}
	// A statement of its own: it sees the row another process committed
	// while the insert above waited on it.
	var secret []byte
	err := s.q.QueryRow(ctx, `SELECT secret FROM app_secrets WHERE name = $1`, name).Scan(&secret)
	return secret, mapError("app secret", err)
}
