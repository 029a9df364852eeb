package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestDemo runs 'burnrate demo' and checks the org it made: 90 days of
// spend through the real import path, budgets, one over, and a login.
func TestDemo(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t)
	var out bytes.Buffer
	err := run(context.Background(), []string{"demo", "--password", "pw-for-demo"},
		env(map[string]string{"DATABASE_URL": url, "LOG_LEVEL": "error"}), &out, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"demo@burnrate.local / pw-for-demo", "org:      demo-acme-ml", "imported demo-focus-cloud.csv", "budgets:  6"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	org, err := st.OrgBySlug(context.Background(), "demo-acme-ml")
	if err != nil {
		t.Fatal(err)
	}
	var days int
	var charges, rollup decimal.Decimal
	pool := st.Pool()
	if err := pool.QueryRow(context.Background(), `SELECT count(DISTINCT day), sum(billed) FROM daily_spend WHERE org_id = $1`, org.ID).Scan(&days, &rollup); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(context.Background(), `SELECT sum(billed_cost) FROM charges WHERE org_id = $1`, org.ID).Scan(&charges); err != nil {
		t.Fatal(err)
	}
	if days != 90 || !charges.Equal(rollup) {
		t.Fatalf("days = %d, charges %s vs rollup %s", days, charges, rollup)
	}
	// A second run makes a second org for the same (existing) user.
	out.Reset()
	if err := run(context.Background(), []string{"demo"}, env(map[string]string{"DATABASE_URL": url, "LOG_LEVEL": "error"}), &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "existing user, password unchanged") || !strings.Contains(out.String(), "demo-acme-ml-2") {
		t.Fatalf("second run:\n%s", out.String())
	}
}

// TestCommandsRefuseWeakPasswords: the commands that create users hold
// passwords to the same rule as sign-up, before touching the database.
func TestCommandsRefuseWeakPasswords(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"org", "create", "--name", "Acme", "--owner-email", "ann@example.com", "--password", "          "},
		{"demo", "--password", "short"},
	} {
		err := run(context.Background(), args, env(map[string]string{"DATABASE_URL": "postgres://nobody@127.0.0.1:1/none", "LOG_LEVEL": "error"}), &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), "--password: Use at least 10 characters") {
			t.Errorf("%v: err = %v, want the password rule", args, err)
		}
	}
}
