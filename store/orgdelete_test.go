package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestDeleteOrg: an org deleted leaves no row in any table with an org_id,
// charges and gpu_resource_daily included (no foreign key takes them), and
// another org's charges and rollups are as they were, to the last digit.
func TestDeleteOrg(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	org, _ := storetest.Org(t, st, storetest.OrgOpts{})
	other, _ := storetest.Org(t, st, storetest.OrgOpts{})
	llm := func(key string) func(*store.Charge) {
		return func(c *store.Charge) {
			c.Source, c.DedupeKey, c.BillingPeriodStart, c.Model, c.InputTokens = "litellm-spend", key, time.Time{}, "gpt-4o", 1200
			c.ChargePeriodEnd = c.ChargePeriodStart.Add(time.Second)
		}
	}
	for _, o := range []store.Org{org, other} {
		importRows(t, st, o, store.DedupeNone, charge(2, "2026-11-01 10:00", "10.5", gpu("i-a", "g5.xlarge", 1, 1)),
			charge(3, "2026-11-02 10:00", "0.25"))
		importRows(t, st, o, store.DedupeSkip, charge(2, "2026-11-02 11:00", "0.01", llm("r1")))
	}
	if _, err := st.CreateBudget(ctx, org.ID, 0, store.BudgetInput{Name: "All", Amount: decimal.NewFromInt(100), Currency: "USD", Period: "monthly"}); err != nil {
		t.Fatal(err)
	}
	wantCharges, wantRollup := totals(t, st, other.ID)

	if err := st.DeleteOrg(ctx, org.ID); err != nil {
		t.Fatal(err)
	}
	rows, err := st.Pool().Query(ctx, `
		SELECT c.table_name FROM information_schema.columns c JOIN information_schema.tables t USING (table_schema, table_name)
		WHERE c.table_schema = 'public' AND c.column_name = 'org_id' AND t.table_type = 'BASE TABLE'`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	if err := rows.Err(); err != nil || len(tables) < 20 {
		t.Fatalf("%d tables with an org_id (%v)", len(tables), err)
	}
	for _, table := range tables {
		var n int
		if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM `+table+` WHERE org_id = $1`, org.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%d rows of the deleted org left in %s", n, table)
		}
	}
	if c, r := totals(t, st, other.ID); !c.Equal(wantCharges) || !r.Equal(wantRollup) {
		t.Errorf("the other org's charges and rollup: %s and %s, were %s and %s", c, r, wantCharges, wantRollup)
	}
	wantSpendByMatchesCube(t, st, other.ID, other.Location(), "after another org was deleted")
	sameGPURollup(t, st, other, "after another org was deleted", 1)
	if err := st.DeleteOrg(ctx, org.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleting it again: %v, want ErrNotFound", err)
	}
}
