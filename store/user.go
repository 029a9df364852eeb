package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/burnrate/burnrate/label"
)

// User is a person who can log in. PasswordHash is a bcrypt hash.
type User struct {
	ID           int64
	Email        string
	Name         string
	PasswordHash string
	CreatedAt    time.Time
}

const userColumns = "id, email, name, password_hash, created_at"

func scanUser(row pgx.Row) (User, error) {
	var u User
	err := row.Scan(&u.ID, &u.Email, &u.Name, &u.PasswordHash, &u.CreatedAt)
	return u, err
}

// User returns the user with id. Returns ErrNotFound if there is none.
func (s *Store) User(ctx context.Context, id int64) (User, error) {
	u, err := scanUser(s.q.QueryRow(ctx, `SELECT `+userColumns+` FROM users WHERE id = $1`, id))
	return u, mapError("get user", err)
}

// UserByEmail finds a user by email, ignoring case. Returns ErrNotFound if
// there is none.
func (s *Store) UserByEmail(ctx context.Context, email string) (User, error) {
	u, err := scanUser(s.q.QueryRow(ctx, `SELECT `+userColumns+` FROM users WHERE lower(email) = lower($1)`, email))
	return u, mapError("get user by email", err)
}

// CreateUser adds a user. Returns ErrConflict if the email is taken.
func (s *Store) CreateUser(ctx context.Context, email, name, passwordHash string) (User, error) {
	u, err := scanUser(s.q.QueryRow(ctx, `
		INSERT INTO users (email, name, password_hash) VALUES ($1, $2, $3)
		RETURNING `+userColumns, email, label.Clean(name), passwordHash))
	return u, mapError("create user", err)
}

// SetPassword replaces a user's password hash. Returns ErrNotFound if
// there is no such user.
func (s *Store) SetPassword(ctx context.Context, userID int64, passwordHash string) error {
	tag, err := s.q.Exec(ctx, `UPDATE users SET password_hash = $2 WHERE id = $1`, userID, passwordHash)
	if err == nil && tag.RowsAffected() == 0 {
		err = ErrNotFound
	}
	return mapError("set password", err)
}
