// Package digest is the daily digest: what an org spent on one day (the job
// asks about yesterday in the org's time zone) against the day before and
// every budget, the month to date with its forecast, what drove the spend,
// the GPU-hours and tokens behind it, and a cheaper option when one clearly
// applies. Build computes it from packages spend and budget (the numbers
// the dashboard and the budgets pages show), Render lays it out as an email
// (HTML with an inline PNG chart, plain text, RFC 8058 one-click
// unsubscribe), and Send decides whether to send it and delivers it once
// through package notify. See docs/digest.md.
package digest

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/budget"
	"github.com/burnrate/burnrate/freshness"
	"github.com/burnrate/burnrate/savings"
	"github.com/burnrate/burnrate/spend"
	"github.com/burnrate/burnrate/store"
)

// ChartDays is how many days, up to the digest's day, its chart shows.
const ChartDays = 14

// Digest is what an org spent on one day, and where its budgets stand.
// Amounts are decimals; nothing is summed across currencies.
type Digest struct {
	OrgID   int64  `json:"org_id"`
	OrgSlug string `json:"org"`
	OrgName string `json:"org_name"`
	// Day is the civil date in the org's time zone, as midnight UTC.
	Day time.Time `json:"-"`
	// Yesterday says whether Day was yesterday in the org's time zone when
	// the digest was built (the subject then says "yesterday").
	Yesterday bool `json:"yesterday"`
	// Currencies are Day's spend per currency, the org's own first, the
	// others alphabetically.
	Currencies []Currency `json:"currencies"`
	// Budgets are every budget's status on Day: daily budgets for Day,
	// monthly budgets for Day's month up to Day.
	Budgets []Budget `json:"budgets"`
	Hint    *Hint    `json:"hint"`
	// Savings is the savings found in the org's bills up to Day, per month,
	// in each currency (package savings, at its default what-if).
	Savings []Amount `json:"savings_month"`
	Chart   Chart    `json:"chart"`
	// Data says how complete Day's spend is, and lists every source that
	// is late and every connection that fails or has stalled.
	Data Data `json:"data"`
}

// Data is how complete a digest's numbers are (package freshness).
type Data struct {
	// NoData is set when no source has delivered any of the day yet:
	// its spend is unknown, not zero.
	NoData bool `json:"no_data"`
	// Missing are the sources that have not delivered all of the day
	// (every source with NoData).
	Missing []freshness.View `json:"missing"`
	// Late are the sources whose newest data is older than their kind
	// normally is.
	Late []freshness.View `json:"late"`
	// Connections are the connections that fail or whose data stopped
	// advancing.
	Connections []ConnectionState `json:"connections"`
}

// Complete reports whether every source that delivers regularly has
// delivered all of the day.
func (d Data) Complete() bool { return !d.NoData && len(d.Missing) == 0 }

// ConnectionState is a connection that fails or stalled.
type ConnectionState struct {
	Name   string     `json:"name"`
	Kind   string     `json:"kind"`
	Health string     `json:"health"` // failing, stalled
	Error  string     `json:"error,omitempty"`
	Fix    string     `json:"fix,omitempty"`
	Since  *time.Time `json:"since,omitempty"`
}

// Date is Day as YYYY-MM-DD.
func (d Digest) Date() string { return d.Day.Format(time.DateOnly) }

// Over reports whether anything is over: a daily budget spent more than
// its amount on the day, or a monthly budget spent more than its amount
// or is forecast to by the month's end.
func (d Digest) Over() bool {
	for _, b := range d.Budgets {
		if b.Over || b.ForecastOver {
			return true
		}
	}
	return false
}

// Spent is the day's spend in each currency that spent anything.
func (d Digest) Spent() []Amount {
	var out []Amount
	for _, c := range d.Currencies {
		if !c.Spent.IsZero() {
			out = append(out, Amount{Name: c.Currency, Amount: c.Spent})
		}
	}
	return out
}

// Currency is the day's spend in one currency (spend.DayReport's numbers).
type Currency struct {
	Currency      string          `json:"currency"`
	Spent         decimal.Decimal `json:"spent"`
	DayBefore     decimal.Decimal `json:"day_before"`
	Change        decimal.Decimal `json:"change"`
	ChangePercent string          `json:"change_percent"` // "+12%", "new"
	// Providers is the day's spend by provider, largest first.
	Providers []Amount `json:"providers"`
	// Movers are the providers whose spend changed most from the day before.
	Movers []Mover `json:"movers"`
	// Anomaly is set when the day spent well above its trailing median.
	Anomaly *Anomaly `json:"anomaly"`
	// Drivers are the day's largest provider/service/account/model slices.
	Drivers      []Driver        `json:"drivers"`
	GPUHours     decimal.Decimal `json:"gpu_hours"`
	GPUs         []GPU           `json:"gpus"`
	InputTokens  int64           `json:"input_tokens"`
	OutputTokens int64           `json:"output_tokens"`
	Requests     int64           `json:"requests"`
	Models       []Model         `json:"models"`
	MonthToDate  decimal.Decimal `json:"month_to_date"`
	// Forecast is the month's at the end of the day, the same number as
	// an all-spend monthly budget's (null when the data is too old to
	// forecast from: ForecastNote says so).
	Forecast     *decimal.Decimal `json:"forecast"`
	ForecastNote string           `json:"forecast_note,omitempty"`
}

// Amount is a named amount: a provider's spend, or a currency's.
type Amount struct {
	Name   string          `json:"name"`
	Amount decimal.Decimal `json:"amount"`
}

// Mover is a provider whose spend changed from the day before.
type Mover struct {
	Name    string          `json:"name"`
	Before  decimal.Decimal `json:"before"`
	After   decimal.Decimal `json:"after"`
	Change  decimal.Decimal `json:"change"`
	Percent string          `json:"percent"`
}

// Anomaly says why the day stands out.
type Anomaly struct {
	Baseline decimal.Decimal `json:"baseline"` // median of the days before
	Note     string          `json:"note"`
}

// Driver is one provider/service/account/model slice of the day's spend.
type Driver struct {
	Provider string          `json:"provider"`
	Service  string          `json:"service"`
	Account  string          `json:"account"`
	Model    string          `json:"model"`
	Amount   decimal.Decimal `json:"amount"`
}

// GPU is the day's GPU-hours on one GPU type and what they cost.
type GPU struct {
	GPU    string          `json:"gpu"`
	Hours  decimal.Decimal `json:"hours"`
	Amount decimal.Decimal `json:"amount"`
}

// Model is the day's tokens on one model and what they cost.
type Model struct {
	Model        string          `json:"model"`
	InputTokens  int64           `json:"input_tokens"`
	OutputTokens int64           `json:"output_tokens"`
	Amount       decimal.Decimal `json:"amount"`
}

// Budget is one budget's status on the digest's day.
type Budget struct {
	ID       int64           `json:"id"`
	Name     string          `json:"name"`
	Period   string          `json:"period"` // daily or monthly
	Currency string          `json:"currency"`
	Amount   decimal.Decimal `json:"amount"`
	Spent    decimal.Decimal `json:"spent"`
	Percent  int             `json:"percent"`
	// Forecast is the period's, at the end of the day (null when the data
	// is too old to forecast from: DataNote says so).
	Forecast *decimal.Decimal `json:"forecast"`
	// RunsOut is the day the forecast reaches Amount within the period
	// (monthly budgets), "" when it does not.
	RunsOut string `json:"runs_out_on,omitempty"`
	Crossed []int  `json:"thresholds_crossed"`
	// Over: spent more than Amount. ForecastOver: a monthly budget not over
	// yet whose forecast for the month is.
	Over         bool `json:"over"`
	ForecastOver bool `json:"forecast_over"`
	// Stale: not over, but resting on data too old or late to say it is on
	// track; DataNote says which.
	Stale    bool   `json:"stale"`
	DataNote string `json:"data_note,omitempty"`
}

// Chart is the chart's data: one currency's daily spend over the ChartDays
// days up to the digest's day, and the line it is measured against.
type Chart struct {
	Currency string            `json:"currency"`
	Days     []time.Time       `json:"-"`
	Amounts  []decimal.Decimal `json:"amounts"`
	// Line is a daily amount to compare with (zero: none): an all-spend
	// daily budget, or an all-spend monthly budget's even pace per day.
	Line      decimal.Decimal `json:"line"`
	LineLabel string          `json:"line_label"`
}

// Yesterday is the day before now's in loc, as midnight UTC: the day the
// morning's digest is about.
func Yesterday(now time.Time, loc *time.Location) time.Time {
	return budget.AddDays(budget.Day(now, loc), -1)
}

// Build computes org's digest for day (a civil date in the org's time zone,
// as midnight UTC), as it reads at now: the digest of now's yesterday calls
// its day "yesterday". Its month forecast and its budgets' are those of the
// end of day, resting on what the sources have delivered (package
// freshness), the same forecast everywhere. The hint needs the org's
// prices and LLM usage; see cheaperOption.
func Build(ctx context.Context, st *store.Store, org store.Org, day, now time.Time) (Digest, error) {
	day = time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, time.UTC)
	d := Digest{OrgID: org.ID, OrgSlug: org.Slug, OrgName: org.Name, Day: day,
		Yesterday: day.Equal(Yesterday(now, org.Location()))}
	rep, err := freshness.Load(ctx, st, org, now)
	if err != nil {
		return d, fmt.Errorf("digest: %w", err)
	}
	d.Data = dataOf(rep, day)
	// The day's report, and the budgets, the hint and the savings, which
	// do not depend on it, are read beside each other (store.Both: on a
	// second connection when one is free), then the chart from both.
	var (
		report spend.DayReport
		all    []store.Budget
	)
	err = st.Both(ctx, func(st *store.Store) (err error) {
		report, err = spend.Day(ctx, st, org.ID, day, store.DimProvider, rep.EndOf(freshness.Scope{}, day))
		return err
	}, func(st *store.Store) (err error) {
		if all, err = st.Budgets(ctx, org.ID); err != nil {
			return err
		}
		if d.Budgets, err = budgets(ctx, st, org, all, spend.EndOf(rep, day)); err != nil {
			return err
		}
		if d.Hint, err = cheaperOption(ctx, st, org, day, now); err != nil {
			return err
		}
		d.Savings, err = savingsFound(ctx, st, org, day)
		return err
	})
	if err != nil {
		return d, fmt.Errorf("digest: %w", err)
	}
	for _, c := range report.Currencies {
		d.Currencies = append(d.Currencies, currencyOf(c))
	}
	// As the dashboard lists them: the org's currency first.
	slices.SortStableFunc(d.Currencies, func(a, b Currency) int {
		return spend.CompareCurrencies(org.Currency, a.Currency, b.Currency)
	})
	if d.Chart, err = chartData(ctx, st, org, day, d.Currencies, all); err != nil {
		return d, fmt.Errorf("digest: %w", err)
	}
	return d, nil
}

// savingsFound is the total of the Savings page for the bills up to the
// end of day: the org's stored report, as the page opens with it (running
// the finders over 30 days of GPU rollup would be most of the digest's
// time).
func savingsFound(ctx context.Context, st *store.Store, org store.Org, day time.Time) ([]Amount, error) {
	next := budget.AddDays(day, 1)
	rep, err := savings.Stored(ctx, st, org, time.Date(next.Year(), next.Month(), next.Day(), 0, 0, 0, 0, org.Location()))
	if err != nil {
		return nil, err
	}
	out := []Amount{}
	for _, t := range rep.Totals {
		out = append(out, Amount{Name: t.Currency, Amount: t.Amount})
	}
	return out, nil
}

func currencyOf(c spend.DayCurrency) Currency {
	out := Currency{
		Currency: c.Currency, Spent: c.Spent, DayBefore: c.DayBefore, Change: c.Change(), ChangePercent: c.Percent(),
		GPUHours: c.GPUHours, InputTokens: c.InputTokens, OutputTokens: c.OutputTokens, Requests: c.Requests,
		MonthToDate: c.Month.MonthToDate, ForecastNote: c.Month.Late,
		Providers: []Amount{}, Movers: []Mover{}, Drivers: []Driver{}, GPUs: []GPU{}, Models: []Model{},
	}
	if c.Month.ForecastOK {
		f := c.Month.Forecast
		out.Forecast = &f
	} else {
		out.ForecastNote = c.Month.Method
	}
	if out.ChangePercent != "new" && c.Change().IsPositive() {
		out.ChangePercent = "+" + out.ChangePercent
	}
	for _, g := range c.Groups {
		out.Providers = append(out.Providers, Amount{Name: spend.GroupLabel(store.DimProvider, g.Group), Amount: g.Amount})
	}
	for _, m := range c.Movers {
		out.Movers = append(out.Movers, Mover{Name: spend.GroupLabel(store.DimProvider, m.Group), Before: m.Before, After: m.After,
			Change: m.Change(), Percent: m.Percent()})
	}
	if c.Anomaly != nil {
		out.Anomaly = &Anomaly{Baseline: c.Anomaly.Baseline, Note: c.Anomaly.Note()}
	}
	for _, dr := range c.Drivers {
		out.Drivers = append(out.Drivers, Driver{Provider: dr.Provider, Service: dr.Service, Account: dr.Account,
			Model: dr.Model, Amount: dr.Amount})
	}
	for _, g := range c.GPUs {
		out.GPUs = append(out.GPUs, GPU{GPU: g.GPUType, Hours: g.GPUHours, Amount: g.Amount})
	}
	for _, m := range c.Models {
		out.Models = append(out.Models, Model{Model: m.Model, InputTokens: m.InputTokens, OutputTokens: m.OutputTokens,
			Amount: m.Amount})
	}
	return out
}

// budgets is every budget of org at the end of its day (spend.BudgetStatuses
// on basis).
func budgets(ctx context.Context, st *store.Store, org store.Org, all []store.Budget, basis func(store.Budget) budget.Basis) ([]Budget, error) {
	statuses, err := spend.BudgetStatuses(ctx, st, org, all, basis)
	if err != nil {
		return nil, err
	}
	out := []Budget{}
	for _, s := range statuses {
		out = append(out, budgetOf(s))
	}
	return out, nil
}

// dataOf is how complete day's numbers are in rep.
func dataOf(rep freshness.Report, day time.Time) Data {
	note := rep.Day(freshness.Scope{}, day)
	d := Data{NoData: note.NoData, Missing: []freshness.View{}, Late: []freshness.View{}, Connections: []ConnectionState{}}
	for _, s := range note.Missing {
		d.Missing = append(d.Missing, rep.View(s))
	}
	for _, s := range rep.Late(freshness.Scope{}) {
		d.Late = append(d.Late, rep.View(s))
	}
	for _, c := range rep.Problems() {
		cs := ConnectionState{Name: c.Name, Kind: c.Kind, Health: string(c.Health), Error: c.Error, Fix: c.Fix}
		if !c.Since.IsZero() {
			since := c.Since
			cs.Since = &since
		}
		d.Connections = append(d.Connections, cs)
	}
	return d
}

func budgetOf(s budget.Status) Budget {
	b := s.Budget
	out := Budget{ID: b.ID, Name: b.Name, Period: b.Period, Currency: b.Currency, Amount: b.Amount, Spent: s.Spent,
		Percent: s.Percent, Crossed: s.Crossed, Over: s.Standing == budget.StatusOver, Stale: s.Standing == budget.StatusStale,
		DataNote: s.Withheld + s.Late}
	if s.ForecastOK {
		f := s.Forecast
		out.Forecast = &f
	}
	if out.Crossed == nil {
		out.Crossed = []int{}
	}
	if budget.Period(b.Period) == budget.Monthly {
		out.ForecastOver = s.Standing == budget.StatusWarn
		if s.RunsOutOK {
			out.RunsOut = s.RunsOut.Format(time.DateOnly)
		}
	}
	return out
}

// chartData is the ChartDays days up to day of the currency that spent
// most on day (the org's own currency when none did), and the line of the
// first all-spend daily budget in it, else of the first all-spend monthly
// budget's even pace. A budget for a slice of the spend is not drawn: its
// line would not measure the bars.
func chartData(ctx context.Context, st *store.Store, org store.Org, day time.Time, cs []Currency, bs []store.Budget) (Chart, error) {
	ch := Chart{Currency: org.Currency}
	top := decimal.Zero
	for _, c := range cs {
		if c.Spent.GreaterThan(top) {
			ch.Currency, top = c.Currency, c.Spent
		}
	}
	from := budget.AddDays(day, -(ChartDays - 1))
	rows, err := st.SpendByDay(ctx, org.ID, store.SpendFilter{From: from, To: day}, "")
	if err != nil {
		return ch, err
	}
	byDay := map[time.Time]decimal.Decimal{}
	for _, r := range rows {
		if r.Currency == ch.Currency {
			byDay[r.Day] = byDay[r.Day].Add(r.Amount)
		}
	}
	for d := from; !d.After(day); d = budget.AddDays(d, 1) {
		ch.Days = append(ch.Days, d)
		ch.Amounts = append(ch.Amounts, byDay[d])
	}
	for _, p := range []budget.Period{budget.Daily, budget.Monthly} {
		for _, b := range bs {
			if budget.Period(b.Period) != p || b.Currency != ch.Currency || !b.Scope.Empty() {
				continue
			}
			ch.Line = budget.DailyAmount(p, b.Amount, day)
			if p == budget.Daily {
				ch.LineLabel = "daily budget “" + b.Name + "”"
			} else {
				ch.LineLabel = "even pace of monthly budget “" + b.Name + "”"
			}
			return ch, nil
		}
	}
	return ch, nil
}
