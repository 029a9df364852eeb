package store

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// RawQueryRow runs sql on s's own connection or transaction, for tests that
// check what that connection sees.
func RawQueryRow(ctx context.Context, s *Store, sql string, args ...any) pgx.Row {
	return s.q.QueryRow(ctx, sql, args...)
}
