package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/migrations"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestStoredNumbersAreBounded: amounts past the parser's bounds that older
// versions stored are brought within them by the migration that adds the
// bounds, and the database refuses new ones.
func TestStoredNumbersAreBounded(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t)
	ctx := context.Background()
	m, err := migrations.New(url)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	// Back to before the bounds, where a budget of 1e131000 could be saved.
	if err := m.Migrate(6); err != nil {
		t.Fatalf("migrate down to 6: %v", err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `
		INSERT INTO orgs (name, slug) VALUES ('Huge', 'huge');
		INSERT INTO budgets (org_id, name, amount, currency, period)
		SELECT id, 'huge', 1e131000, 'USD', 'monthly' FROM orgs WHERE slug = 'huge';
		INSERT INTO budgets (org_id, name, amount, currency, period)
		SELECT id, 'fine', 5000, 'USD', 'monthly' FROM orgs WHERE slug = 'huge';
		INSERT INTO llm_price_overrides (org_id, model, input_per_mtok, output_per_mtok)
		SELECT id, 'gpt-4o', 1e400, 10 FROM orgs WHERE slug = 'huge'`); err != nil {
		t.Fatal(err)
	}
	if err := m.Up(); err != nil {
		t.Fatalf("migrate up: %v", err)
	}
	amounts := map[string]string{}
	rows, _ := conn.Query(ctx, `SELECT name, amount::text FROM budgets`)
	for rows.Next() {
		var name, amount string
		if err := rows.Scan(&name, &amount); err != nil {
			t.Fatal(err)
		}
		amounts[name] = amount
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if amounts["huge"] != "999999999999999.99" || amounts["fine"] != "5000" {
		t.Fatalf("budgets after the migration = %v, want huge capped to 999999999999999.99 and fine left at 5000", amounts)
	}
	var input decimal.Decimal
	if err := conn.QueryRow(ctx, `SELECT input_per_mtok::text FROM llm_price_overrides`).Scan(&input); err != nil || !input.Equal(decimal.RequireFromString("999999999999999.99")) {
		t.Fatalf("LLM price override input = %s (%v), want capped", input, err)
	}

	_, err = conn.Exec(ctx, `INSERT INTO budgets (org_id, name, amount, currency, period)
		SELECT id, 'again', 1e15, 'USD', 'daily' FROM orgs WHERE slug = 'huge'`)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.ConstraintName != "budgets_amount_bounded" {
		t.Fatalf("a budget of 1e15 saved: %v, want the budgets_amount_bounded check to refuse it", err)
	}
}
