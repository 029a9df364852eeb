package store

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/label"
)

// Import is one uploaded file and what became of it.
type Import struct {
	OrgID         int64
	ID            int64
	FileName      string
	SHA256        []byte
	SizeBytes     int64
	Source        string
	Status        string // processing, succeeded, failed
	Error         string
	ErrorLine     *int
	ErrorColumn   string
	Rows          int64
	ReplacedRows  int64
	SkippedRows   int64
	MergedRows    int64 // rows added into an earlier row of the same bucket
	ShortRows     int64 // records short of the header's optional last columns, read as empty
	CostBasis     CostBasis
	PeriodStart   *time.Time
	PeriodEnd     *time.Time
	Totals        map[string]decimal.Decimal // cost per currency, in CostBasis (billed when both)
	UploadedBy    int64
	UploaderEmail string
	Via           string // web, api, cli
	CreatedAt     time.Time
	FinishedAt    *time.Time
	RemovedAt     *time.Time // when it was removed (RemoveImport)
	RemoverEmail  string     // who removed it; empty for an API token or the command line
	RemovedVia    string     // web, api, cli
	// ConnectionID is the connection that pulled the file (0: an upload).
	ConnectionID int64
	// DataThrough is the newest end of a charge period the import's rows
	// delivered (nil: none; see ImportExtent).
	DataThrough *time.Time
}

// Import statuses.
const (
	ImportProcessing = "processing"
	ImportSucceeded  = "succeeded"
	ImportFailed     = "failed"
	ImportRemoved    = "removed" // by a person, its rows deleted (RemoveImport)
)

const importColumns = `i.org_id, i.id, i.file_name, i.sha256, i.size_bytes, i.source, i.status, i.error, i.error_line,
	i.error_column, i.rows, i.replaced_rows, i.skipped_rows, i.merged_rows, i.short_rows, i.cost_basis, i.period_start, i.period_end, i.totals,
	coalesce(i.uploaded_by, 0), coalesce(u.email, ''), i.via, i.created_at, i.finished_at, i.removed_at, coalesce(r.email, ''), i.removed_via,
	coalesce(i.connection_id, 0),
	(SELECT max(e.data_through) FROM import_extents e WHERE e.org_id = i.org_id AND e.import_id = i.id)`

const importFrom = ` FROM imports i LEFT JOIN users u ON u.id = i.uploaded_by LEFT JOIN users r ON r.id = i.removed_by `

func scanImport(row pgx.Row) (Import, error) {
	var i Import
	var totals map[string]string
	err := row.Scan(&i.OrgID, &i.ID, &i.FileName, &i.SHA256, &i.SizeBytes, &i.Source, &i.Status, &i.Error, &i.ErrorLine,
		&i.ErrorColumn, &i.Rows, &i.ReplacedRows, &i.SkippedRows, &i.MergedRows, &i.ShortRows, &i.CostBasis, &i.PeriodStart, &i.PeriodEnd, &totals,
		&i.UploadedBy, &i.UploaderEmail, &i.Via, &i.CreatedAt, &i.FinishedAt, &i.RemovedAt, &i.RemoverEmail, &i.RemovedVia,
		&i.ConnectionID, &i.DataThrough)
	if err != nil {
		return i, err
	}
	i.Totals = make(map[string]decimal.Decimal, len(totals))
	for cur, v := range totals {
		d, err := decimal.NewFromString(v)
		if err != nil {
			return i, err
		}
		i.Totals[cur] = d
	}
	return i, nil
}

// NewImport describes a file about to be imported. Its hash and size are
// known only once it has been read (FinishImport); a test may set them.
type NewImport struct {
	OrgID      int64
	FileName   string
	SHA256     []byte
	SizeBytes  int64
	Source     string
	UploadedBy int64 // 0 for API tokens and the CLI
	Via        string
	// ConnectionID is the connection pulling the file (0: an upload).
	ConnectionID int64
}

// CreateImport records a file as processing, so that it shows in the history
// while it is read. It is committed on its own, outside the import's data
// transaction, so that a failure can be recorded against it.
//
// The row names the connection's backend as its importer (claim_pid, see
// migrations/000035): while that backend lives, or until EndImport, no
// sweep fails it. So run the whole import on one connection (Fenced or
// Conn).
func (s *Store) CreateImport(ctx context.Context, n NewImport) (Import, error) {
	var id int64
	err := s.q.QueryRow(ctx, `
		INSERT INTO imports (org_id, file_name, sha256, size_bytes, source, status, uploaded_by, via, claim_pid, connection_id)
		VALUES ($1, $2, coalesce($3, ''::bytea), $4, $5, 'processing', NULLIF($6, 0), $7, pg_backend_pid(), NULLIF($8, 0))
		RETURNING id`,
		n.OrgID, label.Clean(n.FileName), n.SHA256, n.SizeBytes, n.Source, n.UploadedBy, n.Via, n.ConnectionID).Scan(&id)
	if err != nil {
		return Import{}, mapError("create import", err)
	}
	return s.Import(ctx, n.OrgID, id)
}

// EndImport lets go of the import's claim once its row says how it ended
// (FinishImport, FailImport or DeleteImport): an import still processing
// then is one its importer gave up on, and the next sweep fails it.
func (s *Store) EndImport(ctx context.Context, orgID, id int64) error {
	_, err := s.q.Exec(ctx, `UPDATE imports SET claim_pid = NULL WHERE org_id = $1 AND id = $2 AND status = 'processing'`, orgID, id)
	return mapError("end import", err)
}

// FailInterruptedImports marks failed, with msg, every import of every org
// that is still processing although its importer is gone: no database
// backend of the id its row names lives any more (or one that started
// after the import was made, and so only reuses the id), or it let go
// (EndImport). With the importer went the import's data transaction.
// Imports that another process (or this one) is still running are left
// alone, so any number of servers may sweep at any time. It returns the
// imports it failed.
//
// The backends are those of the server the sweep connects to, which is
// where every Burnrate process connects (the coordinator, with Citus). A
// backend whose start the sweep's role may not see (another login's) is
// taken to be alive.
func (s *Store) FailInterruptedImports(ctx context.Context, msg string) ([]Import, error) {
	type claim struct {
		org, id int64
		pid     *int32
		created time.Time
	}
	// The imports first, then the backends: a backend that claimed one of
	// them had started by then, so a live claimant is in the list.
	rows, err := s.q.Query(ctx, `SELECT org_id, id, claim_pid, created_at FROM imports WHERE status = 'processing'`)
	if err != nil {
		return nil, mapError("fail interrupted imports", err)
	}
	claims, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (claim, error) {
		var c claim
		err := row.Scan(&c.org, &c.id, &c.pid, &c.created)
		return c, err
	})
	if err != nil || len(claims) == 0 {
		return nil, mapError("fail interrupted imports", err)
	}
	rows, err = s.q.Query(ctx, `SELECT pid, backend_start FROM pg_stat_activity WHERE pid IS NOT NULL`)
	if err != nil {
		return nil, mapError("fail interrupted imports", err)
	}
	backends := map[int32]pgtype.Timestamptz{} // not Valid: a start the sweep may not see
	var pid int32
	var started pgtype.Timestamptz
	if _, err := pgx.ForEachRow(rows, []any{&pid, &started}, func() error {
		backends[pid] = started
		return nil
	}); err != nil {
		return nil, mapError("fail interrupted imports", err)
	}
	var failed []Import
	for _, c := range claims {
		if c.pid != nil {
			if start, ok := backends[*c.pid]; ok && (!start.Valid || !start.Time.After(c.created)) {
				continue // its importer's backend lives
			}
		}
		// The update re-checks the row: an importer that finished it since
		// (or a sweep elsewhere that failed it) leaves nothing to do.
		var id int64
		err := s.q.QueryRow(ctx, `
			UPDATE imports SET status = 'failed', error = $3, error_line = NULL, error_column = '', finished_at = now()
			WHERE org_id = $1 AND id = $2 AND status = 'processing' AND claim_pid IS NOT DISTINCT FROM $4
			RETURNING id`,
			c.org, c.id, msg, c.pid).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			continue
		}
		if err != nil {
			return failed, mapError("fail interrupted imports", err)
		}
		// Read back apart from the update: Citus plans no correlated
		// subquery (the import's data-through) over a CTE.
		imp, err := s.Import(ctx, c.org, id)
		if err != nil {
			return failed, err
		}
		failed = append(failed, imp)
	}
	slices.SortFunc(failed, func(a, b Import) int { return cmp.Or(cmp.Compare(a.OrgID, b.OrgID), cmp.Compare(a.ID, b.ID)) })
	return failed, nil
}

// Import returns one of orgID's imports. Returns ErrNotFound if there is none.
func (s *Store) Import(ctx context.Context, orgID, id int64) (Import, error) {
	i, err := scanImport(s.q.QueryRow(ctx, `SELECT `+importColumns+importFrom+`WHERE i.org_id = $1 AND i.id = $2`, orgID, id))
	return i, mapError("get import", err)
}

// ImportBySHA256 returns orgID's successful import of the file with this
// hash. Returns ErrNotFound if the file is new.
func (s *Store) ImportBySHA256(ctx context.Context, orgID int64, sha []byte) (Import, error) {
	i, err := scanImport(s.q.QueryRow(ctx, `SELECT `+importColumns+importFrom+`
		WHERE i.org_id = $1 AND i.sha256 = $2 AND i.status = 'succeeded'`, orgID, sha))
	return i, mapError("get import by sha256", err)
}

// Imports lists orgID's imports, newest first, at most limit.
func (s *Store) Imports(ctx context.Context, orgID int64, limit int) ([]Import, error) {
	rows, err := s.q.Query(ctx, `SELECT `+importColumns+importFrom+`
		WHERE i.org_id = $1 ORDER BY i.created_at DESC, i.id DESC LIMIT $2`, orgID, limit)
	if err != nil {
		return nil, mapError("list imports", err)
	}
	is, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Import, error) { return scanImport(row) })
	return is, mapError("list imports", err)
}

// ImportResult is what a successful import wrote.
type ImportResult struct {
	Source       string
	SHA256       []byte
	SizeBytes    int64
	Rows         int64
	ReplacedRows int64
	SkippedRows  int64
	MergedRows   int64
	ShortRows    int64
	CostBasis    CostBasis
	PeriodStart  *time.Time
	PeriodEnd    *time.Time
	Totals       map[string]decimal.Decimal
	// Extents are how far the rows reach, per provider and billing
	// account.
	Extents []ImportExtent
}

// ImportExtent is how far one import's rows of one provider and billing
// account reach: their first and last day in the org's time zone, and the
// newest end of a charge period they delivered (rows of at most a day;
// the latest start when all are longer). See docs/data-model.md,
// "Freshness".
type ImportExtent struct {
	Provider       string
	BillingAccount string
	FirstDay       time.Time
	LastDay        time.Time
	DataThrough    time.Time
}

// FinishImport marks an import succeeded with its result, extents included.
// Call it in the import's data transaction, so that the rows and the status
// commit together.
func (s *Store) FinishImport(ctx context.Context, orgID, id int64, r ImportResult) error {
	totals := make(map[string]string, len(r.Totals))
	for cur, v := range r.Totals {
		totals[cur] = v.String()
	}
	raw, err := json.Marshal(totals)
	if err != nil {
		return err
	}
	_, err = s.q.Exec(ctx, `
		UPDATE imports SET status = 'succeeded', source = $3, rows = $4, replaced_rows = $5, skipped_rows = $6,
			period_start = $7, period_end = $8, totals = $9, sha256 = $10, size_bytes = $11, merged_rows = $12,
			cost_basis = $13, short_rows = $14, finished_at = now()
		WHERE org_id = $1 AND id = $2`,
		orgID, id, r.Source, r.Rows, r.ReplacedRows, r.SkippedRows, r.PeriodStart, r.PeriodEnd, raw, r.SHA256, r.SizeBytes,
		r.MergedRows, string(r.CostBasis), r.ShortRows)
	if err != nil || len(r.Extents) == 0 {
		return mapError("finish import", err)
	}
	n := len(r.Extents)
	providers, accounts := make([]string, n), make([]string, n)
	firsts, lasts, throughs := make([]time.Time, n), make([]time.Time, n), make([]time.Time, n)
	for i, e := range r.Extents {
		providers[i], accounts[i], firsts[i], lasts[i], throughs[i] = e.Provider, e.BillingAccount, e.FirstDay, e.LastDay, e.DataThrough
	}
	_, err = s.q.Exec(ctx, `
		INSERT INTO import_extents (org_id, import_id, provider, billing_account, first_day, last_day, data_through)
		SELECT $1, $2, p, a, f, l, t FROM unnest($3::text[], $4::text[], $5::date[], $6::date[], $7::timestamptz[]) AS x(p, a, f, l, t)`,
		orgID, id, providers, accounts, firsts, lasts, throughs)
	if err != nil {
		return mapError("finish import: extents", err)
	}
	// How far each source reaches rises with the import (source_through).
	_, err = s.q.Exec(ctx, `
		INSERT INTO source_through AS s (org_id, source, provider, billing_account, connection_id, data_through, last_import, first_day, last_day)
		SELECT e.org_id, i.source, e.provider, e.billing_account, coalesce(i.connection_id, 0), e.data_through, coalesce(i.finished_at, i.created_at),
		       e.first_day, e.last_day
		FROM import_extents e JOIN imports i ON i.org_id = e.org_id AND i.id = e.import_id
		WHERE e.org_id = $1 AND e.import_id = $2
		ON CONFLICT (org_id, source, provider, billing_account, connection_id) DO UPDATE SET
			data_through = greatest(s.data_through, EXCLUDED.data_through), last_import = greatest(s.last_import, EXCLUDED.last_import),
			first_day = least(s.first_day, EXCLUDED.first_day), last_day = greatest(s.last_day, EXCLUDED.last_day)`, orgID, id)
	return mapError("finish import: source through", err)
}

// dropImportExtents deletes import id's extents and computes how far the
// sources it touched reach again from the extents of the org's other
// succeeded imports (source_through). Run it in the transaction that
// removes the import's rows.
func (s *Store) dropImportExtents(ctx context.Context, orgID, id int64) error {
	rows, err := s.q.Query(ctx, `
		DELETE FROM import_extents e USING imports i
		WHERE e.org_id = $1 AND e.import_id = $2 AND i.org_id = e.org_id AND i.id = e.import_id
		RETURNING i.source, e.provider, e.billing_account, coalesce(i.connection_id, 0)`, orgID, id)
	if err != nil {
		return mapError("delete import's extents", err)
	}
	var sources, providers, accounts []string
	var conns []int64
	for rows.Next() {
		var src, p, a string
		var c int64
		if err := rows.Scan(&src, &p, &a, &c); err != nil {
			rows.Close()
			return mapError("delete import's extents", err)
		}
		sources, providers, accounts, conns = append(sources, src), append(providers, p), append(accounts, a), append(conns, c)
	}
	if err := rows.Err(); err != nil || len(sources) == 0 {
		return mapError("delete import's extents", err)
	}
	_, err = s.q.Exec(ctx, `
		DELETE FROM source_through
		WHERE org_id = $1 AND (source, provider, billing_account, connection_id) IN
			(SELECT * FROM unnest($2::text[], $3::text[], $4::text[], $5::bigint[]))`, orgID, sources, providers, accounts, conns)
	if err != nil {
		return mapError("source through", err)
	}
	_, err = s.q.Exec(ctx, `
		INSERT INTO source_through (org_id, source, provider, billing_account, connection_id, data_through, last_import, first_day, last_day)
		SELECT e.org_id, i.source, e.provider, e.billing_account, coalesce(i.connection_id, 0),
		       max(e.data_through), coalesce(max(i.finished_at), max(i.created_at)), min(e.first_day), max(e.last_day)
		FROM import_extents e
		JOIN imports i ON i.org_id = e.org_id AND i.id = e.import_id
		WHERE e.org_id = $1 AND i.status = 'succeeded' AND i.id <> $6
		  AND (i.source, e.provider, e.billing_account, coalesce(i.connection_id, 0)) IN
			(SELECT * FROM unnest($2::text[], $3::text[], $4::text[], $5::bigint[]))
		GROUP BY 1, 2, 3, 4, 5`, orgID, sources, providers, accounts, conns, id)
	return mapError("source through", err)
}

// ErrImportRunning refuses to remove an import whose file is still being
// read: its rows are not written yet.
var ErrImportRunning = errors.New("the import is still running; remove it once it has finished")

// ErrImportRemoved refuses to remove an import twice.
var ErrImportRemoved = errors.New("the import was removed already")

// RemoveImport is a person (by; 0 for an API token or the command line)
// removing orgID's import id by way of via (web, api, cli), returning it
// as it is then (as it was, for a failed one). A succeeded import's
// rows leave charges and every rollup in one transaction, and it stays in
// the history as removed: its rows still count towards the month's quota.
// A failed import, which wrote nothing, leaves the history. Rows the import
// replaced in earlier imports (a restated period) are not brought back:
// they were deleted when it was written (docs/import-formats.md, "Removing
// an import").
func (s *Store) RemoveImport(ctx context.Context, orgID, id, by int64, via string) (Import, error) {
	var imp Import
	err := s.InTx(ctx, func(tx *Store) error {
		var err error
		// The row lock makes a second removal of the same import wait, then
		// see it removed, rather than delete twice.
		// The lock is taken apart from the read: Citus locks no row of a
		// query that joins users or reads a correlated subquery.
		if _, err := tx.q.Exec(ctx, `SELECT 1 FROM imports WHERE org_id = $1 AND id = $2 FOR UPDATE`, orgID, id); err != nil {
			return mapError("remove import", err)
		}
		imp, err = tx.Import(ctx, orgID, id)
		if err != nil {
			return err
		}
		switch imp.Status {
		case ImportProcessing:
			return ErrImportRunning
		case ImportRemoved:
			return ErrImportRemoved
		case ImportFailed:
			return tx.DeleteImport(ctx, orgID, id)
		}
		if err := tx.dropImportCharges(ctx, orgID, id); err != nil {
			return err
		}
		if _, err = tx.q.Exec(ctx, `UPDATE imports SET status = 'removed', removed_at = now(), removed_by = NULLIF($3, 0), removed_via = $4
			WHERE org_id = $1 AND id = $2`, orgID, id, by, via); err != nil {
			return mapError("remove import", err)
		}
		imp, err = tx.Import(ctx, orgID, id)
		return err
	})
	return imp, err
}

// DeleteImport removes an import and its rows, leaving no trace. Returns
// ErrNotFound if orgID has no such import.
func (s *Store) DeleteImport(ctx context.Context, orgID, id int64) error {
	return s.InTx(ctx, func(tx *Store) error {
		if err := tx.dropImportCharges(ctx, orgID, id); err != nil {
			return err
		}
		tag, err := tx.q.Exec(ctx, `DELETE FROM imports WHERE org_id = $1 AND id = $2`, orgID, id)
		if err == nil && tag.RowsAffected() == 0 {
			err = pgx.ErrNoRows
		}
		return mapError("delete import", err)
	})
}

// dropImportCharges deletes an import's charges with their rollups. charges
// has no foreign key to imports (see 000002), so its rows go explicitly.
func (s *Store) dropImportCharges(ctx context.Context, orgID, id int64) error {
	var tz string
	if err := s.q.QueryRow(ctx, `SELECT time_zone FROM orgs WHERE id = $1`, orgID).Scan(&tz); err != nil {
		return mapError("delete import's charges", err)
	}
	delta := newSpendDelta(nil)
	if _, err := s.deleteCharges(ctx, delta, orgID, tz, `c.import_id = $3`, id); err != nil {
		return mapError("delete import's charges", err)
	}
	// With its rows goes how far they reached.
	if err := s.dropImportExtents(ctx, orgID, id); err != nil {
		return err
	}
	return mapError("delete import's charges", delta.write(ctx, s.q, orgID))
}

// FailImport marks an import failed with the reason and, for a bad value,
// where it is (line 0 and column "" when not about one place).
// SetImportPreview keeps a failed import's header and first rows (JSON),
// for the column mapping page.
func (s *Store) SetImportPreview(ctx context.Context, orgID, id int64, preview []byte) error {
	_, err := s.q.Exec(ctx, `UPDATE imports SET preview = $3 WHERE org_id = $1 AND id = $2`, orgID, id, preview)
	return mapError("keep import preview", err)
}

// ImportPreview returns what SetImportPreview kept for an import. Returns
// ErrNotFound when the import has none.
func (s *Store) ImportPreview(ctx context.Context, orgID, id int64) ([]byte, error) {
	var raw []byte
	err := s.q.QueryRow(ctx, `SELECT preview FROM imports WHERE org_id = $1 AND id = $2 AND preview IS NOT NULL`, orgID, id).Scan(&raw)
	return raw, mapError("get import preview", err)
}

func (s *Store) FailImport(ctx context.Context, orgID, id int64, source, msg string, line int, column string) error {
	_, err := s.q.Exec(ctx, `
		UPDATE imports SET status = 'failed', source = CASE WHEN $3 = '' THEN source ELSE $3 END, error = $4,
			error_line = NULLIF($5, 0), error_column = $6, finished_at = now()
		WHERE org_id = $1 AND id = $2`, orgID, id, source, msg, line, column)
	return mapError("fail import", err)
}
