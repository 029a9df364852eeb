package store

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
)

// fenceTxSQL sets the fence a session has (Fenced) again for the current
// transaction alone, with SET LOCAL (burnrate_fence, migrations/000036).
// Citus passes SET LOCAL, and nothing else of a session's settings, on to
// the workers a transaction uses: a fenced statement must run in a
// transaction that set the fence, or the policies on the workers' shards
// see no org and hide every row. See docs/operations.md, "Distributing by
// org".
const fenceTxSQL = `SELECT burnrate_fence()`

// fencedConn is the querier of a connection fenced to an org when the
// fence must be set in every transaction (database.fenceTx): a transaction it
// begins sets the fence first, in the same round trip; a statement outside
// a transaction runs in one of its own that does, begun, fenced, run and
// committed in one round trip. Either way a statement that fails leaves no
// transaction open. Inside a transaction (InTx), queries go to the
// transaction as usual.
type fencedConn struct{ conn *pgxpool.Conn }

// stmtBatch is sql in a transaction of its own that sets the fence first.
func stmtBatch(sql string, args []any) *pgx.Batch {
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(fenceTxSQL)
	b.Queue(sql, args...)
	b.Queue("COMMIT")
	return b
}

// started reads the results of a stmtBatch's BEGIN and fence.
func started(br pgx.BatchResults) error {
	for range 2 {
		if _, err := br.Exec(); err != nil {
			return err
		}
	}
	return nil
}

// end finishes a stmtBatch whose statement was read with result err: it
// reads the COMMIT's result, closes br and, should the transaction still be
// open (the statement failed, and Postgres skipped the COMMIT), rolls it
// back.
func (c *fencedConn) end(ctx context.Context, br pgx.BatchResults, err error) error {
	if err == nil {
		_, err = br.Exec()
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if c.conn.Conn().PgConn().TxStatus() != 'I' && !c.conn.Conn().IsClosed() {
		if _, rerr := c.conn.Exec(context.WithoutCancel(ctx), "ROLLBACK"); err == nil {
			err = rerr
		}
	}
	return err
}

func (c *fencedConn) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	br := c.conn.SendBatch(ctx, stmtBatch(sql, args))
	err := started(br)
	var tag pgconn.CommandTag
	if err == nil {
		tag, err = br.Exec()
	}
	return tag, c.end(ctx, br, err)
}

func (c *fencedConn) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	br := c.conn.SendBatch(ctx, stmtBatch(sql, args))
	if err := started(br); err != nil {
		return nil, c.end(ctx, br, err)
	}
	rows, err := br.Query()
	if err != nil {
		rows.Close()
		return nil, c.end(ctx, br, err)
	}
	return &fencedRows{Rows: rows, c: c, ctx: ctx, br: br}, nil
}

func (c *fencedConn) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	rows, err := c.Query(ctx, sql, args...)
	return &fencedRow{rows: rows, err: err}
}

// SendBatch runs b in a fenced transaction of its own, committed when the
// results are closed.
func (c *fencedConn) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	tx, err := c.Begin(ctx)
	if err != nil {
		return pgx.FailedBatchResults(b, err)
	}
	return &txBatchResults{BatchResults: tx.SendBatch(ctx, b), tx: tx, ctx: ctx}
}

// CopyFrom is refused under row-level security anyway: imports copy in a
// transaction, as the connecting role (WriteCharges).
func (c *fencedConn) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	return c.conn.CopyFrom(ctx, table, columns, src)
}

// Begin begins a transaction that sets the fence, in one round trip.
func (c *fencedConn) Begin(ctx context.Context) (pgx.Tx, error) {
	b := &pgx.Batch{}
	b.BeginTx(pgx.TxOptions{})
	b.Queue(fenceTxSQL)
	br := c.conn.SendBatch(ctx, b)
	tx := br.Tx()
	if err := br.Close(); err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return nil, err
	}
	return tx, nil
}

// fencedRows are a stmtBatch's rows: once read or closed, the transaction
// is committed, or rolled back after an error, which Err then reports.
type fencedRows struct {
	pgx.Rows
	c    *fencedConn
	ctx  context.Context
	br   pgx.BatchResults
	done bool
	err  error
}

func (r *fencedRows) Next() bool {
	if r.done {
		return false
	}
	if r.Rows.Next() {
		return true
	}
	r.finish()
	return false
}

func (r *fencedRows) finish() {
	if r.done {
		return
	}
	r.done = true
	r.Rows.Close()
	r.err = r.c.end(r.ctx, r.br, r.Rows.Err())
}

func (r *fencedRows) Close() { r.finish() }

func (r *fencedRows) Err() error {
	if r.done {
		return r.err
	}
	return r.Rows.Err()
}

// fencedRow is QueryRow's row, read as pgx reads one.
type fencedRow struct {
	rows pgx.Rows
	err  error
}

func (r *fencedRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	for _, d := range dest {
		if _, ok := d.(*pgtype.DriverBytes); ok {
			r.rows.Close()
			return errors.New("cannot scan into *pgtype.DriverBytes from QueryRow")
		}
	}
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		r.rows.Close()
		return err
	}
	r.rows.Close()
	return r.rows.Err()
}

// txBatchResults commits its transaction when closed, or rolls it back
// after an error.
type txBatchResults struct {
	pgx.BatchResults
	tx   pgx.Tx
	ctx  context.Context
	done bool
	err  error
}

func (b *txBatchResults) Close() error {
	if b.done {
		return b.err
	}
	b.done = true
	if b.err = b.BatchResults.Close(); b.err != nil {
		_ = b.tx.Rollback(context.WithoutCancel(b.ctx))
		return b.err
	}
	b.err = b.tx.Commit(b.ctx)
	return b.err
}
