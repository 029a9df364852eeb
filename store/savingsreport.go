package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// SavingsReport is an org's stored savings report (savings.Stored): the
// report as JSON and the inputs it was computed from.
type SavingsReport struct {
	Inputs     string
	Report     []byte // JSON
	ComputedAt time.Time
}

// SavingsReport returns orgID's stored savings report, and false when it
// has none.
func (s *Store) SavingsReport(ctx context.Context, orgID int64) (SavingsReport, bool, error) {
	var r SavingsReport
	err := s.q.QueryRow(ctx, `SELECT inputs, report, computed_at FROM savings_reports WHERE org_id = $1`, orgID).
		Scan(&r.Inputs, &r.Report, &r.ComputedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return SavingsReport{}, false, nil
	}
	if err != nil {
		return SavingsReport{}, false, mapError("savings report", err)
	}
	return r, true, nil
}

// PutSavingsReport stores orgID's savings report (JSON) with the inputs it
// was computed from, read at asOf (SavingsSources' time), replacing the one
// stored unless that one's inputs were read later: of two computations
// that overlap, the one that saw the later bills stays. Returns
// ErrNotFound if the org is gone.
func (s *Store) PutSavingsReport(ctx context.Context, orgID int64, inputs string, report []byte, asOf time.Time) error {
	_, err := s.q.Exec(ctx, `
		INSERT INTO savings_reports (org_id, inputs, report, computed_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (org_id) DO UPDATE SET inputs = EXCLUDED.inputs, report = EXCLUDED.report, computed_at = EXCLUDED.computed_at
		WHERE savings_reports.computed_at <= EXCLUDED.computed_at`,
		orgID, inputs, report, asOf)
	if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) && pgErr.Code == "23503" {
		return fmt.Errorf("put savings report: %w", ErrNotFound)
	}
	return mapError("put savings report", err)
}

// SavingsSources fingerprints what orgID's savings findings are computed
// from besides the window and the shipped catalogs: the set of its
// succeeded imports (every charge and rollup row comes from one, and a
// removal takes its import out of the set) and the contents of its GPU and
// LLM price overrides. Any change to them changes the text. asOf is the
// database's time of the reading, for PutSavingsReport.
func (s *Store) SavingsSources(ctx context.Context, orgID int64) (sources string, asOf time.Time, err error) {
	var imports, gpu, llm string
	err = s.q.QueryRow(ctx, `
		SELECT (SELECT count(*) || '/' || coalesce(md5(string_agg(id::text, ',' ORDER BY id)), '')
				FROM imports WHERE org_id = $1 AND status = 'succeeded'),
			(SELECT count(*) || '/' || coalesce(md5(string_agg(o::text, ',' ORDER BY o.id)), '')
				FROM gpu_price_overrides o WHERE org_id = $1),
			(SELECT count(*) || '/' || coalesce(md5(string_agg(o::text, ',' ORDER BY o.id)), '')
				FROM llm_price_overrides o WHERE org_id = $1),
			clock_timestamp()`, orgID).Scan(&imports, &gpu, &llm, &asOf)
	return "imports=" + imports + " gpu-prices=" + gpu + " llm-prices=" + llm, asOf, mapError("savings sources", err)
}
