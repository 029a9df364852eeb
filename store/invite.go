package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/burnrate/burnrate/access"
)

// InviteTTL is how long an invite link stays valid.
const InviteTTL = 7 * 24 * time.Hour

// Invite asks someone to join an org with a role, by a link with a secret.
type Invite struct {
	OrgID      int64
	ID         int64
	Email      string
	Role       access.Role
	InvitedBy  int64
	CreatedAt  time.Time
	ExpiresAt  time.Time
	AcceptedAt *time.Time
}

const inviteColumns = "org_id, id, email, role, coalesce(invited_by, 0), created_at, expires_at, accepted_at"

func scanInvite(row pgx.Row) (Invite, error) {
	var i Invite
	err := row.Scan(&i.OrgID, &i.ID, &i.Email, &i.Role, &i.InvitedBy, &i.CreatedAt, &i.ExpiresAt, &i.AcceptedAt)
	return i, err
}

// CreateInvite invites email into orgID and returns the invite with the
// secret token for its link (shown once, stored hashed).
func (s *Store) CreateInvite(ctx context.Context, orgID int64, email string, role access.Role, invitedBy int64) (Invite, string, error) {
	token, hash := newSecret()
	inv, err := scanInvite(s.q.QueryRow(ctx, `
		INSERT INTO invites (org_id, email, role, token_hash, invited_by, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6)
		RETURNING `+inviteColumns, orgID, email, role, hash, invitedBy, time.Now().Add(InviteTTL)))
	if err != nil {
		return Invite{}, "", mapError("create invite", err)
	}
	return inv, token, nil
}

// Invites lists orgID's open (not accepted, not expired) invites, newest first.
func (s *Store) Invites(ctx context.Context, orgID int64) ([]Invite, error) {
	rows, err := s.q.Query(ctx, `
		SELECT `+inviteColumns+` FROM invites
		WHERE org_id = $1 AND accepted_at IS NULL AND expires_at > now()
		ORDER BY created_at DESC, id DESC`, orgID)
	if err != nil {
		return nil, mapError("list invites", err)
	}
	invs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Invite, error) { return scanInvite(row) })
	return invs, mapError("list invites", err)
}

// InviteByToken returns the open invite the token belongs to. Returns
// ErrNotFound for an unknown, used or expired token.
func (s *Store) InviteByToken(ctx context.Context, token string) (Invite, error) {
	inv, err := scanInvite(s.q.QueryRow(ctx, `
		SELECT `+inviteColumns+` FROM invites
		WHERE token_hash = $1 AND accepted_at IS NULL AND expires_at > now()`, hashSecret(token)))
	return inv, mapError("get invite", err)
}

// AcceptInvite makes userID a member with the invite's role and uses the
// invite up, in one transaction. A user who is a member already keeps their
// role. Returns ErrNotFound if the invite is no longer open.
func (s *Store) AcceptInvite(ctx context.Context, token string, userID int64) (Invite, error) {
	var inv Invite
	err := s.InTx(ctx, func(tx *Store) error {
		var err error
		inv, err = scanInvite(tx.q.QueryRow(ctx, `
			UPDATE invites SET accepted_at = now()
			WHERE token_hash = $1 AND accepted_at IS NULL AND expires_at > now()
			RETURNING `+inviteColumns, hashSecret(token)))
		if err != nil {
			return err
		}
		_, err = tx.q.Exec(ctx, `
			INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, $3)
			ON CONFLICT (org_id, user_id) DO NOTHING`, inv.OrgID, userID, inv.Role)
		return err
	})
	return inv, mapError("accept invite", err)
}

// DeleteInvite withdraws an invite. Returns ErrNotFound if orgID has no such invite.
func (s *Store) DeleteInvite(ctx context.Context, orgID, id int64) error {
	tag, err := s.q.Exec(ctx, `DELETE FROM invites WHERE org_id = $1 AND id = $2`, orgID, id)
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	return mapError("delete invite", err)
}
