package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/burnrate/burnrate/label"
)

// Connection is a provider API or export bucket an org pulls spend from on a
// schedule. Secret is the sealed credentials (never the credentials
// themselves); pages show SecretHint. Settings and State are JSON objects
// that package connect reads and writes.
type Connection struct {
	OrgID      int64
	ID         int64
	Name       string
	Kind       string
	Settings   json.RawMessage
	Secret     string
	SecretHint string
	State      json.RawMessage
	Paused     bool
	CreatedBy  int64
	CreatedAt  time.Time
	NextRunAt  time.Time
	LastRunAt  *time.Time
	LastStatus string // "", ok, failed
	LastError  string
	LastRows   int64
	// FailingSince is the first failed run of the current streak of
	// failed runs, Failures how many it has (nil and 0 after a run that
	// succeeded); LastFix is what a person should do about LastError.
	FailingSince *time.Time
	Failures     int
	LastFix      string
	// Notice is the problem the org's admins were last told of
	// (NoticeFailing, NoticeStalled; "" for none), NoticeSince when it
	// began.
	Notice      string
	NoticeSince *time.Time
}

// The problems a connection's admins are told of.
const (
	NoticeFailing = "failing"
	NoticeStalled = "stalled"
)

const connectionColumns = `org_id, id, name, kind, settings, secret, secret_hint, state, paused, coalesce(created_by, 0),
	created_at, next_run_at, last_run_at, last_status, last_error, last_rows, failing_since, failures, last_fix, notice, notice_since`

func scanConnection(row pgx.Row) (Connection, error) {
	var c Connection
	err := row.Scan(&c.OrgID, &c.ID, &c.Name, &c.Kind, &c.Settings, &c.Secret, &c.SecretHint, &c.State, &c.Paused, &c.CreatedBy,
		&c.CreatedAt, &c.NextRunAt, &c.LastRunAt, &c.LastStatus, &c.LastError, &c.LastRows, &c.FailingSince, &c.Failures,
		&c.LastFix, &c.Notice, &c.NoticeSince)
	return c, err
}

func collectConnections(rows pgx.Rows, op string) ([]Connection, error) {
	cs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Connection, error) { return scanConnection(row) })
	return cs, mapError(op, err)
}

// NewConnection is a connection about to be saved; Secret is already sealed.
type NewConnection struct {
	OrgID      int64
	Name       string
	Kind       string
	Settings   json.RawMessage
	Secret     string
	SecretHint string
	CreatedBy  int64
}

// CreateConnection saves a connection, due to run at once. Returns
// ErrConflict when the org has a connection of that name (any case).
func (s *Store) CreateConnection(ctx context.Context, n NewConnection) (Connection, error) {
	c, err := scanConnection(s.q.QueryRow(ctx, `
		INSERT INTO connections (org_id, name, kind, settings, secret, secret_hint, created_by)
		VALUES ($1, $2, $3, $4, $5, $6, NULLIF($7, 0))
		RETURNING `+connectionColumns, n.OrgID, label.Clean(n.Name), n.Kind, n.Settings, n.Secret, n.SecretHint, n.CreatedBy))
	return c, mapError("create connection", err)
}

// Connection returns orgID's connection id, or ErrNotFound.
func (s *Store) Connection(ctx context.Context, orgID, id int64) (Connection, error) {
	c, err := scanConnection(s.q.QueryRow(ctx, `SELECT `+connectionColumns+` FROM connections WHERE org_id = $1 AND id = $2`, orgID, id))
	return c, mapError("get connection", err)
}

// ConnectionByName returns orgID's connection named name (any case), or
// ErrNotFound.
func (s *Store) ConnectionByName(ctx context.Context, orgID int64, name string) (Connection, error) {
	c, err := scanConnection(s.q.QueryRow(ctx, `SELECT `+connectionColumns+` FROM connections WHERE org_id = $1 AND lower(name) = lower($2)`, orgID, name))
	return c, mapError("get connection", err)
}

// Connections lists orgID's connections by name.
func (s *Store) Connections(ctx context.Context, orgID int64) ([]Connection, error) {
	rows, err := s.q.Query(ctx, `SELECT `+connectionColumns+` FROM connections WHERE org_id = $1 ORDER BY lower(name)`, orgID)
	if err != nil {
		return nil, mapError("list connections", err)
	}
	return collectConnections(rows, "list connections")
}

// DueConnections lists the connections of every org that are not paused
// and due at now, oldest due first: the scheduler's pass. It reads across
// orgs, so it runs on the unfenced store.
func (s *Store) DueConnections(ctx context.Context, now time.Time) ([]Connection, error) {
	rows, err := s.q.Query(ctx, `SELECT `+connectionColumns+` FROM connections WHERE NOT paused AND next_run_at <= $1 ORDER BY next_run_at, org_id, id`, now)
	if err != nil {
		return nil, mapError("due connections", err)
	}
	return collectConnections(rows, "due connections")
}

// AllConnections lists every org's connections, for re-sealing their
// secrets under a new key.
func (s *Store) AllConnections(ctx context.Context) ([]Connection, error) {
	rows, err := s.q.Query(ctx, `SELECT `+connectionColumns+` FROM connections ORDER BY org_id, id`)
	if err != nil {
		return nil, mapError("all connections", err)
	}
	return collectConnections(rows, "all connections")
}

// SetConnectionSecret replaces a connection's sealed credentials.
func (s *Store) SetConnectionSecret(ctx context.Context, orgID, id int64, secret string) error {
	return s.execOne(ctx, "set connection secret", `UPDATE connections SET secret = $3 WHERE org_id = $1 AND id = $2`, orgID, id, secret)
}

// ReplaceConnectionSecret replaces a connection's sealed credentials and
// their hint, a person having pasted a new key, and makes it due at once.
func (s *Store) ReplaceConnectionSecret(ctx context.Context, orgID, id int64, secret, hint string) error {
	return s.execOne(ctx, "replace connection key", `
		UPDATE connections SET secret = $3, secret_hint = $4, next_run_at = least(next_run_at, now())
		WHERE org_id = $1 AND id = $2`, orgID, id, secret, hint)
}

// SetConnectionPaused pauses or resumes a connection. Resuming makes it due
// at once.
func (s *Store) SetConnectionPaused(ctx context.Context, orgID, id int64, paused bool) error {
	return s.execOne(ctx, "pause connection", `
		UPDATE connections SET paused = $3, next_run_at = CASE WHEN $3 THEN next_run_at ELSE least(next_run_at, now()) END
		WHERE org_id = $1 AND id = $2`, orgID, id, paused)
}

// SetConnectionNextRun sets when the scheduler next enqueues the connection.
func (s *Store) SetConnectionNextRun(ctx context.Context, orgID, id int64, at time.Time) error {
	return s.execOne(ctx, "schedule connection", `UPDATE connections SET next_run_at = $3 WHERE org_id = $1 AND id = $2`, orgID, id, at)
}

// DeleteConnection deletes a connection; what it imported stays.
func (s *Store) DeleteConnection(ctx context.Context, orgID, id int64) error {
	return s.execOne(ctx, "delete connection", `DELETE FROM connections WHERE org_id = $1 AND id = $2`, orgID, id)
}

// ConnectionRun is the outcome of one sync, for the Connections page.
type ConnectionRun struct {
	At        time.Time
	Status    string // ok, failed
	Error     string
	Fix       string // what a person should do about Error
	Rows      int64
	NextRunAt time.Time
	// State, when not nil, replaces the puller's state: set only by a run
	// whose imports all committed.
	State json.RawMessage
}

// RecordConnectionRun records the outcome of a sync, and the failure
// streak it starts, extends or ends, and returns the connection as it then
// is. Returns ErrNotFound when the connection was deleted meanwhile.
func (s *Store) RecordConnectionRun(ctx context.Context, orgID, id int64, r ConnectionRun) (Connection, error) {
	c, err := scanConnection(s.q.QueryRow(ctx, `
		UPDATE connections SET last_run_at = $3, last_status = $4, last_error = $5, last_rows = $6, next_run_at = $7,
			state = coalesce($8, state), last_fix = $9,
			failing_since = CASE WHEN $4 = 'failed' THEN coalesce(failing_since, $3) END,
			failures = CASE WHEN $4 = 'failed' THEN failures + 1 ELSE 0 END
		WHERE org_id = $1 AND id = $2
		RETURNING `+connectionColumns, orgID, id, r.At, r.Status, r.Error, r.Rows, r.NextRunAt, r.State, r.Fix))
	return c, mapError("record connection run", err)
}

// ConnectionForUpdate returns orgID's connection id, locked until the
// transaction ends: the one place its notices are decided at a time.
func (s *Store) ConnectionForUpdate(ctx context.Context, orgID, id int64) (Connection, error) {
	c, err := scanConnection(s.q.QueryRow(ctx, `SELECT `+connectionColumns+` FROM connections WHERE org_id = $1 AND id = $2 FOR UPDATE`, orgID, id))
	return c, mapError("lock connection", err)
}

// SetConnectionNotice records that the org's admins were told of problem
// (NoticeFailing, NoticeStalled; "" once told it recovered), which began
// at since.
func (s *Store) SetConnectionNotice(ctx context.Context, orgID, id int64, problem string, since *time.Time) error {
	return s.execOne(ctx, "set connection notice", `UPDATE connections SET notice = $3, notice_since = $4 WHERE org_id = $1 AND id = $2`,
		orgID, id, problem, since)
}

// execOne runs a statement that must touch one row: none is ErrNotFound.
func (s *Store) execOne(ctx context.Context, op, sql string, args ...any) error {
	tag, err := s.q.Exec(ctx, sql, args...)
	if err != nil {
		return mapError(op, err)
	}
	if tag.RowsAffected() == 0 {
		return mapError(op, pgx.ErrNoRows)
	}
	return nil
}
