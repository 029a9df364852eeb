package store_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestBudgetDriversEqualDailySpend: a budget's drivers, read from
// month_to_date_drivers for scopes of provider, service, account and model, are
// the sums of daily_spend over the same days, scope and currency, driver
// by driver and in the same order, for spans within a week, across weeks
// and months, and of whole months; team scopes (read from daily_spend)
// too.
func TestBudgetDriversEqualDailySpend(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	data := genSpendData(t, st, 17)
	day := func(s string) time.Time { d, _ := time.Parse(time.DateOnly, s); return d }
	scopes := []store.BudgetScope{
		{}, {Provider: "AWS"}, {Provider: "OpenAI", Model: "gpt-4o"}, {Service: "EC2", Account: "111"},
		{Model: "claude-sonnet-4-5"}, {Account: ""}, {Team: "ml"}, {Provider: "AWS", Team: "platform"},
	}
	for _, r := range [][2]string{
		{"2026-03-01", "2026-03-31"}, {"2026-03-01", "2026-03-17"}, {"2026-03-04", "2026-03-05"}, {"2026-02-23", "2026-03-08"},
		{"2026-02-20", "2026-04-10"}, {"2026-03-09", "2026-03-15"}, {"2026-04-01", "2026-04-01"}, {"2026-03-31", "2026-04-02"},
	} {
		from, to := day(r[0]), day(r[1])
		for _, sc := range scopes {
			for _, cur := range []string{"USD", "EUR"} {
				for _, limit := range []int{5, 10000} {
					b := store.Budget{OrgID: data.org.ID, ID: 1, Name: "b", Currency: cur, Period: "monthly", Scope: sc}
					got, err := st.BudgetDrivers(ctx, data.org.ID, b, from, to, data.loc, limit)
					if err != nil {
						t.Fatal(err)
					}
					want := wantBudgetDrivers(t, st, data.org.ID, sc, cur, from, to, limit)
					what := fmt.Sprintf("%v %+v %s limit %d", r, sc, cur, limit)
					if len(got) != len(want) {
						t.Fatalf("%s: %d drivers, want %d\ngot  %v\nwant %v", what, len(got), len(want), got, want)
					}
					if len(want) == 0 && limit == 10000 && sc.Provider == "" && sc.Team == "" {
						t.Fatalf("%s: no spend to compare", what)
					}
					for i := range want {
						if g, w := got[i], want[i]; g.Provider != w.Provider || g.Service != w.Service || g.Account != w.Account ||
							g.Model != w.Model || g.Currency != w.Currency || !g.Amount.Equal(w.Amount) {
							t.Fatalf("%s: driver %d = %+v, want %+v", what, i, g, w)
						}
					}
				}
			}
		}
	}
}

// wantBudgetDrivers sums daily_spend as the drivers are defined: billed
// spend in the scope and currency over from..to by provider, service,
// account and model, zeros left out, the limit largest first.
func wantBudgetDrivers(t *testing.T, st *store.Store, orgID int64, sc store.BudgetScope, cur string, from, to time.Time, limit int) []store.Driver {
	t.Helper()
	args := []any{orgID, from, to, cur}
	where := "org_id = $1 AND day BETWEEN $2 AND $3 AND currency = $4"
	for col, v := range map[string]string{"provider": sc.Provider, "service": sc.Service, "sub_account": sc.Account,
		"model": sc.Model, "team": sc.Team, "source": sc.Source} {
		if v != "" {
			args = append(args, v)
			where += " AND " + col + " = $" + strconv.Itoa(len(args))
		}
	}
	args = append(args, limit)
	rows, err := st.Pool().Query(context.Background(), `
		SELECT provider, service, sub_account, model, currency, sum(billed) FROM daily_spend WHERE `+where+`
		GROUP BY 1, 2, 3, 4, 5 HAVING sum(billed) <> 0 ORDER BY 6 DESC, 1, 2, 3, 4 LIMIT $`+strconv.Itoa(len(args)), args...)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Driver, error) {
		var d store.Driver
		err := row.Scan(&d.Provider, &d.Service, &d.Account, &d.Model, &d.Currency, &d.Amount)
		return d, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}
