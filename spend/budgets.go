package spend

import (
	"context"
	"time"

	"github.com/burnrate/burnrate/budget"
	"github.com/burnrate/burnrate/freshness"
	"github.com/burnrate/burnrate/store"
)

// BudgetStatus reads b's spend and computes its status on basis at (its
// Day a day in org's time zone), with history past periods: what the
// budgets pages show. A budget scoped by tags is summed from charges, the
// others from daily_spend.
func BudgetStatus(ctx context.Context, st *store.Store, org store.Org, b store.Budget, at budget.Basis, history int) (budget.Status, error) {
	daily, err := st.BudgetSpendByDay(ctx, org.ID, b, budget.SpendFrom(b, at, history), at.Day, org.Location())
	if err != nil {
		return budget.Status{}, err
	}
	return budget.StatusFor(b, at, history, daily), nil
}

// BudgetStatuses computes the status of each of bs, in order, each on its
// basis (basis(b); the bases of budgets of one period share their Day):
// those not scoped by tags in one pass over daily_spend, the others from
// charges one by one. The dashboard, the budgets page, the digest, the
// API and the alerts all call it.
func BudgetStatuses(ctx context.Context, st *store.Store, org store.Org, bs []store.Budget, basis func(store.Budget) budget.Basis) ([]budget.Status, error) {
	var untagged []store.Budget
	var bases []budget.Basis
	var from, to time.Time
	for _, b := range bs {
		if len(b.Scope.Tags) > 0 {
			continue
		}
		at := basis(b)
		untagged, bases = append(untagged, b), append(bases, at)
		if f := budget.SpendFrom(b, at, 0); from.IsZero() || f.Before(from) {
			from = f
		}
		if to.IsZero() || at.Day.After(to) {
			to = at.Day
		}
	}
	byID := make(map[int64]budget.Status, len(bs))
	if len(untagged) > 0 {
		spend, err := st.BudgetsSpendByDay(ctx, org.ID, untagged, from, to)
		if err != nil {
			return nil, err
		}
		for i, b := range untagged {
			byID[b.ID] = budget.StatusFor(b, bases[i], 0, spend[b.ID])
		}
	}
	out := make([]budget.Status, 0, len(bs))
	for _, b := range bs {
		s, ok := byID[b.ID]
		if !ok {
			var err error
			if s, err = BudgetStatus(ctx, st, org, b, basis(b), 0); err != nil {
				return nil, err
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// Current is the basis of each budget's status on the report's today, in
// the budget's scope (freshness.Report.Current): for BudgetStatuses.
func Current(rep freshness.Report) func(store.Budget) budget.Basis {
	return func(b store.Budget) budget.Basis { return rep.Current(freshness.ScopeOf(b.Scope)) }
}

// EndOf is the basis of each budget's status at the end of day, read the
// morning after, in the budget's scope: for BudgetStatuses.
func EndOf(rep freshness.Report, day time.Time) func(store.Budget) budget.Basis {
	return func(b store.Budget) budget.Basis { return rep.EndOf(freshness.ScopeOf(b.Scope), day) }
}
