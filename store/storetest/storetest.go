// Package storetest gives each test its own migrated Postgres database, cloned
// from a template in milliseconds, so tests run in parallel against the real
// thing. The server is TEST_DATABASE_URL if set, else 127.0.0.1:5432 as user
// postgres.
package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver pgtestdb uses
	"github.com/peterldowns/pgtestdb"

	"github.com/burnrate/burnrate/migrations"
	"github.com/burnrate/burnrate/pgcluster"
	"github.com/burnrate/burnrate/store"
)

// DefaultURL is the server tests use when TEST_DATABASE_URL is unset.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

var (
	serverOnce sync.Once
	serverConf pgtestdb.Config
	serverErr  error
	private    *pgcluster.Cluster // started when no server answers
)

// server returns the pgtestdb configuration of the test server: the one at
// TEST_DATABASE_URL, else the local default, else, when that does not
// answer, a private throwaway cluster (see Main).
func server() (pgtestdb.Config, error) {
	serverOnce.Do(func() {
		raw := os.Getenv("TEST_DATABASE_URL")
		if raw == "" {
			raw = DefaultURL
			if !store.Answers(context.Background(), raw) {
				c, err := pgcluster.Start(context.Background(), pgcluster.Options{Ephemeral: true, Database: "postgres"})
				if err != nil {
					serverErr = fmt.Errorf("no Postgres at %s, and a private one would not start: %w", DefaultURL, err)
					return
				}
				private, raw = c, c.AdminURL()
			}
		}
		serverConf, serverErr = configFromURL(raw)
	})
	return serverConf, serverErr
}

// Main runs a package's tests and then stops the private cluster, if one was
// started. Packages that use storetest call it from TestMain:
//
//	func TestMain(m *testing.M) { storetest.Main(m) }
func Main(m *testing.M) {
	code := m.Run()
	if private != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_ = private.Stop(ctx)
		cancel()
	}
	os.Exit(code)
}

func configFromURL(raw string) (pgtestdb.Config, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return pgtestdb.Config{}, err
	}
	pw, _ := u.User.Password()
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	db := u.Path
	if len(db) > 1 {
		db = db[1:]
	} else {
		db = "postgres"
	}
	opts := u.RawQuery
	if opts == "" {
		opts = "sslmode=disable"
	}
	return pgtestdb.Config{
		DriverName: "pgx",
		Host:       u.Hostname(),
		Port:       port,
		User:       u.User.Username(),
		Password:   pw,
		Database:   db,
		Options:    opts,
		// Like a production database owner: not a superuser (so row-level
		// security is really in force once a request drops to burnrate_app),
		// but able to create the burnrate_app role the migrations need.
		TestRole: &pgtestdb.Role{
			Username:     "burnrate_test",
			Password:     "burnrate_test",
			Capabilities: "NOSUPERUSER NOCREATEDB CREATEROLE",
		},
		ForceTerminateConnections: true,
	}, nil
}

// URL returns the connection string of a fresh, migrated database for t,
// dropped when t passes (kept for inspection when it fails).
func URL(t testing.TB) string {
	t.Helper()
	conf, err := server()
	if err != nil {
		t.Fatalf("storetest: TEST_DATABASE_URL: %v", err)
	}
	return pgtestdb.Custom(t, conf, migrator{}).URL()
}

// migrator makes the template database the way 'burnrate migrate up' makes
// a real one: the app's migrations and River's.
type migrator struct{}

func (migrator) Hash() (string, error) { return migrations.Hash() }

func (migrator) Migrate(_ context.Context, _ *sql.DB, template pgtestdb.Config) error {
	return migrations.Up(template.URL())
}

// New returns a Store on a fresh, migrated database for t.
func New(t testing.TB) *store.Store {
	t.Helper()
	// STORETEST_FENCE_IN_TRANSACTIONS=1 runs every fenced connection as on
	// Citus (store.Options.FenceInTransactions).
	opts := store.Options{FenceInTransactions: os.Getenv("STORETEST_FENCE_IN_TRANSACTIONS") == "1"}
	st, err := store.OpenWith(context.Background(), URL(t), opts)
	if err != nil {
		t.Fatalf("storetest: %v", err)
	}
	t.Cleanup(st.Close)
	return st
}

// Pool is a shortcut for tests that need raw SQL.
func Pool(st *store.Store) *pgxpool.Pool { return st.Pool() }
