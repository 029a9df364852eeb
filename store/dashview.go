package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// DashboardView returns the dashboard view (its URL query) userID last
// looked at in orgID, or "" when there is none.
func (s *Store) DashboardView(ctx context.Context, orgID, userID int64) (string, error) {
	var q string
	err := s.q.QueryRow(ctx, `SELECT query FROM dashboard_views WHERE org_id = $1 AND user_id = $2`, orgID, userID).Scan(&q)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return q, mapError("dashboard view", err)
}

// DashboardState is what the dashboard reads before it lays out a view.
type DashboardState struct {
	HasSpend bool   // the org has rolled-up spend
	Version  string // SpendVersion
	Saved    string // DashboardView: the view the user last looked at, or ""
}

// DashboardState reads orgID's DashboardState for userID (no saved view
// when userID is 0) in one round trip: every dashboard request, the cached
// ones too, asks all three first.
func (s *Store) DashboardState(ctx context.Context, orgID, userID int64) (DashboardState, error) {
	var st DashboardState
	var imports, budgets string
	err := s.q.QueryRow(ctx, `
		SELECT EXISTS (SELECT 1 FROM daily_spend WHERE org_id = $1),
			`+spendVersionColumns+`,
			coalesce((SELECT query FROM dashboard_views WHERE org_id = $1 AND user_id = $2), '')`,
		orgID, userID).Scan(&st.HasSpend, &imports, &budgets, &st.Saved)
	st.Version = imports + "|" + budgets
	return st, mapError("dashboard state", err)
}

// SaveDashboardView remembers query as the view userID last looked at in
// orgID; saving the same view again writes nothing. Its commit does not
// wait for the write-ahead log to reach disk (synchronous_commit off, for
// this statement's transaction only): every view opened writes one, and a
// crash just after can lose no more than which view was open last, while
// waiting for the flush is a large part of a view's time on a busy disk.
func (s *Store) SaveDashboardView(ctx context.Context, orgID, userID int64, query string) error {
	_, err := s.q.Exec(ctx, `
		INSERT INTO dashboard_views (org_id, user_id, query, updated_at)
		SELECT $1, $2, $3, now() FROM (SELECT set_config('synchronous_commit', 'off', true)) AS async
		ON CONFLICT (org_id, user_id) DO UPDATE SET query = excluded.query, updated_at = excluded.updated_at
		WHERE dashboard_views.query IS DISTINCT FROM excluded.query`, orgID, userID, query)
	return mapError("save dashboard view", err)
}

// SpendSpan returns the first and last day orgID has rolled-up spend on;
// ok is false when it has none.
func (s *Store) SpendSpan(ctx context.Context, orgID int64) (first, last time.Time, ok bool, err error) {
	var f, l *time.Time
	err = s.q.QueryRow(ctx, `SELECT min(day), max(day) FROM daily_spend WHERE org_id = $1`, orgID).Scan(&f, &l)
	if err != nil || f == nil || l == nil {
		return first, last, false, mapError("spend span", err)
	}
	return f.UTC(), l.UTC(), true, nil
}
