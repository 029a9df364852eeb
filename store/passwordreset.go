package store

import (
	"context"
	"time"
)

// PasswordResetTTL is how long a password reset link works.
const PasswordResetTTL = time.Hour

// CreatePasswordReset makes a reset link's secret for userID (shown once,
// in the email; stored hashed).
func (s *Store) CreatePasswordReset(ctx context.Context, userID int64) (string, error) {
	token, hash := newSecret()
	_, err := s.q.Exec(ctx, `
		INSERT INTO password_resets (user_id, token_hash, expires_at) VALUES ($1, $2, $3)`,
		userID, hash, time.Now().Add(PasswordResetTTL))
	return token, mapError("create password reset", err)
}

// PasswordResetUser returns the user an open reset token is for. Returns
// ErrNotFound for an unknown, used or expired token.
func (s *Store) PasswordResetUser(ctx context.Context, token string) (User, error) {
	u, err := scanUser(s.q.QueryRow(ctx, `
		SELECT `+userColumns+` FROM users WHERE id = (
			SELECT user_id FROM password_resets
			WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now())`, hashSecret(token)))
	return u, mapError("get password reset", err)
}

// ResetPassword uses up an open reset token and, in one transaction, sets
// its user's password hash, ends every session the user has (whoever had
// the old password is logged out) and uses up the user's other reset
// links. Returns the user, or ErrNotFound if the token is not open: two
// resets racing with one token cannot both succeed.
func (s *Store) ResetPassword(ctx context.Context, token, passwordHash string) (User, error) {
	var u User
	err := s.InTx(ctx, func(tx *Store) error {
		var userID int64
		if err := tx.q.QueryRow(ctx, `
			UPDATE password_resets SET used_at = now()
			WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()
			RETURNING user_id`, hashSecret(token)).Scan(&userID); err != nil {
			return err
		}
		if err := tx.SetPassword(ctx, userID, passwordHash); err != nil {
			return err
		}
		if _, err := tx.DeleteUserSessions(ctx, userID, 0); err != nil {
			return err
		}
		if err := tx.DeletePasswordResets(ctx, userID); err != nil {
			return err
		}
		var err error
		u, err = tx.User(ctx, userID)
		return err
	})
	return u, mapError("reset password", err)
}

// DeletePasswordResets uses up every reset link of userID: after a
// password change, an older link must not change it again.
func (s *Store) DeletePasswordResets(ctx context.Context, userID int64) error {
	_, err := s.q.Exec(ctx, `DELETE FROM password_resets WHERE user_id = $1`, userID)
	return mapError("delete password resets", err)
}

// DeleteExpiredPasswordResets deletes reset links that no longer work, and
// says how many.
func (s *Store) DeleteExpiredPasswordResets(ctx context.Context) (int64, error) {
	tag, err := s.q.Exec(ctx, `DELETE FROM password_resets WHERE expires_at <= now() OR used_at IS NOT NULL`)
	return tag.RowsAffected(), mapError("delete expired password resets", err)
}
