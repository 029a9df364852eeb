package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// SourceThrough is how far one source of an org's spend reaches: for a
// format (aws-cur, openai-costs, …), a provider, a billing account and the
// connection that pulled it (0: uploads), the newest data its succeeded
// imports delivered. See docs/data-model.md, "Freshness".
type SourceThrough struct {
	Source         string
	Provider       string
	BillingAccount string
	ConnectionID   int64
	// Through is the newest end of a charge period delivered (see
	// ImportExtent).
	Through time.Time
	// LastImport is when an import of it last finished.
	LastImport time.Time
	// FirstDay and LastDay are the first and last day its rows fall on.
	FirstDay, LastDay time.Time
}

// DataThrough lists how far each of orgID's sources reaches: the latest of
// its succeeded imports' extents, kept as they finish (source_through, a
// row per source, provider, billing account and connection).
func (s *Store) DataThrough(ctx context.Context, orgID int64) ([]SourceThrough, error) {
	rows, err := s.q.Query(ctx, `
		SELECT source, provider, billing_account, connection_id, data_through, last_import, first_day, last_day
		FROM source_through WHERE org_id = $1
		ORDER BY 1, 2, 3, 4`, orgID)
	if err != nil {
		return nil, mapError("data through", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (SourceThrough, error) {
		var t SourceThrough
		err := row.Scan(&t.Source, &t.Provider, &t.BillingAccount, &t.ConnectionID, &t.Through, &t.LastImport, &t.FirstDay, &t.LastDay)
		return t, err
	})
	return out, mapError("data through", err)
}
