package store

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/label"
)

// BudgetScope is the slice of spend a budget covers: every field set must
// match; an empty scope is all of the org's spend.
type BudgetScope struct {
	Provider string            `json:"provider,omitempty"`
	Service  string            `json:"service,omitempty"`
	Account  string            `json:"account,omitempty"`
	Team     string            `json:"team,omitempty"`
	Model    string            `json:"model,omitempty"`
	Source   string            `json:"source,omitempty"`
	Tags     map[string]string `json:"tags,omitempty"`
}

// Filter is the scope as a spend filter over days from..to. Tags have no
// place in it: daily_spend does not keep them (see BudgetSpendByDay).
func (sc BudgetScope) Filter(from, to time.Time) SpendFilter {
	return SpendFilter{From: from, To: to, Provider: sc.Provider, Service: sc.Service, Account: sc.Account,
		Team: sc.Team, Model: sc.Model, Source: sc.Source, Cost: CostBilled}
}

// Is reports whether f views exactly this scope's spend (the same
// provider, service, account, team, model and source; a view has no tags,
// so a scope with tags is never one): a chart draws a budget only against
// the spend it is a budget for.
func (sc BudgetScope) Is(f SpendFilter) bool {
	return len(sc.Tags) == 0 && sc.Provider == f.Provider && sc.Service == f.Service && sc.Account == f.Account &&
		sc.Team == f.Team && sc.Model == f.Model && sc.Source == f.Source && f.Category == ""
}

// Empty reports whether the scope is all spend.
func (sc BudgetScope) Empty() bool {
	return sc.Provider == "" && sc.Service == "" && sc.Account == "" && sc.Team == "" && sc.Model == "" &&
		sc.Source == "" && len(sc.Tags) == 0
}

// Budget is an amount per day or per month for a slice of an org's spend,
// in one currency, with the thresholds (percent) that alert.
type Budget struct {
	OrgID      int64
	ID         int64
	Name       string
	Amount     decimal.Decimal
	Currency   string
	Period     string // daily, monthly
	Scope      BudgetScope
	Thresholds []int
	Recipients []string
	CreatedBy  int64
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// BudgetInput is what a user sets on a budget.
type BudgetInput struct {
	Name       string
	Amount     decimal.Decimal
	Currency   string
	Period     string
	Scope      BudgetScope
	Thresholds []int
	Recipients []string
}

const budgetColumns = `org_id, id, name, amount, currency, period, scope, thresholds, recipients,
	coalesce(created_by, 0), created_at, updated_at`

func scanBudget(row pgx.Row) (Budget, error) {
	var b Budget
	var scope []byte
	err := row.Scan(&b.OrgID, &b.ID, &b.Name, &b.Amount, &b.Currency, &b.Period, &scope, &b.Thresholds,
		&b.Recipients, &b.CreatedBy, &b.CreatedAt, &b.UpdatedAt)
	if err == nil {
		err = json.Unmarshal(scope, &b.Scope)
	}
	return b, err
}

func collectBudgets(rows pgx.Rows) ([]Budget, error) {
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Budget, error) { return scanBudget(row) })
}

func (in BudgetInput) args() ([]any, error) {
	scope, err := json.Marshal(in.Scope)
	if err != nil {
		return nil, err
	}
	th, rc := in.Thresholds, in.Recipients
	if th == nil {
		th = []int{}
	}
	if rc == nil {
		rc = []string{}
	}
	return []any{label.Clean(in.Name), in.Amount, in.Currency, in.Period, scope, th, rc}, nil
}

// Budget returns orgID's budget id. Returns ErrNotFound if there is none
// (or it is another org's).
func (s *Store) Budget(ctx context.Context, orgID, id int64) (Budget, error) {
	b, err := scanBudget(s.q.QueryRow(ctx, `SELECT `+budgetColumns+` FROM budgets WHERE org_id = $1 AND id = $2`, orgID, id))
	return b, mapError("get budget", err)
}

// Budgets lists orgID's budgets by name.
func (s *Store) Budgets(ctx context.Context, orgID int64) ([]Budget, error) {
	rows, err := s.q.Query(ctx, `SELECT `+budgetColumns+` FROM budgets WHERE org_id = $1 ORDER BY lower(name), id`, orgID)
	if err != nil {
		return nil, mapError("list budgets", err)
	}
	bs, err := collectBudgets(rows)
	return bs, mapError("list budgets", err)
}

// CreateBudget creates a budget in orgID. The caller validates in.
func (s *Store) CreateBudget(ctx context.Context, orgID, createdBy int64, in BudgetInput) (Budget, error) {
	args, err := in.args()
	if err != nil {
		return Budget{}, mapError("create budget", err)
	}
	var by *int64
	if createdBy != 0 {
		by = &createdBy
	}
	b, err := scanBudget(s.q.QueryRow(ctx, `
		INSERT INTO budgets (org_id, created_by, name, amount, currency, period, scope, thresholds, recipients)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		RETURNING `+budgetColumns, append([]any{orgID, by}, args...)...))
	return b, mapError("create budget", err)
}

// UpdateBudget replaces a budget's settings. Returns ErrNotFound if orgID
// has no budget id.
func (s *Store) UpdateBudget(ctx context.Context, orgID, id int64, in BudgetInput) (Budget, error) {
	args, err := in.args()
	if err != nil {
		return Budget{}, mapError("update budget", err)
	}
	b, err := scanBudget(s.q.QueryRow(ctx, `
		UPDATE budgets SET name = $3, amount = $4, currency = $5, period = $6, scope = $7, thresholds = $8,
			recipients = $9, updated_at = now()
		WHERE org_id = $1 AND id = $2
		RETURNING `+budgetColumns, append([]any{orgID, id}, args...)...))
	return b, mapError("update budget", err)
}

// DeleteBudget deletes a budget and its alert history. Returns ErrNotFound
// if orgID has no budget id.
func (s *Store) DeleteBudget(ctx context.Context, orgID, id int64) error {
	tag, err := s.q.Exec(ctx, `DELETE FROM budgets WHERE org_id = $1 AND id = $2`, orgID, id)
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	return mapError("delete budget", err)
}

// BudgetSpendByDay sums the billed spend in b's scope and currency per day,
// for days from..to (both included) in loc.
//
// A scope without tags is answered from daily_spend, like the dashboard. A
// scope with tags cannot be: the rollup keeps the team tag and no other, so
// those budgets are summed from charges with a tags @> filter, reading
// every row of the org in the period's instants. That is exact but slower,
// and grows with the number of charges rather than of rollup rows; the
// dashboard shows such budgets only on the budgets page.
func (s *Store) BudgetSpendByDay(ctx context.Context, orgID int64, b Budget, from, to time.Time, loc *time.Location) (map[time.Time]decimal.Decimal, error) {
	out := map[time.Time]decimal.Decimal{}
	if len(b.Scope.Tags) == 0 {
		days, err := s.SpendByDay(ctx, orgID, b.Scope.Filter(from, to), "")
		if err != nil {
			return nil, err
		}
		for _, d := range days {
			if d.Currency == b.Currency {
				out[d.Day] = out[d.Day].Add(d.Amount)
			}
		}
		return out, nil
	}
	args := []any{orgID}
	where, err := b.chargesWhere(from, to, loc, &args)
	if err != nil {
		return nil, mapError("budget spend by day", err)
	}
	args = append(args, loc.String())
	rows, err := s.q.Query(ctx, `
		SELECT (charge_period_start AT TIME ZONE $`+strconv.Itoa(len(args))+`)::date, sum(billed_cost)
		FROM charges
		WHERE `+where+`
		GROUP BY 1`, args...)
	if err != nil {
		return nil, mapError("budget spend by day", err)
	}
	var day time.Time
	var amount decimal.Decimal
	_, err = pgx.ForEachRow(rows, []any{&day, &amount}, func() error {
		out[day] = amount
		return nil
	})
	return out, mapError("budget spend by day", err)
}

// chargesWhere is b's scope and currency as conditions on charges, over
// the instants of days from..to (both included) in loc, with org_id = $1;
// args gets its parameters.
func (b Budget) chargesWhere(from, to time.Time, loc *time.Location, args *[]any) (string, error) {
	tags, err := json.Marshal(b.Scope.Tags)
	if err != nil {
		return "", err
	}
	param := func(v any) string {
		*args = append(*args, v)
		return "$" + strconv.Itoa(len(*args))
	}
	start := time.Date(from.Year(), from.Month(), from.Day(), 0, 0, 0, 0, loc)
	end := time.Date(to.Year(), to.Month(), to.Day()+1, 0, 0, 0, 0, loc)
	var where strings.Builder
	where.WriteString("org_id = $1 AND billing_currency = " + param(b.Currency) + " AND tags @> " + param(tags) + "::jsonb" +
		" AND charge_period_start >= " + param(start) + " AND charge_period_start < " + param(end))
	sc := b.Scope
	for _, dv := range []struct {
		d Dimension
		v string
	}{{DimProvider, sc.Provider}, {DimService, sc.Service}, {DimAccount, sc.Account}, {DimTeam, sc.Team},
		{DimModel, sc.Model}, {DimSource, sc.Source}} {
		if dv.v != "" {
			where.WriteString(" AND " + dv.d.chargeColumn() + " = " + param(dv.v))
		}
	}
	return where.String(), nil
}

// BudgetDrivers sums the billed spend in b's scope and currency over days
// from..to (both included, in loc) by provider, service, account and model,
// and returns the limit largest, largest first. Like BudgetSpendByDay, a
// scope with tags is summed from charges. A scope of provider, service,
// account and model alone (or none) is read from month_to_date_drivers,
// which keeps exactly those sums, a few days' months to date added and
// taken away (as the dashboard's drivers are): a month to date is one
// day's few hundred rows, not every combination of every day.
// Any other scope is summed from daily_spend.
func (s *Store) BudgetDrivers(ctx context.Context, orgID int64, b Budget, from, to time.Time, loc *time.Location, limit int) ([]Driver, error) {
	args := []any{orgID}
	var query string
	if sc := b.Scope; len(sc.Tags) == 0 && sc.Team == "" && sc.Source == "" {
		args = append(args, b.Currency)
		cond := "org_id = $1 AND currency = $2"
		for _, dv := range []struct{ col, v string }{{"provider", sc.Provider}, {"service", sc.Service},
			{"sub_account", sc.Account}, {"model", sc.Model}} {
			if dv.v != "" {
				args = append(args, dv.v)
				cond += " AND " + dv.col + " = $" + strconv.Itoa(len(args))
			}
		}
		var arms []string
		for _, r := range monthToDateReads(from, to).reads(&args, false) {
			arms = append(arms, `SELECT provider, service, sub_account, model, currency, `+r.sign+`billed AS billed
			FROM month_to_date_drivers WHERE `+cond+` AND `+r.days())
		}
		query = `
		SELECT provider, service, sub_account, model, currency, sum(billed) AS amount
		FROM (
			` + strings.Join(arms, "\n\t\t\tUNION ALL\n\t\t\t") + `
		) d
		GROUP BY 1, 2, 3, 4, 5`
	} else if len(sc.Tags) == 0 {
		where := b.Scope.Filter(from, to).where(&args)
		args = append(args, b.Currency)
		query = `
		SELECT provider, service, sub_account, model, currency, sum(billed) AS amount
		FROM daily_spend
		WHERE ` + where + ` AND currency = $` + strconv.Itoa(len(args)) + `
		GROUP BY 1, 2, 3, 4, 5`
	} else {
		where, err := b.chargesWhere(from, to, loc, &args)
		if err != nil {
			return nil, mapError("budget drivers", err)
		}
		query = `
		SELECT provider_name, service_name, sub_account_id, x_model, billing_currency, sum(billed_cost) AS amount
		FROM charges
		WHERE ` + where + `
		GROUP BY 1, 2, 3, 4, 5`
	}
	args = append(args, limit)
	// Credits can cancel a slice out; a zero is no driver.
	rows, err := s.q.Query(ctx, `SELECT * FROM (`+query+`) d
		WHERE amount <> 0
		ORDER BY amount DESC, 1, 2, 3, 4
		LIMIT $`+strconv.Itoa(len(args)), args...)
	if err != nil {
		return nil, mapError("budget drivers", err)
	}
	ds, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Driver, error) {
		var d Driver
		err := row.Scan(&d.Provider, &d.Service, &d.Account, &d.Model, &d.Currency, &d.Amount)
		return d, err
	})
	return ds, mapError("budget drivers", err)
}

// BudgetsSpendByDay is BudgetSpendByDay for many budgets at once: those
// scoped by one dimension at most in one pass over daily_spend_by, the
// others in one pass over daily_spend (a filtered sum per budget each).
// Budgets scoped by tags are skipped: they need BudgetSpendByDay.
func (s *Store) BudgetsSpendByDay(ctx context.Context, orgID int64, budgets []Budget, from, to time.Time) (map[int64]map[time.Time]decimal.Decimal, error) {
	out := map[int64]map[time.Time]decimal.Decimal{}
	var byDim, wide []Budget
	for _, b := range budgets {
		if len(b.Scope.Tags) > 0 {
			continue
		}
		out[b.ID] = map[time.Time]decimal.Decimal{}
		n := 0
		for _, v := range b.Scope.Filter(from, to).Values() {
			if v != "" {
				n++
			}
		}
		if n <= 1 {
			byDim = append(byDim, b)
		} else {
			wide = append(wide, b)
		}
	}
	for _, part := range []struct {
		budgets []Budget
		byDim   bool
	}{{byDim, true}, {wide, false}} {
		if len(part.budgets) == 0 {
			continue
		}
		if err := s.budgetsSpend(ctx, orgID, part.budgets, from, to, part.byDim, out); err != nil {
			return nil, mapError("budgets spend by day", err)
		}
	}
	return out, nil
}

// budgetsSpend adds the budgets' spend per day to out, from daily_spend_by
// (budgets scoped by one dimension at most) or daily_spend.
func (s *Store) budgetsSpend(ctx context.Context, orgID int64, budgets []Budget, from, to time.Time, byDim bool, out map[int64]map[time.Time]decimal.Decimal) error {
	args := []any{orgID, from, to}
	param := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	var sums []string
	dims := map[string]bool{}
	for _, b := range budgets {
		cond := "currency = " + param(b.Currency)
		dim := "total"
		for d, v := range b.Scope.Filter(from, to).Values() {
			if v == "" {
				continue
			}
			if byDim {
				dim = d.column()
				cond += " AND value = " + param(v)
			} else {
				cond += " AND " + d.column() + " = " + param(v)
			}
		}
		if byDim {
			cond += " AND dim = " + param(dim)
			dims[dim] = true
		}
		sums = append(sums, "coalesce(sum(billed) FILTER (WHERE "+cond+"), 0)")
	}
	query := `SELECT day, ` + strings.Join(sums, ", ") + ` FROM daily_spend WHERE org_id = $1 AND day BETWEEN $2 AND $3 GROUP BY 1`
	if byDim {
		query = `SELECT day, ` + strings.Join(sums, ", ") + ` FROM daily_spend_by
			WHERE org_id = $1 AND dim = ANY(` + param(slices.Sorted(maps.Keys(dims))) + `) AND day BETWEEN $2 AND $3 GROUP BY 1`
	}
	rows, err := s.q.Query(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var day time.Time
		vals := make([]decimal.Decimal, len(budgets))
		dest := []any{&day}
		for i := range vals {
			dest = append(dest, &vals[i])
		}
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		for i, b := range budgets {
			if !vals[i].IsZero() {
				out[b.ID][day] = vals[i]
			}
		}
	}
	return rows.Err()
}

// BudgetAlert is a threshold of a budget crossed in a period.
type BudgetAlert struct {
	BudgetID    int64
	PeriodStart time.Time
	Threshold   int
	CrossedAt   time.Time
	// NotifiedAt is when an evaluation claimed the crossing for a message;
	// nil for crossings recorded by versions that alerted nobody.
	NotifiedAt *time.Time
	Spent      decimal.NullDecimal // the period's spend at the claim
}

// ClaimBudgetAlerts records that thresholds of budgetID are crossed in the
// period starting periodStart, with spent so far, at the instant at, and
// returns, ascending, those it claimed for a message: the ones no earlier
// claim took. Each threshold of a period is claimed once, whoever asks and
// however many ask at once: a concurrent claim of the same threshold waits
// for the first to commit and then finds it taken (or, if the first rolls
// back, takes it). Called in the transaction that queues the message, a
// claim commits with the message or not at all.
func (s *Store) ClaimBudgetAlerts(ctx context.Context, orgID, budgetID int64, periodStart time.Time, thresholds []int, spent decimal.Decimal, at time.Time) ([]int, error) {
	if len(thresholds) == 0 {
		return nil, nil
	}
	// A row without notified_at was recorded by an older version when a
	// page showed the crossing; nobody was told, so it is claimed now.
	rows, err := s.q.Query(ctx, `
		INSERT INTO budget_alerts AS a (org_id, budget_id, period_start, threshold, crossed_at, notified_at, spent)
		SELECT $1, $2, $3, t, $5, $5, $6 FROM unnest($4::int[]) t
		ON CONFLICT (org_id, budget_id, period_start, threshold) DO UPDATE
			SET notified_at = excluded.notified_at, spent = excluded.spent
			WHERE a.notified_at IS NULL
		RETURNING threshold`, orgID, budgetID, periodStart, thresholds, at, spent)
	if err != nil {
		return nil, mapError("claim budget alerts", err)
	}
	claimed, err := pgx.CollectRows(rows, pgx.RowTo[int])
	slices.Sort(claimed)
	return claimed, mapError("claim budget alerts", err)
}

// BudgetAlerts lists budgetID's crossed thresholds, latest period first.
func (s *Store) BudgetAlerts(ctx context.Context, orgID, budgetID int64) ([]BudgetAlert, error) {
	rows, err := s.q.Query(ctx, `
		SELECT budget_id, period_start, threshold, crossed_at, notified_at, spent FROM budget_alerts
		WHERE org_id = $1 AND budget_id = $2
		ORDER BY period_start DESC, threshold`, orgID, budgetID)
	if err != nil {
		return nil, mapError("list budget alerts", err)
	}
	as, err := pgx.CollectRows(rows, pgx.RowToStructByPos[BudgetAlert])
	return as, mapError("list budget alerts", err)
}
