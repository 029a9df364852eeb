package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// IsSpotSKU is the purchase rule's spot test in Go, for its agreement with
// PurchaseSQL.
var IsSpotSKU = isSpotSKU

// DecodeNumeric is the fast binary numeric decoder, for its test.
var DecodeNumeric = decodeNumeric

// RawQueryRow runs sql on s's own connection or transaction, for tests that
// check what that connection sees.
func RawQueryRow(ctx context.Context, s *Store, sql string, args ...any) pgx.Row {
	return s.q.QueryRow(ctx, sql, args...)
}

// RawExec, RawQuery run sql on s's own querier; RawBatch sends it as a
// batch of one; RawConn hands fn the connection under s.
func RawExec(ctx context.Context, s *Store, sql string, args ...any) (pgconn.CommandTag, error) {
	return s.q.Exec(ctx, sql, args...)
}

func RawQuery(ctx context.Context, s *Store, sql string, args ...any) (pgx.Rows, error) {
	return s.q.Query(ctx, sql, args...)
}

func RawBatch(ctx context.Context, s *Store, sql string, args ...any) error {
	b := &pgx.Batch{}
	b.Queue(sql, args...)
	return s.q.SendBatch(ctx, b).Close()
}

func RawConn(s *Store, fn func(*pgx.Conn)) error {
	switch q := s.q.(type) {
	case *fencedConn:
		fn(q.conn.Conn())
	case pgx.Tx:
		fn(q.Conn())
	default:
		return errors.New("no connection of its own")
	}
	return nil
}

// CopyBothWays copies rows into two temporary tables shaped like charges,
// by the binary encoder imports use and by pgx.CopyFrom, and returns each
// table's rows as text, in line order.
func CopyBothWays(ctx context.Context, s *Store, orgID, importID int64, rows []Charge) (binary, viaPgx []string, err error) {
	err = s.InTx(ctx, func(tx *Store) error {
		for _, t := range []string{"copy_binary", "copy_pgx"} {
			if _, err := tx.q.Exec(ctx, `CREATE TEMP TABLE `+t+` (LIKE charges) ON COMMIT DROP`); err != nil {
				return err
			}
		}
		src := func() *copySource {
			return &copySource{orgID: orgID, importID: importID, src: &rowsSource{rows: rows}, periods: map[restatement]struct{}{}}
		}
		if _, err := tx.copyBinary(ctx, "copy_binary", src()); err != nil {
			return err
		}
		if _, err := tx.q.CopyFrom(ctx, pgx.Identifier{"copy_pgx"}, chargeColumns, src()); err != nil {
			return err
		}
		for t, out := range map[string]*[]string{"copy_binary": &binary, "copy_pgx": &viaPgx} {
			rs, err := tx.q.Query(ctx, `SELECT c::text FROM `+t+` c ORDER BY line`)
			if err != nil {
				return err
			}
			if *out, err = pgx.CollectRows(rs, pgx.RowTo[string]); err != nil {
				return err
			}
		}
		return nil
	})
	return binary, viaPgx, err
}

type rowsSource struct {
	rows []Charge
	i    int
}

func (s *rowsSource) Next() bool      { s.i++; return s.i <= len(s.rows) }
func (s *rowsSource) Charge() *Charge { return &s.rows[s.i-1] }
func (s *rowsSource) Err() error      { return nil }

// MonthToDateReads is monthToDateReads, as its added and subtracted days.
func MonthToDateReads(from, to time.Time) (plus, minus []time.Time) {
	p := monthToDateReads(from, to)
	return p.plus, p.minus
}

// SetGPURollupMaxKeys sets how many keys an import's GPU rollup holds in
// memory before it spills, and returns what restores it.
func SetGPURollupMaxKeys(n int) (restore func()) {
	old := gpuRollupMaxKeys
	gpuRollupMaxKeys = n
	return func() { gpuRollupMaxKeys = old }
}

// ForEachPlannedOnce is forEachPlannedOnce, for its test.
func ForEachPlannedOnce(ctx context.Context, s *Store, query string, args []any, scans []any, fn func() error) error {
	return s.forEachPlannedOnce(ctx, query, args, scans, fn)
}

// ReadDaySpend and ScanDaySpend read day rows from the wire and through
// Scan, for their test.
var ReadDaySpend, ScanDaySpend = readDaySpend, scanDaySpend

// Settings are the role and org s's connection runs as, and how many orgs
// it sees, for the pool's warming test.
func Settings(ctx context.Context, s *Store) (role, org string, orgs int, err error) {
	err = s.q.QueryRow(ctx, `SELECT current_setting('role'), coalesce(current_setting('burnrate.org_id', true), ''), (SELECT count(*) FROM orgs)`).
		Scan(&role, &org, &orgs)
	return role, org, orgs, err
}
