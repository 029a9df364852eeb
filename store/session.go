package store

import (
	"context"
	"crypto/subtle"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/burnrate/burnrate/access"
)

// SessionTTL is how long a session lasts without being renewed by a log-in.
const SessionTTL = 30 * 24 * time.Hour

// Session is a logged-in browser. OrgID is the org it is looking at (0: none
// yet). Flash is a one-shot message shown on the next page.
type Session struct {
	ID        int64
	UserID    int64
	OrgID     int64
	Flash     string
	ExpiresAt time.Time
}

// CreateSession starts a session for userID and returns it with the cookie
// value "id.secret" that proves it.
func (s *Store) CreateSession(ctx context.Context, userID, orgID int64, userAgent string) (Session, string, error) {
	secret, hash := newSecret()
	sess := Session{UserID: userID, OrgID: orgID, ExpiresAt: time.Now().Add(SessionTTL)}
	err := s.q.QueryRow(ctx, `
		INSERT INTO sessions (secret_hash, user_id, org_id, user_agent, expires_at)
		VALUES ($1, $2, NULLIF($3, 0), $4, $5) RETURNING id`,
		hash, userID, orgID, userAgent, sess.ExpiresAt).Scan(&sess.ID)
	if err != nil {
		return Session{}, "", mapError("create session", err)
	}
	return sess, strconv.FormatInt(sess.ID, 10) + "." + secret, nil
}

// Visit is what a browser's session cookie finds: the live session, its
// user and, when the session looks at an org the user is still a member
// of, that org and the user's role there.
type Visit struct {
	Session Session
	User    User
	Org     *Org // nil: no org yet, or no longer a member of it
	Role    access.Role
}

// VisitByCookie reads the live session the cookie value proves, with its
// user, org and role, in one round trip: every request of a logged-in
// browser starts with it. Returns ErrNotFound for a malformed, wrong, or
// expired value.
func (s *Store) VisitByCookie(ctx context.Context, value string) (Visit, error) {
	idStr, secret, ok := strings.Cut(value, ".")
	id, err := strconv.ParseInt(idStr, 10, 64)
	if !ok || err != nil {
		return Visit{}, mapError("get session", ErrNotFound)
	}
	// Each statement finds the session again by its id; what they read is
	// used only once the secret has matched.
	const live = `(SELECT user_id, org_id FROM sessions WHERE id = $1 AND expires_at > now())`
	b := &pgx.Batch{}
	b.Queue(`SELECT id, user_id, coalesce(org_id, 0), flash, expires_at, secret_hash
		FROM sessions WHERE id = $1 AND expires_at > now()`, id)
	b.Queue(`SELECT `+userColumns+` FROM users WHERE id = (SELECT user_id FROM `+live+` s)`, id)
	b.Queue(`SELECT m.role FROM memberships m JOIN `+live+` s ON m.org_id = s.org_id AND m.user_id = s.user_id`, id)
	b.Queue(`SELECT `+orgColumns+` FROM orgs WHERE id = (SELECT org_id FROM `+live+` s)`, id)
	br := s.q.SendBatch(ctx, b)
	defer br.Close()

	var v Visit
	var hash []byte
	sess := &v.Session
	if err := br.QueryRow().Scan(&sess.ID, &sess.UserID, &sess.OrgID, &sess.Flash, &sess.ExpiresAt, &hash); err != nil {
		return Visit{}, mapError("get session", err)
	}
	if subtle.ConstantTimeCompare(hash, hashSecret(secret)) != 1 {
		return Visit{}, mapError("get session", ErrNotFound)
	}
	if v.User, err = scanUser(br.QueryRow()); err != nil {
		// Gone since the first statement: as if the session were.
		return Visit{}, mapError("get session's user", err)
	}
	switch err := br.QueryRow().Scan(&v.Role); {
	case errors.Is(err, pgx.ErrNoRows):
		// No org, or removed from it since: look at none.
		return v, nil
	case err != nil:
		return Visit{}, mapError("get session's membership", err)
	}
	switch org, err := scanOrg(br.QueryRow()); {
	case errors.Is(err, pgx.ErrNoRows):
		v.Role = "" // the org went in between: look at none
	case err != nil:
		return Visit{}, mapError("get session's org", err)
	default:
		v.Org = &org
	}
	return v, nil
}

// SetSessionOrg switches the org a session is looking at.
func (s *Store) SetSessionOrg(ctx context.Context, sessionID, orgID int64) error {
	_, err := s.q.Exec(ctx, `UPDATE sessions SET org_id = NULLIF($2, 0) WHERE id = $1`, sessionID, orgID)
	return mapError("set session org", err)
}

// SetFlash stores a message for the session's next page.
func (s *Store) SetFlash(ctx context.Context, sessionID int64, msg string) error {
	_, err := s.q.Exec(ctx, `UPDATE sessions SET flash = $2 WHERE id = $1`, sessionID, msg)
	return mapError("set flash", err)
}

// DeleteSession ends a session (log-out, or rotation at log-in).
func (s *Store) DeleteSession(ctx context.Context, id int64) error {
	_, err := s.q.Exec(ctx, `DELETE FROM sessions WHERE id = $1`, id)
	return mapError("delete session", err)
}

// DeleteUserSessions ends every session of userID except keep (0: all of
// them), for "log out everywhere" and after a password change, and says
// how many it ended.
func (s *Store) DeleteUserSessions(ctx context.Context, userID, keep int64) (int64, error) {
	tag, err := s.q.Exec(ctx, `DELETE FROM sessions WHERE user_id = $1 AND id <> $2`, userID, keep)
	return tag.RowsAffected(), mapError("delete user sessions", err)
}

// DeleteExpiredSessions removes sessions past their expiry.
func (s *Store) DeleteExpiredSessions(ctx context.Context) (int64, error) {
	tag, err := s.q.Exec(ctx, `DELETE FROM sessions WHERE expires_at <= now()`)
	return tag.RowsAffected(), mapError("delete expired sessions", err)
}
