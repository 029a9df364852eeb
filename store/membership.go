package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/burnrate/burnrate/access"
)

// Member is a user's membership in an org, with the user's details.
type Member struct {
	OrgID     int64
	UserID    int64
	Email     string
	Name      string
	Role      access.Role
	CreatedAt time.Time
}

// Membership returns userID's membership in orgID. Returns ErrNotFound if the
// user is not a member.
func (s *Store) Membership(ctx context.Context, orgID, userID int64) (Member, error) {
	var m Member
	err := s.q.QueryRow(ctx, `
		SELECT m.org_id, m.user_id, u.email, u.name, m.role, m.created_at
		FROM memberships m JOIN users u ON u.id = m.user_id
		WHERE m.org_id = $1 AND m.user_id = $2`, orgID, userID).
		Scan(&m.OrgID, &m.UserID, &m.Email, &m.Name, &m.Role, &m.CreatedAt)
	return m, mapError("get membership", err)
}

// Members lists orgID's members by email.
func (s *Store) Members(ctx context.Context, orgID int64) ([]Member, error) {
	rows, err := s.q.Query(ctx, `
		SELECT m.org_id, m.user_id, u.email, u.name, m.role, m.created_at
		FROM memberships m JOIN users u ON u.id = m.user_id
		WHERE m.org_id = $1
		ORDER BY lower(u.email)`, orgID)
	if err != nil {
		return nil, mapError("list members", err)
	}
	ms, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Member, error) {
		var m Member
		err := row.Scan(&m.OrgID, &m.UserID, &m.Email, &m.Name, &m.Role, &m.CreatedAt)
		return m, err
	})
	return ms, mapError("list members", err)
}

// AddMember makes userID a member of orgID with role. Returns ErrConflict if
// the user is a member already.
func (s *Store) AddMember(ctx context.Context, orgID, userID int64, role access.Role) error {
	_, err := s.q.Exec(ctx, `INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, $3)`, orgID, userID, role)
	return mapError("add member", err)
}

// ErrLastOwner is returned by a change that would leave an org without an
// owner.
var ErrLastOwner = errors.New("an org needs at least one owner")

// lockOwnership takes, for the rest of the transaction, the lock that every
// change of an org's owners takes: its org row (FOR NO KEY UPDATE, which
// leaves inserts referencing the org alone). Two changes then run one after
// the other, and the second counts the owners the first left; counting and
// then updating without it let two owners demote each other at once and
// leave the org with none.
func (s *Store) lockOwnership(ctx context.Context, orgID int64) error {
	_, err := s.q.Exec(ctx, `SELECT FROM orgs WHERE id = $1 FOR NO KEY UPDATE`, orgID)
	return err
}

// memberChange runs change on userID's membership in orgID under the
// ownership lock, after allow has vetted the membership as it stands under
// that lock. It refuses with ErrLastOwner when the change takes an owner
// away (demote says whether it does, given the member) and no other owner
// remains.
func (s *Store) memberChange(ctx context.Context, op string, orgID, userID int64, allow func(Member) error,
	demote func(Member) bool, change func(tx *Store, m Member) error) (Member, error) {
	var m Member
	err := s.InTx(ctx, func(tx *Store) error {
		if err := tx.lockOwnership(ctx, orgID); err != nil {
			return mapError(op, err)
		}
		var err error
		if m, err = tx.Membership(ctx, orgID, userID); err != nil {
			return err
		}
		if allow != nil {
			if err := allow(m); err != nil {
				return err
			}
		}
		if m.Role == access.Owner && demote(m) {
			n, err := tx.OwnerCount(ctx, orgID)
			if err != nil {
				return err
			}
			if n <= 1 {
				return fmt.Errorf("%s: %w", op, ErrLastOwner)
			}
		}
		return change(tx, m)
	})
	return m, err
}

// SetMemberRole changes userID's role in orgID and returns the membership as
// it was. allow, when not nil, vets that membership first (who may change
// whom) and may refuse with an error of its own. Returns ErrNotFound if
// userID is not a member, ErrLastOwner if the org would be left without an
// owner.
func (s *Store) SetMemberRole(ctx context.Context, orgID, userID int64, role access.Role, allow func(Member) error) (Member, error) {
	return s.memberChange(ctx, "set member role", orgID, userID, allow,
		func(Member) bool { return role != access.Owner },
		func(tx *Store, _ Member) error {
			_, err := tx.q.Exec(ctx, `UPDATE memberships SET role = $3 WHERE org_id = $1 AND user_id = $2`, orgID, userID, role)
			return mapError("set member role", err)
		})
}

// RemoveMember removes userID from orgID and, in the same transaction,
// revokes the API tokens they created in orgID: a token must not outlive
// its maker's access. It returns the membership as it was and how many
// tokens it revoked. allow is as for SetMemberRole. Returns ErrNotFound if
// userID is not a member, ErrLastOwner for the last owner.
func (s *Store) RemoveMember(ctx context.Context, orgID, userID int64, allow func(Member) error) (Member, int64, error) {
	var revoked int64
	m, err := s.memberChange(ctx, "remove member", orgID, userID, allow,
		func(Member) bool { return true },
		func(tx *Store, _ Member) error {
			if _, err := tx.q.Exec(ctx, `DELETE FROM memberships WHERE org_id = $1 AND user_id = $2`, orgID, userID); err != nil {
				return mapError("remove member", err)
			}
			var err error
			revoked, err = tx.revokeAPITokensBy(ctx, orgID, userID)
			return err
		})
	return m, revoked, err
}

// OwnerCount counts orgID's owners; the last owner can be neither demoted nor
// removed.
func (s *Store) OwnerCount(ctx context.Context, orgID int64) (int, error) {
	var n int
	err := s.q.QueryRow(ctx, `SELECT count(*) FROM memberships WHERE org_id = $1 AND role = 'owner'`, orgID).Scan(&n)
	return n, mapError("count owners", err)
}
