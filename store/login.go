package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrTooManyAttempts is returned when a log-in limit has been reached.
var ErrTooManyAttempts = errors.New("too many failed log-ins")

// LoginLimit allows Max failed log-ins counted against Key (an email, a
// client address) within a window.
type LoginLimit struct {
	Key string
	Max int
}

// LoginAttempt is a log-in attempt counted by BeginLoginAttempt. It counts
// as a failure unless LoginSucceeded takes it back.
type LoginAttempt struct {
	keys []string
	ids  []int64
}

// BeginLoginAttempt counts an attempt against every limit's key before its
// password is checked, and forgets failures older than window. Returns
// ErrTooManyAttempts, counting nothing, if any key already has its Max
// within the window.
//
// Counting first, under a lock per key held for the few statements this
// takes (never for the password check), is what makes the limit exact:
// concurrent attempts on one key queue here, and each sees the ones before.
func (s *Store) BeginLoginAttempt(ctx context.Context, window time.Duration, limits ...LoginLimit) (LoginAttempt, error) {
	a := LoginAttempt{keys: make([]string, len(limits))}
	for i, l := range limits {
		a.keys[i] = l.Key
	}
	err := s.InTx(ctx, func(tx *Store) error {
		// Taken in one order by every attempt, so two attempts sharing
		// keys cannot each hold one the other waits for.
		if _, err := tx.q.Exec(ctx, `
			SELECT pg_advisory_xact_lock(lock) FROM (
				SELECT DISTINCT hashtextextended('login_failures:' || key, 0) AS lock
				FROM unnest($1::text[]) AS key ORDER BY lock
			) AS locks`, a.keys); err != nil {
			return err
		}
		if _, err := tx.q.Exec(ctx, `DELETE FROM login_failures WHERE key = ANY($1) AND at < now() - $2::interval`, a.keys, window); err != nil {
			return err
		}
		rows, _ := tx.q.Query(ctx, `SELECT key, count(*) FROM login_failures WHERE key = ANY($1) GROUP BY key`, a.keys)
		counts := map[string]int{}
		var key string
		var n int
		if _, err := pgx.ForEachRow(rows, []any{&key, &n}, func() error {
			counts[key] = n
			return nil
		}); err != nil {
			return err
		}
		for _, l := range limits {
			if counts[l.Key] >= l.Max {
				return ErrTooManyAttempts
			}
		}
		rows, _ = tx.q.Query(ctx, `INSERT INTO login_failures (key) SELECT unnest($1::text[]) RETURNING id`, a.keys)
		var err error
		a.ids, err = pgx.CollectRows(rows, pgx.RowTo[int64])
		return err
	})
	return a, mapError("begin login attempt", err)
}

// LoginSucceeded takes back attempt, whose password was right, and forgets
// the earlier failures of clearKey (the account's email: its owner has just
// shown they know the password). Other keys keep their earlier failures.
func (s *Store) LoginSucceeded(ctx context.Context, attempt LoginAttempt, clearKey string) error {
	_, err := s.q.Exec(ctx, `
		DELETE FROM login_failures
		WHERE (key = ANY($1) AND id = ANY($2)) OR key = $3`, attempt.keys, attempt.ids, clearKey)
	return mapError("forget login attempt", err)
}

// ForgetLoginFailures deletes the failures counted more than olderThan ago,
// and says how many. Counting a key forgets its own old failures; this
// forgets those of keys that were never tried again. olderThan must be
// longer than every window the limits count over, or it lifts limits early.
func (s *Store) ForgetLoginFailures(ctx context.Context, olderThan time.Duration) (int64, error) {
	tag, err := s.q.Exec(ctx, `DELETE FROM login_failures WHERE at < now() - $1::interval`, olderThan)
	return tag.RowsAffected(), mapError("forget login failures", err)
}
