package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// Role is what a member may do in an org.
type Role string

// The roles, from most to least powerful.
const (
	RoleOwner  Role = "owner"
	RoleAdmin  Role = "admin"
	RoleMember Role = "member"
	RoleViewer Role = "viewer"
)

// Roles lists the roles from most to least powerful.
var Roles = []Role{RoleOwner, RoleAdmin, RoleMember, RoleViewer}

func (r Role) rank() int {
	switch r {
	case RoleOwner:
		return 4
	case RoleAdmin:
		return 3
	case RoleMember:
		return 2
	case RoleViewer:
		return 1
	}
	return 0
}

// AtLeast reports whether r is as powerful as min.
func (r Role) AtLeast(min Role) bool { return r.rank() >= min.rank() }

// Valid reports whether r is one of the roles.
func (r Role) Valid() bool { return r.rank() > 0 }

// CanWrite reports whether r may change anything (every role but viewer).
func (r Role) CanWrite() bool { return r.AtLeast(RoleMember) }

// CanAdmin reports whether r may manage members, tokens and settings.
func (r Role) CanAdmin() bool { return r.AtLeast(RoleAdmin) }

// Member is a user's membership in an org, with the user's details.
type Member struct {
	OrgID     int64
	UserID    int64
	Email     string
	Name      string
	Role      Role
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
func (s *Store) AddMember(ctx context.Context, orgID, userID int64, role Role) error {
	_, err := s.q.Exec(ctx, `INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, $3)`, orgID, userID, role)
	return mapError("add member", err)
}

// UpdateMemberRole changes a member's role. Returns ErrNotFound if userID is
// not a member of orgID.
func (s *Store) UpdateMemberRole(ctx context.Context, orgID, userID int64, role Role) error {
	tag, err := s.q.Exec(ctx, `UPDATE memberships SET role = $3 WHERE org_id = $1 AND user_id = $2`, orgID, userID, role)
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	return mapError("update member role", err)
}

// RemoveMember removes userID from orgID. Returns ErrNotFound if userID is
// not a member.
func (s *Store) RemoveMember(ctx context.Context, orgID, userID int64) error {
	tag, err := s.q.Exec(ctx, `DELETE FROM memberships WHERE org_id = $1 AND user_id = $2`, orgID, userID)
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	return mapError("remove member", err)
}

// OwnerCount counts orgID's owners; the last owner can be neither demoted nor
// removed.
func (s *Store) OwnerCount(ctx context.Context, orgID int64) (int, error) {
	var n int
	err := s.q.QueryRow(ctx, `SELECT count(*) FROM memberships WHERE org_id = $1 AND role = 'owner'`, orgID).Scan(&n)
	return n, mapError("count owners", err)
}
