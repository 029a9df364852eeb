package store

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
)

// ModelSubstitute is one of an org's edits of the break-even's tier table:
// the open model its API model is compared with, or "none".
type ModelSubstitute struct {
	APIModel     string
	OpenModel    string
	UpdatedEmail string
	UpdatedAt    time.Time
}

// ModelSubstitutes lists orgID's tier table edits by API model.
func (s *Store) ModelSubstitutes(ctx context.Context, orgID int64) ([]ModelSubstitute, error) {
	rows, err := s.q.Query(ctx, `
		SELECT m.api_model, m.open_model, coalesce(u.email, ''), m.updated_at
		FROM model_substitutes m LEFT JOIN users u ON u.id = m.updated_by
		WHERE m.org_id = $1 ORDER BY m.api_model`, orgID)
	if err != nil {
		return nil, mapError("list model substitutes", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ModelSubstitute, error) {
		var m ModelSubstitute
		err := row.Scan(&m.APIModel, &m.OpenModel, &m.UpdatedEmail, &m.UpdatedAt)
		return m, err
	})
	return out, mapError("list model substitutes", err)
}

// SetModelSubstitutes replaces orgID's tier table edits with subs (API
// model → open model or "none"), in one transaction; an empty subs resets
// the org to the shipped table.
func (s *Store) SetModelSubstitutes(ctx context.Context, orgID, userID int64, subs map[string]string) error {
	return s.InTx(ctx, func(tx *Store) error {
		if _, err := tx.q.Exec(ctx, `DELETE FROM model_substitutes WHERE org_id = $1`, orgID); err != nil {
			return mapError("set model substitutes", err)
		}
		keys := slices.Sorted(maps.Keys(subs))
		opens := make([]string, len(keys))
		for i, k := range keys {
			opens[i] = subs[k]
		}
		_, err := tx.q.Exec(ctx, `
			INSERT INTO model_substitutes (org_id, api_model, open_model, updated_by)
			SELECT $1, a, o, nullif($4, 0) FROM unnest($2::text[], $3::text[]) AS t(a, o)`, orgID, keys, opens, userID)
		return mapError("set model substitutes", err)
	})
}
