// Package store holds all of Burnrate's SQL. One file per aggregate; every
// method takes a context first and, for tenant data, the org id, so that no
// query can reach another org's rows by accident.
package store

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	pgxdecimal "github.com/jackc/pgx-shopspring-decimal"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrNotFound is returned when a row does not exist, or belongs to another org.
var ErrNotFound = errors.New("not found")

// ErrConflict is returned when a write would break a uniqueness rule.
var ErrConflict = errors.New("already exists")

// querier is what both a pool, a single connection and a transaction offer.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error)
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
	Begin(ctx context.Context) (pgx.Tx, error)
}

// Store is the database. The zero value is not usable; see Open and New.
type Store struct {
	pool *pgxpool.Pool
	q    querier
	// fence is the org and user s's connection is fenced to (Fenced),
	// for Both's second connection; nil otherwise, and in a transaction.
	fence *fence
	// db is what the pool's connections found the database to be, shared
	// by every Store of the pool.
	db *database
}

// database is what a pool's connections find the database to be.
type database struct {
	// citus: the database has the citus extension (its tables may be
	// distributed; docs/operations.md, "Distributing by org").
	citus atomic.Bool
	// fenceTx makes a fenced connection set the fence in every
	// transaction, and run each statement outside one in a transaction of
	// its own (fencedConn): Citus needs it (Options.FenceInTransactions).
	fenceTx atomic.Bool
}

type fence struct{ org, user int64 }

// Answers reports whether a Postgres at url accepts a connection within
// three seconds.
func Answers(ctx context.Context, url string) bool {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return false
	}
	conn.Close(ctx)
	return true
}

// Open connects to the database at url, registering the decimal type so that
// numeric columns scan into decimal.Decimal.
func Open(ctx context.Context, url string) (*Store, error) {
	return OpenWith(ctx, url, Options{})
}

// Options are what a long-running process (burnrate serve, worker) asks of
// its pool beyond Open's; Open's are the zero value.
type Options struct {
	// MinConns connections are opened in the background at start and kept
	// open, unless the URL sets pool_min_conns; no more than the pool's
	// size. A pool that connects only when asked makes the first requests
	// that need several connections at once wait for them: connecting
	// costs tens of milliseconds, and a dashboard view that finds no
	// second connection at once reads its two halves one after the other.
	MinConns int32
	// Warm, when set, runs on every new connection before the pool hands
	// it out, as the role requests run as, fenced to no org (row-level
	// security shows it no rows). It asks the statements the connection
	// will serve most, so that Postgres reads the catalog and plans them
	// then and not in a user's request: a new connection's first
	// dashboard view took three times as long as the next. An error is
	// Warm's to report; the connection is used all the same.
	Warm func(ctx context.Context, st *Store)
	// FenceInTransactions sets the fence of a fenced connection (Fenced)
	// again in each of its transactions, with SET LOCAL, and runs each of
	// its statements outside a transaction in one of its own. It is on by
	// itself when the database has the citus extension: Citus passes a
	// transaction's SET LOCAL on to its workers, never a session's
	// settings (docs/operations.md, "Distributing by org"). On one
	// Postgres the session's fence is enough; this makes the same fence
	// for tests.
	FenceInTransactions bool
}

// OpenWith is Open with opts.
func OpenWith(ctx context.Context, url string, opts Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("store: parse database url: %w", err)
	}
	// A request holds one connection for its whole life (see Fenced), and an
	// upload may hold it for seconds: pgxpool's default of 4 on a small
	// machine would queue everything behind four uploads. pool_max_conns in
	// the URL still decides.
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = max(16, 4*int32(runtime.NumCPU()))
	}
	// After a database restart every pooled connection is dead, and pgxpool
	// checks (pings) only those idle for over a second before handing them
	// out: on a busy server each of the others would fail one request. The
	// server's goodbye (its FATAL message, or the connection's end) is
	// already waiting on such a connection, which costs one system call to
	// see.
	cfg.ShouldPing = func(_ context.Context, p pgxpool.ShouldPingParams) bool {
		return p.IdleDuration > time.Second || connHasInput(p.Conn.PgConn().Conn())
	}
	db := &database{}
	db.fenceTx.Store(opts.FenceInTransactions)
	if opts.MinConns > 0 && !strings.Contains(url, "pool_min_conns") {
		cfg.MinConns = min(opts.MinConns, cfg.MaxConns)
	}
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		RegisterTypes(c.TypeMap())
		// With Citus, a transaction's SET LOCAL reaches the workers it
		// uses (the fence, see fenceTxSQL); the row says the database has
		// Citus. A pool connects only as it needs: Fenced has a connection,
		// and so knows, before it fences it.
		tag, err := c.Exec(ctx, `SELECT set_config('citus.propagate_set_commands', 'local', false) FROM pg_extension WHERE extname = 'citus'`)
		if err != nil {
			return fmt.Errorf("store: set up a new connection: %w", err)
		}
		if tag.RowsAffected() > 0 {
			db.citus.Store(true)
			db.fenceTx.Store(true)
		}
		if opts.Warm == nil {
			return nil
		}
		return warm(ctx, c, db, opts.Warm)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: connect: %w", err)
	}
	return &Store{pool: pool, q: pool, db: db}, nil
}

// RegisterTypes makes numeric columns scan into and from decimal.Decimal,
// as Open's connections do; a pool made elsewhere (a benchmark's, with a
// tracer) registers them on each connection.
func RegisterTypes(m *pgtype.Map) {
	pgxdecimal.Register(m)
	m.RegisterType(&pgtype.Type{Name: "numeric", OID: pgtype.NumericOID, Codec: numericCodec{}})
}

// New wraps a pool. Pools not made by Open must register types (RegisterTypes).
func New(pool *pgxpool.Pool) *Store {
	return &Store{pool: pool, q: pool, db: &database{}}
}

// Close closes the pool.
func (s *Store) Close() { s.pool.Close() }

// Pool is the underlying pool, for health checks and benchmarks.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Ping checks that the database answers, on a connection of the pool.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	conn, err := s.acquireLive(ctx, func(c *pgxpool.Conn) error {
		return c.QueryRow(ctx, "SELECT 1").Scan(&one)
	})
	if err != nil {
		return fmt.Errorf("store: ping: %w", err)
	}
	conn.Release()
	return nil
}

// acquireLive acquires a connection and runs first on it. A pooled
// connection may still turn out dead when used, if the server dropped it
// just then; since first is the first thing run on it, nothing was done,
// and first is run again on another connection.
func (s *Store) acquireLive(ctx context.Context, first func(*pgxpool.Conn) error) (*pgxpool.Conn, error) {
	const attempts = 3
	for attempt := 1; ; attempt++ {
		conn, err := s.pool.Acquire(ctx)
		if err != nil {
			return nil, err
		}
		err = first(conn)
		if err == nil {
			return conn, nil
		}
		dead := conn.Conn().IsClosed()
		conn.Release()
		if !dead || attempt == attempts || ctx.Err() != nil {
			return nil, err
		}
	}
}

// InTx runs fn in one transaction: committed if fn returns nil, rolled back
// otherwise. Inside a transaction it nests as a savepoint.
func (s *Store) InTx(ctx context.Context, fn func(tx *Store) error) error {
	return pgx.BeginFunc(ctx, s.q, func(tx pgx.Tx) error {
		return fn(&Store{pool: s.pool, q: tx, db: s.db})
	})
}

// Conn runs fn on one connection: its own when s already has one (fenced,
// or in a transaction), else one held from the pool for fn's duration. Work
// that holds session state across statements, such as an import's lock,
// needs it.
func (s *Store) Conn(ctx context.Context, fn func(st *Store) error) error {
	if _, ok := s.q.(*pgxpool.Pool); !ok {
		return fn(s)
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("store: acquire: %w", err)
	}
	defer conn.Release()
	return fn(&Store{pool: s.pool, q: conn, db: s.db})
}

// Fenced runs fn on a connection scoped to one org by row-level security: as
// the role burnrate_app with burnrate.org_id set, so that even a query that
// forgot its org_id cannot see another org's rows. userID (0 for none) may
// also read its own memberships and their orgs. The connection is reset
// before it returns to the pool; one that cannot be reset is closed.
//
// fn must do all its database work through the Store it is given: asking
// the pool for a second connection while holding this one can exhaust the
// pool under load (Both takes a second one only when the pool can spare
// it at once).
func (s *Store) Fenced(ctx context.Context, orgID, userID int64, fn func(st *Store) error) error {
	f := &fence{org: orgID, user: userID}
	conn, err := s.acquireLive(ctx, f.set(ctx))
	if err != nil {
		return fmt.Errorf("store: fence org: %w", err)
	}
	defer unfence(conn)
	return fn(s.fenced(conn, f))
}

// fenced is the Store of conn, fenced to f.
func (s *Store) fenced(conn *pgxpool.Conn, f *fence) *Store {
	st := &Store{pool: s.pool, q: conn, fence: f, db: s.db}
	if s.db.fenceTx.Load() {
		st.q = &fencedConn{conn: conn}
	}
	return st
}

// set fences a connection to f's org and user.
func (f *fence) set(ctx context.Context) func(*pgxpool.Conn) error {
	return func(c *pgxpool.Conn) error { return f.apply(ctx, c.Conn()) }
}

// fenceSQL sets a connection's fence: the org ($1), the person ($2, none
// when null) and the orgs the person belongs to (the own_orgs policy,
// migrations/000036), read as the connecting role before the role
// changes. A prepared statement: each connection plans it once.
const fenceSQL = `SELECT set_config('burnrate.org_id', $1::bigint::text, false),
	set_config('burnrate.user_id', coalesce($2::bigint::text, ''), false),
	set_config('burnrate.user_org_ids',
		coalesce((SELECT array_agg(org_id ORDER BY org_id) FROM memberships WHERE user_id = $2::bigint)::text, '{}'), false)`

// apply fences c to f's org and user, in one round trip.
func (f *fence) apply(ctx context.Context, c *pgx.Conn) error {
	var user *int64
	if f.user != 0 {
		user = &f.user
	}
	b := &pgx.Batch{}
	b.Queue(fenceSQL, f.org, user)
	b.Queue(`SET ROLE burnrate_app`)
	return c.SendBatch(ctx, b).Close()
}

// unfenceSQL resets what fence.apply set.
const unfenceSQL = "RESET ROLE; RESET burnrate.org_id; RESET burnrate.user_id; RESET burnrate.user_org_ids"

// warm runs fn on a new connection c, fenced to org 0, which no org has
// (Options.Warm), and resets c after. A connection whose reset fails is
// not handed out.
func warm(ctx context.Context, c *pgx.Conn, db *database, fn func(context.Context, *Store)) error {
	if err := (&fence{}).apply(ctx, c); err != nil {
		return fmt.Errorf("store: warm a new connection: %w", err)
	}
	fn(ctx, &Store{q: c, db: db})
	if _, err := c.Exec(ctx, unfenceSQL); err != nil {
		return fmt.Errorf("store: warm a new connection: %w", err)
	}
	return nil
}

// unfence resets a fenced connection and returns it to the pool.
func unfence(conn *pgxpool.Conn) {
	// A fresh context: the request's may be cancelled already, and a
	// connection must never go back to the pool still fenced. Bounded,
	// so that a server that stopped answering cannot keep it forever.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := conn.Exec(ctx, unfenceSQL); err != nil {
		conn.Conn().Close(ctx)
	}
	conn.Release()
}

// spareWait bounds how long Both waits for a second connection while the
// pool has room for one (another request may take the last idle one
// first, or a new one may take longer to connect).
const spareWait = 2 * time.Millisecond

// Both runs a and b, b beside a on a second connection fenced as s is when
// the pool has one to spare at once: a dashboard's two largest reads then
// take the time of the longer, not their sum. Otherwise (the pool
// exhausted, or s in a transaction) b runs after a, on s. It never waits
// long for a connection: requests that each held one and waited for
// another could exhaust the pool (see Fenced). Unfenced, both run on the
// pool. The first error returned is a's, then b's.
func (s *Store) Both(ctx context.Context, a, b func(st *Store) error) error {
	var beside *Store
	switch {
	case s.q == querier(s.pool):
		beside = s
	case s.fence != nil:
		if conn := s.spare(ctx); conn != nil {
			defer unfence(conn)
			beside = s.fenced(conn, s.fence)
		}
	}
	if beside == nil {
		if err := a(s); err != nil {
			return err
		}
		return b(s)
	}
	type result struct {
		err    error
		panicV any
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			r.panicV = recover()
			done <- r
		}()
		r.err = b(beside)
	}()
	// b's connection goes back to the pool only after b has returned,
	// even when a panics.
	var panicA any
	errA := func() error {
		defer func() { panicA = recover() }()
		return a(s)
	}()
	r := <-done
	if panicA != nil {
		panic(panicA)
	}
	if r.panicV != nil {
		panic(r.panicV)
	}
	if errA != nil {
		return errA
	}
	return r.err
}

// spare is a second connection for Both, fenced as s is, or nil when the
// pool has none to spare at once. It takes an idle one, or a new one: a
// pool grows only as far as it is asked to, so the first ask may time
// out, and the connection it started joins the pool for the next.
func (s *Store) spare(ctx context.Context) *pgxpool.Conn {
	if st := s.pool.Stat(); st.AcquiredConns() >= st.MaxConns() {
		return nil
	}
	actx, cancel := context.WithTimeout(ctx, spareWait)
	conn, err := s.pool.Acquire(actx)
	cancel()
	if err != nil {
		return nil
	}
	if err := s.fence.set(ctx)(conn); err != nil {
		conn.Conn().Close(ctx) // its fence is unknown
		conn.Release()
		return nil
	}
	return conn
}

// Unfenced runs fn in a transaction (a savepoint, when s is in one) as the
// connecting role, even when s is fenced to an org, and hands fn the
// transaction. It is for libraries that keep tables of their own outside
// every org and write them in the caller's transaction: River's job insert,
// so that a job is enqueued exactly when the work that asks for it commits.
// The fence is restored for the rest of s's transaction. Row-level security
// does not check what fn does, so fn must not touch tenant tables.
func (s *Store) Unfenced(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return s.InTx(ctx, func(st *Store) error {
		tx := st.q.(pgx.Tx)
		var role string
		if err := tx.QueryRow(ctx, `SELECT current_setting('role')`).Scan(&role); err != nil {
			return fmt.Errorf("store: unfence: %w", err)
		}
		if role == "none" {
			return fn(tx)
		}
		if _, err := tx.Exec(ctx, `SET LOCAL ROLE NONE`); err != nil {
			return fmt.Errorf("store: unfence: %w", err)
		}
		if err := fn(tx); err != nil {
			return err
		}
		// SET LOCAL lasts to the end of the whole transaction, past this
		// savepoint: the role must be put back by hand, by SET (which Citus
		// passes on to its workers).
		if _, err := tx.Exec(ctx, `SET LOCAL ROLE `+pgx.Identifier{role}.Sanitize()); err != nil {
			return fmt.Errorf("store: fence again: %w", err)
		}
		return nil
	})
}

// mapError turns driver errors into the store's sentinels, prefixed by op.
func mapError(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%s: %w", op, ErrNotFound)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return fmt.Errorf("%s: %w", op, ErrConflict)
	}
	return fmt.Errorf("%s: %w", op, err)
}
