package schedule

import (
	"context"
	"net/url"
	"slices"
	"time"

	"github.com/burnrate/burnrate/budget"
	"github.com/burnrate/burnrate/freshness"
	"github.com/burnrate/burnrate/spend"
	"github.com/burnrate/burnrate/store"
)

// AlertDrivers is how many cost drivers an alert lists.
const AlertDrivers = 5

// Alert is a budget that crossed one or more of its thresholds in its
// current period, to be told to its recipients: the message Evaluate
// claimed.
type Alert struct {
	OrgID  int64
	Status budget.Status // where the budget stands: spend, amount, forecast, runs out on
	// Threshold is the highest threshold the alert reports; Thresholds
	// are all it claimed, ascending. Spend that jumps past several
	// thresholds at once makes one alert, not one per threshold.
	Threshold  int
	Thresholds []int
	// Drivers are the largest slices of the budget's spend since
	// DriversFrom: the day of the period's last alert, or its first day.
	DriversFrom time.Time
	Drivers     []store.Driver
	// Link is the path of the dashboard filtered to the budget's scope
	// (tags aside: the dashboard has no tag filter) over the period so far.
	Link string
	At   time.Time // when the alert was claimed
}

// Budget is the budget alerted.
func (a Alert) Budget() store.Budget { return a.Status.Budget }

// Recipients are the addresses the budget names.
func (a Alert) Recipients() []string { return a.Status.Budget.Recipients }

// BudgetAlerts finds the budgets of org whose spend in their current period
// (the period containing now's day in org's time zone) has crossed
// thresholds that no evaluation has claimed yet, claims them, and returns
// one Alert per such budget. It is the one place crossings are recorded
// (budget_alerts), so each threshold of each period is alerted once: again
// after new spend is imported, after a restart, or with several processes
// evaluating at once (store.ClaimBudgetAlerts).
//
// Run it in the transaction that queues the alerts' messages (st from
// Store.InTx): a claim then commits with its message or, on failure, not at
// all, and the next evaluation alerts again.
//
// A daily budget's period is today: a crossing yesterday found only today,
// once bills arrive, is the digest's to report, not an alert.
func BudgetAlerts(ctx context.Context, st *store.Store, org store.Org, now time.Time) ([]Alert, error) {
	budgets, err := st.Budgets(ctx, org.ID)
	if err != nil || len(budgets) == 0 {
		return nil, err
	}
	// The forecast an alert states rests on what the sources delivered, as
	// on every other face.
	rep, err := freshness.Load(ctx, st, org, now)
	if err != nil {
		return nil, err
	}
	statuses, err := spend.BudgetStatuses(ctx, st, org, budgets, spend.Current(rep))
	if err != nil {
		return nil, err
	}
	var alerts []Alert
	for _, s := range statuses {
		if len(s.Crossed) == 0 {
			continue
		}
		a, ok, err := claim(ctx, st, org, s, now)
		if err != nil {
			return nil, err
		}
		if ok {
			alerts = append(alerts, a)
		}
	}
	return alerts, nil
}

// claim claims s's crossed thresholds and, when any was not claimed
// before, makes their alert.
func claim(ctx context.Context, st *store.Store, org store.Org, s budget.Status, now time.Time) (Alert, bool, error) {
	b := s.Budget
	// The last alert of the period, read before claiming: its day starts
	// the drivers' span, so that an alert tells what grew since the one
	// before.
	previous, err := st.BudgetAlerts(ctx, org.ID, b.ID)
	if err != nil {
		return Alert{}, false, err
	}
	from := s.First
	taken := map[int]bool{}
	for _, p := range previous {
		if p.PeriodStart.Equal(s.First) && p.NotifiedAt != nil {
			taken[p.Threshold] = true
			if d := budget.Day(*p.NotifiedAt, org.Location()); d.After(from) && !d.After(s.Today) {
				from = d
			}
		}
	}
	// Most evaluations find every crossing claimed already: they need not
	// ask (the claim would lock the rows only to find them taken). What is
	// left is claimed atomically, whoever else reads the same.
	var open []int
	for _, t := range s.Crossed {
		if !taken[t] {
			open = append(open, t)
		}
	}
	if len(open) == 0 {
		return Alert{}, false, nil
	}
	claimed, err := st.ClaimBudgetAlerts(ctx, org.ID, b.ID, s.First, open, s.Spent, now)
	if err != nil || len(claimed) == 0 {
		return Alert{}, false, err
	}
	drivers, err := st.BudgetDrivers(ctx, org.ID, b, from, s.Today, org.Location(), AlertDrivers)
	if err != nil {
		return Alert{}, false, err
	}
	return Alert{
		OrgID: org.ID, Status: s, Threshold: slices.Max(claimed), Thresholds: claimed,
		DriversFrom: from, Drivers: drivers, Link: DashboardLink(b, s.First, s.Today), At: now,
	}, true, nil
}

// linkGroups are the dimensions a budget's dashboard link may group by, in
// order of preference: the first its scope leaves open.
var linkGroups = []store.Dimension{store.DimProvider, store.DimService, store.DimAccount, store.DimModel,
	store.DimTeam, store.DimSource}

// DashboardLink is the path of the dashboard showing b's scope (but its
// tags, which the dashboard cannot filter by) over days from..to, grouped
// by the first dimension the scope leaves open. Its query is the one the
// dashboard itself writes for such a view.
func DashboardLink(b store.Budget, from, to time.Time) string {
	f := b.Scope.Filter(from, to)
	vals := f.Values()
	group := store.DimProvider
	for _, d := range linkGroups {
		if vals[d] == "" {
			group = d
			break
		}
	}
	q := url.Values{}
	q.Set("range", "custom")
	q.Set("from", from.Format(time.DateOnly))
	q.Set("to", to.Format(time.DateOnly))
	q.Set("group", string(group))
	for d, v := range vals {
		if v != "" {
			q.Set(string(d), v)
		}
	}
	return "/dashboard?" + q.Encode()
}
