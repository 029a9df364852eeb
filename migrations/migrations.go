// Package migrations holds Burnrate's schema: the app's tables as numbered
// SQL files, embedded in the binary and applied with golang-migrate, and the
// job queue's tables, which River migrates itself (rivermigrate). Up, Down
// and StatusOf treat the two as one schema, so that 'burnrate migrate' and
// RUN_MIGRATIONS never leave one behind the other.
package migrations

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"

	"github.com/golang-migrate/migrate/v4"
	_ "github.com/golang-migrate/migrate/v4/database/pgx/v5" // registers pgx5://
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// FS holds the NNNNNN_name.up.sql / .down.sql files.
//
//go:embed *.sql
var FS embed.FS

// New returns a migrator for the app's own migrations (not River's) on the
// Postgres database at databaseURL. Close it when done.
func New(databaseURL string) (*migrate.Migrate, error) {
	src, err := iofs.New(FS, ".")
	if err != nil {
		return nil, fmt.Errorf("migrations: open embedded files: %w", err)
	}
	m, err := migrate.NewWithSourceInstance("iofs", src, pgx5URL(databaseURL))
	if err != nil {
		return nil, fmt.Errorf("migrations: connect: %w", err)
	}
	return m, nil
}

// Up applies every migration not yet applied: the app's, then River's. Being
// up to date is not an error. Several processes may run it at once; each
// part is applied under an advisory lock, so they take turns.
func Up(databaseURL string) error {
	m, err := New(databaseURL)
	if err != nil {
		return err
	}
	defer m.Close()
	if err := m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("migrations: up: %w", err)
	}
	return withRiver(context.Background(), databaseURL, func(ctx context.Context, rm *rivermigrate.Migrator[pgx.Tx], conn *pgxpool.Conn) error {
		if _, err := rm.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
			return fmt.Errorf("migrations: river up: %w", err)
		}
		if _, err := conn.Exec(ctx, fenceRiver); err != nil {
			return fmt.Errorf("migrations: keep river's tables from burnrate_app: %w", err)
		}
		return nil
	})
}

// Down undoes the app's last n migrations. When that undoes the first one,
// so that none of the app's schema is left, River's tables are removed too
// (queued jobs with them): a database migrated all the way down holds
// nothing of Burnrate.
func Down(databaseURL string, n int) error {
	m, err := New(databaseURL)
	if err != nil {
		return err
	}
	defer m.Close()
	if err := m.Steps(-n); err != nil {
		return fmt.Errorf("migrations: down %d: %w", n, err)
	}
	if _, _, err := m.Version(); !errors.Is(err, migrate.ErrNilVersion) {
		return err
	}
	return withRiver(context.Background(), databaseURL, func(ctx context.Context, rm *rivermigrate.Migrator[pgx.Tx], _ *pgxpool.Conn) error {
		if _, err := rm.Migrate(ctx, rivermigrate.DirectionDown, &rivermigrate.MigrateOpts{TargetVersion: -1}); err != nil {
			return fmt.Errorf("migrations: river down: %w", err)
		}
		return nil
	})
}

// Status is where a database's schema stands.
type Status struct {
	// Version is the app's last applied migration (0 and None when there
	// is none); Dirty is set when one failed half-way.
	Version uint
	None    bool
	Dirty   bool
	// River is the version of River's schema (0: none of it).
	River int
}

// Current reports whether the schema is exactly what this binary's
// migrations make.
func (s Status) Current() bool {
	latest, err := Latest()
	return err == nil && !s.None && !s.Dirty && s.Version == latest && s.River == RiverLatest()
}

// StatusOf reads where the schema of the database at databaseURL stands.
func StatusOf(databaseURL string) (Status, error) {
	m, err := New(databaseURL)
	if err != nil {
		return Status{}, err
	}
	defer m.Close()
	var st Status
	st.Version, st.Dirty, err = m.Version()
	if errors.Is(err, migrate.ErrNilVersion) {
		st.None, err = true, nil
	}
	if err != nil {
		return Status{}, fmt.Errorf("migrations: version: %w", err)
	}
	ctx := context.Background()
	pool, err := smallPool(ctx, databaseURL)
	if err != nil {
		return Status{}, err
	}
	defer pool.Close()
	rm, err := riverMigrator(pool)
	if err != nil {
		return Status{}, err
	}
	applied, err := rm.ExistingVersions(ctx)
	if err != nil {
		return Status{}, fmt.Errorf("migrations: river version: %w", err)
	}
	for _, v := range applied {
		st.River = max(st.River, v.Version)
	}
	return st, nil
}

// Latest is the version of the newest embedded migration.
func Latest() (uint, error) {
	src, err := iofs.New(FS, ".")
	if err != nil {
		return 0, err
	}
	defer src.Close()
	v, err := src.First()
	if err != nil {
		return 0, err
	}
	for {
		next, err := src.Next(v)
		if err != nil {
			return v, nil
		}
		v = next
	}
}

// RiverLatest is the version of the newest migration of River's schema that
// this binary carries.
func RiverLatest() int {
	rm, err := riverMigrator(nil)
	if err != nil {
		return 0
	}
	all := rm.AllVersions()
	if len(all) == 0 {
		return 0
	}
	return all[len(all)-1].Version
}

// Hash identifies the schema Up makes: the app's migrations, River's, and
// what Up does around them. Test databases cloned from a migrated template
// use it to know when the template is stale.
func Hash() (string, error) {
	h := sha256.New()
	err := fs.WalkDir(FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(FS, path)
		fmt.Fprintf(h, "%s\x00%d\x00", path, len(b))
		h.Write(b)
		return err
	})
	if err != nil {
		return "", err
	}
	rm, err := riverMigrator(nil)
	if err != nil {
		return "", err
	}
	for _, v := range rm.AllVersions() {
		fmt.Fprintf(h, "river %d\x00%s\x00%s\x00", v.Version, v.SQLUp, v.SQLDown)
	}
	h.Write([]byte(fenceRiver))
	return hex.EncodeToString(h.Sum(nil)), nil
}

// fenceRiver takes from burnrate_app what 000001's default privileges gave
// it on River's tables. River's tables are not tenant tables: they hold every
// org's jobs, have no org_id to fence by, and River works them on the
// connecting (owner) role. A request fenced to one org has no business
// reading them; it enqueues through store.Store.Unfenced, which switches
// back to the owner for the insert.
const fenceRiver = `
DO $$
DECLARE
    rel record;
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'burnrate_app') THEN
        RETURN;
    END IF;
    FOR rel IN
        SELECT c.oid::regclass AS name, c.relkind
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = current_schema() AND c.relname LIKE 'river\_%' AND c.relkind IN ('r', 'p', 'S')
    LOOP
        IF rel.relkind = 'S' THEN
            EXECUTE format('REVOKE ALL ON SEQUENCE %s FROM burnrate_app', rel.name);
        ELSE
            EXECUTE format('REVOKE ALL ON TABLE %s FROM burnrate_app', rel.name);
        END IF;
    END LOOP;
END
$$`

// riverLock serialises River's migrations between processes (golang-migrate
// takes a lock of its own; rivermigrate takes none). The number is
// arbitrary: the first 8 bytes of sha256("burnrate river migrations").
const riverLock = int64(0x2c1f0c6d3b7e5a91)

// withRiver runs fn with River's migrator on the database at databaseURL,
// holding riverLock on conn.
func withRiver(ctx context.Context, databaseURL string, fn func(context.Context, *rivermigrate.Migrator[pgx.Tx], *pgxpool.Conn) error) error {
	pool, err := smallPool(ctx, databaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	rm, err := riverMigrator(pool)
	if err != nil {
		return err
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrations: connect: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, riverLock); err != nil {
		return fmt.Errorf("migrations: lock: %w", err)
	}
	// The lock is the session's: released here, or with the connection.
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, riverLock) //nolint:errcheck
	return fn(ctx, rm, conn)
}

// smallPool opens the few connections migrating takes: one holds the lock,
// another runs River's migrations.
func smallPool(ctx context.Context, databaseURL string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("migrations: parse database url: %w", err)
	}
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("migrations: connect: %w", err)
	}
	return pool, nil
}

// riverMigrator is River's migrator on pool (nil: only to list River's
// migrations). River's own logging is dropped: it reports each migration at
// info level to stdout otherwise, and errors come back as errors.
func riverMigrator(pool *pgxpool.Pool) (*rivermigrate.Migrator[pgx.Tx], error) {
	rm, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, fmt.Errorf("migrations: river: %w", err)
	}
	return rm, nil
}

// pgx5URL rewrites postgres:// URLs to the scheme golang-migrate's pgx v5
// driver is registered under.
func pgx5URL(u string) string {
	for _, p := range []string{"postgres://", "postgresql://"} {
		if strings.HasPrefix(u, p) {
			return "pgx5://" + strings.TrimPrefix(u, p)
		}
	}
	return u
}
