package store

import (
	"context"
	"time"

	"github.com/burnrate/burnrate/label"
)

// SignupTTL is how long the link that confirms a sign-up works.
const SignupTTL = 24 * time.Hour

// NewSignup is a sign-up waiting for its address to be confirmed: what the
// form said, the password hashed.
type NewSignup struct {
	Email        string
	Name         string
	OrgName      string
	PasswordHash string
}

// Signup is a waiting sign-up, as its confirmation page shows it.
type Signup struct {
	Email     string
	ExpiresAt time.Time
}

// CreateSignup keeps n until its link is used, and returns the link's
// secret (shown once, in the email; stored hashed).
func (s *Store) CreateSignup(ctx context.Context, n NewSignup) (string, error) {
	token, hash := newSecret()
	_, err := s.q.Exec(ctx, `
		INSERT INTO signups (email, name, org_name, password_hash, token_hash, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6)`,
		n.Email, label.Clean(n.Name), label.Clean(n.OrgName), n.PasswordHash, hash, time.Now().Add(SignupTTL))
	return token, mapError("create signup", err)
}

// SignupByToken returns the waiting sign-up token confirms. Returns
// ErrNotFound for an unknown, used or expired token.
func (s *Store) SignupByToken(ctx context.Context, token string) (Signup, error) {
	var su Signup
	err := s.q.QueryRow(ctx, `SELECT email, expires_at FROM signups WHERE token_hash = $1 AND expires_at > now()`,
		hashSecret(token)).Scan(&su.Email, &su.ExpiresAt)
	return su, mapError("get signup", err)
}

// ConfirmSignup uses up token and makes its account and first org, owned
// by it, in one transaction. Returns ErrNotFound for a token that is not
// open, and ErrConflict when the address got an account meanwhile.
func (s *Store) ConfirmSignup(ctx context.Context, token string) (User, Org, error) {
	var (
		u User
		o Org
	)
	err := s.InTx(ctx, func(tx *Store) error {
		var n NewSignup
		if err := tx.q.QueryRow(ctx, `
			DELETE FROM signups WHERE token_hash = $1 AND expires_at > now()
			RETURNING email, name, org_name, password_hash`, hashSecret(token)).Scan(&n.Email, &n.Name, &n.OrgName, &n.PasswordHash); err != nil {
			return mapError("confirm signup", err)
		}
		var err error
		if u, err = tx.CreateUser(ctx, n.Email, n.Name, n.PasswordHash); err != nil {
			return err
		}
		o, err = tx.CreateOrg(ctx, n.OrgName, u.ID)
		return err
	})
	return u, o, err
}

// DeleteExpiredSignups deletes sign-ups whose link no longer works, and
// says how many.
func (s *Store) DeleteExpiredSignups(ctx context.Context) (int64, error) {
	tag, err := s.q.Exec(ctx, `DELETE FROM signups WHERE expires_at <= now()`)
	return tag.RowsAffected(), mapError("delete expired signups", err)
}
