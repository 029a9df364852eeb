package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// SetUploadProgress records that the upload key of orgID has read rows rows.
func (s *Store) SetUploadProgress(ctx context.Context, orgID int64, key string, rows int64) error {
	_, err := s.q.Exec(ctx, `
		INSERT INTO upload_progress (org_id, key, rows, updated_at) VALUES ($1, $2, $3, now())
		ON CONFLICT (org_id, key) DO UPDATE SET rows = excluded.rows, updated_at = excluded.updated_at`,
		orgID, key, rows)
	return mapError("set upload progress", err)
}

// UploadProgress returns the rows the upload key of orgID has read, and
// false when no such upload is running.
func (s *Store) UploadProgress(ctx context.Context, orgID int64, key string) (int64, bool, error) {
	var rows int64
	err := s.q.QueryRow(ctx, `SELECT rows FROM upload_progress WHERE org_id = $1 AND key = $2`, orgID, key).Scan(&rows)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, mapError("upload progress", err)
	}
	return rows, true, nil
}

// ClearUploadProgress forgets the upload key of orgID, once it has ended.
func (s *Store) ClearUploadProgress(ctx context.Context, orgID int64, key string) error {
	_, err := s.q.Exec(ctx, `DELETE FROM upload_progress WHERE org_id = $1 AND key = $2`, orgID, key)
	return mapError("clear upload progress", err)
}

// DeleteStaleUploadProgress forgets uploads not heard of for longer than
// age: those of a process that died mid-file.
func (s *Store) DeleteStaleUploadProgress(ctx context.Context, age time.Duration) (int64, error) {
	tag, err := s.q.Exec(ctx, `DELETE FROM upload_progress WHERE updated_at < now() - make_interval(secs => $1)`, age.Seconds())
	return tag.RowsAffected(), mapError("delete stale upload progress", err)
}
