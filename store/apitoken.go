package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/burnrate/burnrate/access"
	"github.com/burnrate/burnrate/label"
)

// APITokenPrefix starts every API token, so that leaked tokens are easy to
// recognise (and to scan for).
const APITokenPrefix = "brt_"

// APIToken lets a script act for an org over the HTTP API. Only its hash and
// its first characters (Prefix, shown in lists) are stored.
type APIToken struct {
	OrgID     int64
	ID        int64
	Name      string
	Prefix    string
	CreatedBy int64
	// CreatorEmail is who created the token ("" once their account is
	// gone). Set by APITokens only.
	CreatorEmail string
	CreatedAt    time.Time
	LastUsedAt   *time.Time
	RevokedAt    *time.Time
	// Role is what the token may do: its maker's role in the org now, not
	// when it was made. Set by APITokenBySecret only.
	Role access.Role
}

const apiTokenColumns = "org_id, id, name, prefix, coalesce(created_by, 0), created_at, last_used_at, revoked_at"

func scanAPIToken(row pgx.Row) (APIToken, error) {
	var t APIToken
	err := row.Scan(&t.OrgID, &t.ID, &t.Name, &t.Prefix, &t.CreatedBy, &t.CreatedAt, &t.LastUsedAt, &t.RevokedAt)
	return t, err
}

// CreateAPIToken makes a token for orgID and returns it with the secret,
// which is shown once and never again.
func (s *Store) CreateAPIToken(ctx context.Context, orgID int64, name string, createdBy int64) (APIToken, string, error) {
	secret, _ := newSecret()
	secret = APITokenPrefix + secret
	t, err := scanAPIToken(s.q.QueryRow(ctx, `
		INSERT INTO api_tokens (org_id, name, prefix, token_hash, created_by)
		VALUES ($1, $2, $3, $4, NULLIF($5, 0))
		RETURNING `+apiTokenColumns, orgID, label.Clean(name), secret[:len(APITokenPrefix)+6], hashSecret(secret), createdBy))
	if err != nil {
		return APIToken{}, "", mapError("create api token", err)
	}
	return t, secret, nil
}

// APITokens lists orgID's tokens with who created them, newest first,
// revoked ones included.
func (s *Store) APITokens(ctx context.Context, orgID int64) ([]APIToken, error) {
	rows, err := s.q.Query(ctx, `
		SELECT t.org_id, t.id, t.name, t.prefix, coalesce(t.created_by, 0), coalesce(u.email, ''),
			t.created_at, t.last_used_at, t.revoked_at
		FROM api_tokens t LEFT JOIN users u ON u.id = t.created_by
		WHERE t.org_id = $1
		ORDER BY t.created_at DESC, t.id DESC`, orgID)
	if err != nil {
		return nil, mapError("list api tokens", err)
	}
	ts, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (APIToken, error) {
		var t APIToken
		err := row.Scan(&t.OrgID, &t.ID, &t.Name, &t.Prefix, &t.CreatedBy, &t.CreatorEmail, &t.CreatedAt, &t.LastUsedAt, &t.RevokedAt)
		return t, err
	})
	return ts, mapError("list api tokens", err)
}

// APITokenBySecret returns the live token secret proves, with its org, in
// one round trip, and marks it used: at most once a minute, the precision
// Settings shows. A script that polls every second would otherwise write,
// and wait for the disk to commit, on every request.
//
// A token acts as its maker does now: Role is the maker's current role in
// the org, so a demotion narrows their tokens at once, and a token whose
// maker is no longer a member (removed, or their account deleted) does not
// work at all.
// Returns ErrNotFound for an unknown or revoked token, or one whose maker
// is no longer a member.
func (s *Store) APITokenBySecret(ctx context.Context, secret string) (APIToken, Org, error) {
	hash := hashSecret(secret)
	b := &pgx.Batch{}
	b.Queue(`
		WITH live AS (
			SELECT t.org_id, t.id, m.role
			FROM api_tokens t JOIN memberships m ON m.org_id = t.org_id AND m.user_id = t.created_by
			WHERE t.token_hash = $1 AND t.revoked_at IS NULL
		), used AS (
			UPDATE api_tokens t SET last_used_at = now()
			FROM live
			WHERE t.org_id = live.org_id AND t.id = live.id
				AND (t.last_used_at IS NULL OR t.last_used_at < now() - interval '1 minute')
			RETURNING t.*
		)
		SELECT `+apiTokenColumns+`, (SELECT role FROM live) FROM used
		UNION ALL
		SELECT `+apiTokenColumns+`, (SELECT role FROM live) FROM api_tokens
		WHERE (org_id, id) IN (SELECT org_id, id FROM live) AND NOT EXISTS (SELECT FROM used)`, hash)
	b.Queue(`SELECT `+orgColumns+` FROM orgs
		WHERE id = (SELECT org_id FROM api_tokens WHERE token_hash = $1 AND revoked_at IS NULL)`, hash)
	br := s.q.SendBatch(ctx, b)
	defer br.Close()
	var t APIToken
	err := br.QueryRow().Scan(&t.OrgID, &t.ID, &t.Name, &t.Prefix, &t.CreatedBy, &t.CreatedAt, &t.LastUsedAt, &t.RevokedAt, &t.Role)
	if err != nil {
		return APIToken{}, Org{}, mapError("get api token", err)
	}
	o, err := scanOrg(br.QueryRow())
	if err != nil {
		// Revoked, or its org deleted, in between: as if unknown.
		return APIToken{}, Org{}, mapError("get api token's org", err)
	}
	return t, o, nil
}

// RevokeAPIToken stops a token from working. Returns ErrNotFound if orgID has
// no such live token.
func (s *Store) RevokeAPIToken(ctx context.Context, orgID, id int64) error {
	tag, err := s.q.Exec(ctx, `UPDATE api_tokens SET revoked_at = now() WHERE org_id = $1 AND id = $2 AND revoked_at IS NULL`, orgID, id)
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	return mapError("revoke api token", err)
}

// revokeAPITokensBy revokes the live tokens userID created in orgID and
// counts them.
func (s *Store) revokeAPITokensBy(ctx context.Context, orgID, userID int64) (int64, error) {
	tag, err := s.q.Exec(ctx, `
		UPDATE api_tokens SET revoked_at = now()
		WHERE org_id = $1 AND created_by = $2 AND revoked_at IS NULL`, orgID, userID)
	if err != nil {
		return 0, mapError("revoke api tokens of member", err)
	}
	return tag.RowsAffected(), nil
}
