// Package migrations holds Burnrate's schema as numbered SQL files, embedded
// in the binary and applied with golang-migrate.
package migrations

import (
	"embed"
	"errors"
	"fmt"
	"strings"

	"github.com/golang-migrate/migrate/v4"
	_ "github.com/golang-migrate/migrate/v4/database/pgx/v5" // registers pgx5://
	"github.com/golang-migrate/migrate/v4/source/iofs"
)

// FS holds the NNNNNN_name.up.sql / .down.sql files.
//
//go:embed *.sql
var FS embed.FS

// New returns a migrator for the Postgres database at databaseURL. Close it
// when done.
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

// Up applies every migration not yet applied. Being up to date is not an error.
func Up(databaseURL string) error {
	m, err := New(databaseURL)
	if err != nil {
		return err
	}
	defer m.Close()
	if err := m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("migrations: up: %w", err)
	}
	return nil
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
