// Package savings finds money an org's own bills show it could save, each
// finding with dollars per month and the charges behind it: GPU instances
// left running around the clock with no owner, on-demand GPU hours that
// spot capacity would run for far less, GPUs bought dearer than the same
// machine elsewhere, LLM requests a cheaper sibling model could take, and
// steady GPU usage a 1-year commitment would discount. The Savings page,
// GET /api/v1/savings, `burnrate savings` and the daily digest read the
// org's stored report with the default options (Stored, Load), which Find
// computes; other what-ifs call Find. The finders and their assumptions
// are in docs/savings.md.
package savings

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/advisor"
	"github.com/burnrate/burnrate/quantity"
	"github.com/burnrate/burnrate/store"
)

// Kind is which finder made a finding.
type Kind string

// The finders, in the order the page lists them.
const (
	KindAlwaysOn   Kind = "always-on"
	KindSpot       Kind = "spot"
	KindCheaperGPU Kind = "cheaper-gpu"
	KindRouting    Kind = "model-routing"
	KindCommitment Kind = "commitment"
)

// Kinds lists the finders in display order.
var Kinds = []Kind{KindAlwaysOn, KindSpot, KindCheaperGPU, KindRouting, KindCommitment}

// Defaults and thresholds of the finders (docs/savings.md).
const (
	// WindowDays is how many days of bills, up to the latest charge, the
	// finders read.
	WindowDays = 30
	// MonthHours is a month, as everywhere in Burnrate's prices: 730 hours.
	MonthHours = 730
	// AlwaysOnMinDays is how many consecutive days a resource must have run
	// (about) 24 hours a day, up to the end of the bills, to be always-on.
	AlwaysOnMinDays = 7
	// FullDayHours is how many instance-hours make a day "around the clock":
	// billing rounds, and a day may start a few minutes late.
	FullDayHours = 23.5
	// SteadyHoursPerDay is the average instance-hours per day it ran above
	// which a resource is a service, not a job: not a spot candidate.
	SteadyHoursPerDay = 20
	// SpotMaxRatio: spot is "far lower" when the catalog's spot price is at
	// most this share of its on-demand price.
	SpotMaxRatio = "0.6"
	// CheaperMaxRatio: another offer is worth a move when its $/GPU-hour is
	// at most this share of what the org paid.
	CheaperMaxRatio = "0.75"
	// MonthlyMinDays is the least number of days of bills a saving per
	// month is scaled from: fewer, and a few hours would be multiplied into
	// a month (docs/savings.md, "Per month only from enough days"). Below
	// it, a finder that scales by the window reports what the observed days
	// saved, unpriced.
	MonthlyMinDays = 7
	// CheaperMinDays is how many days of the GPU bills an instance type
	// must have run on before the cheaper-GPU finder prices a move: a
	// saving per month needs sustained usage, not a burst. It is the same
	// rule as MonthlyMinDays, applied to the type's own days.
	CheaperMinDays = MonthlyMinDays
	// CommitmentMinDays is how many days of GPU bills the commitment finder
	// needs before it calls usage steady.
	CommitmentMinDays = 14
	// DefaultRoutingShare is the share of a model's requests the routing
	// what-if moves, unless asked otherwise.
	DefaultRoutingShare = "0.4"
)

// MaxEvidence is how many resources a finding lists, the costliest first.
const MaxEvidence = 50

// MinMonthly is the smallest saving worth a finding, per month, in the
// finding's currency: below it a finding is noise.
var MinMonthly = decimal.NewFromInt(50)

// Finding is one way to save, in one currency.
type Finding struct {
	Kind  Kind   `json:"kind"`
	Title string `json:"title"`
	// Detail says what the figure assumes.
	Detail   string `json:"detail"`
	Currency string `json:"currency"`
	// Monthly is the saving per month; zero when Priced is false.
	Monthly decimal.Decimal `json:"monthly_savings"`
	// Priced is false when no rate is known to price the finding (a
	// commitment without a discount): it is listed, not counted.
	Priced bool `json:"priced"`
	// Spend is what the evidence cost per month, for scale.
	Spend    decimal.Decimal `json:"monthly_spend"`
	Evidence []Evidence      `json:"evidence"`
	// MoreEvidence counts the resources left out of Evidence (it keeps the
	// MaxEvidence costliest).
	MoreEvidence int `json:"more_evidence"`
	// Window is the bills a per-month figure is scaled from, when the
	// finding uses its own (the cheaper-GPU finder); nil otherwise.
	Window *Window `json:"window,omitempty"`
	// Observed is set when the bills cover fewer than MonthlyMinDays days:
	// the finding is then what those days saved, not a figure per month,
	// and it is unpriced (it counts in no total).
	Observed *Observed `json:"observed,omitempty"`
	// key names the spend the finding is about (a GPU instance type, an LLM
	// model): findings with the same key are alternatives, counted once.
	key string
}

// Evidence is one resource's or model's charges behind a finding.
type Evidence struct {
	Provider     string          `json:"provider,omitempty"`
	Resource     string          `json:"resource,omitempty"`
	InstanceType string          `json:"instance_type,omitempty"`
	GPU          string          `json:"gpu,omitempty"`
	Model        string          `json:"model,omitempty"`
	Team         string          `json:"team,omitempty"`
	From         string          `json:"from"` // first day, YYYY-MM-DD, in the org's time zone
	To           string          `json:"to"`   // last day, included
	Days         int             `json:"days"`
	Hours        decimal.Decimal `json:"instance_hours"`
	GPUHours     decimal.Decimal `json:"gpu_hours"`
	Requests     int64           `json:"requests,omitempty"`
	Tokens       int64           `json:"tokens,omitempty"`
	Amount       decimal.Decimal `json:"amount"`
	// Charges is the number of charge rows behind GPU evidence. The LLM
	// usage rollup keeps requests and tokens, not rows: model evidence
	// leaves it out (docs/savings.md).
	Charges int64  `json:"charges,omitempty"`
	Note    string `json:"note,omitempty"`
}

// Window is the evidence window of a finding: the days of bills its
// per-month figure is scaled from, and how many of them the spend ran on.
type Window struct {
	From      string `json:"from"` // YYYY-MM-DD, first day
	To        string `json:"to"`   // last day, included
	Days      int    `json:"days"`
	UsageDays int    `json:"usage_days"`
}

// Observed is what a finding saved over the days of bills there are, when
// they are too few to scale to a month.
type Observed struct {
	Days    int64           `json:"days"`
	Savings decimal.Decimal `json:"savings"`
	Spend   decimal.Decimal `json:"spend"`
}

// Label says the observed saving with its period: "1,234.56 USD over 1 day
// of bills".
func (o Observed) Label(currency string) string {
	return quantity.FormatMoney(o.Savings, currency) + " over " + Days(o.Days) + " of bills"
}

// Days writes a count of days, singular or plural: "1 day", "9 days".
func Days[N int | int64](n N) string {
	if n == 1 {
		return "1 day"
	}
	return fmt.Sprintf("%d days", n)
}

// Amount is a sum in one currency.
type Amount struct {
	Currency string          `json:"currency"`
	Amount   decimal.Decimal `json:"amount"`
}

// Options are the what-if inputs.
type Options struct {
	// Now bounds the bills read (zero: time.Now()).
	Now time.Time
	// RoutingShare is the share of a model's requests moved to its cheaper
	// sibling, 0 to 1.
	RoutingShare decimal.Decimal
	// CommitDiscount is the 1-year commitment discount to price steady
	// usage at, 0 to 1; zero leaves commitment findings unpriced, since
	// the catalog has no commitment rates (docs/savings.md).
	CommitDiscount decimal.Decimal
}

// DefaultOptions are the options the page opens with.
func DefaultOptions() Options {
	return Options{RoutingShare: decimal.RequireFromString(DefaultRoutingShare)}
}

// Report is every finding for an org, and their total.
type Report struct {
	// From and To bound the bills read: [From, To), whole days in the
	// org's time zone.
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// Through is the last day of bills included, YYYY-MM-DD: the day before
	// To. Pages and the CLI show it, never To, which is the day after.
	Through string `json:"through"`
	// CoveredDays is how many days of that window the org has bills for;
	// amounts are scaled from them to a month.
	CoveredDays    decimal.Decimal `json:"covered_days"`
	RoutingShare   decimal.Decimal `json:"routing_share"`
	CommitDiscount decimal.Decimal `json:"commit_discount"`
	Findings       []Finding       `json:"findings"`
	// Totals is the saving per month in each currency, counting findings
	// about the same spend once, at the largest (docs/savings.md, "The total").
	Totals []Amount `json:"totals"`
	// Sources name the prices the findings use.
	Sources []string `json:"sources"`
}

// Total is the report's total in currency (zero when none).
func (r Report) Total(currency string) decimal.Decimal {
	for _, t := range r.Totals {
		if t.Currency == currency {
			return t.Amount
		}
	}
	return decimal.Zero
}

// ParsePercent reads a percentage from a form, query or flag ("40", "40%",
// "12.5") as a fraction between 0 and 1; field names it in errors.
func ParsePercent(field, s string) (decimal.Decimal, error) {
	s = strings.TrimSuffix(strings.TrimSpace(s), "%")
	d, err := quantity.Factor.ParseHuman(field, s)
	if err != nil {
		return decimal.Zero, err
	}
	if d.GreaterThan(decimal.NewFromInt(100)) {
		return decimal.Zero, advisor.BadInput("%s: %s%% is more than 100%%", field, s)
	}
	return d.Div(decimal.NewFromInt(100)), nil
}

// Find runs every finder over org's last WindowDays days of bills up to
// the last day they reach (never past opts.Now's day), at the org's prices
// (the catalog with its negotiated overrides). Amounts are scaled to a
// month from the days of that window the org has bills for.
func Find(ctx context.Context, st *store.Store, org store.Org, opts Options) (Report, error) {
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	if opts.RoutingShare.IsNegative() || opts.RoutingShare.GreaterThan(decimal.NewFromInt(1)) {
		return Report{}, advisor.BadInput("share must be between 0 and 100%%")
	}
	if opts.CommitDiscount.IsNegative() || !opts.CommitDiscount.LessThan(decimal.NewFromInt(1)) {
		return Report{}, advisor.BadInput("commit_discount must be at least 0 and below 100%%")
	}
	b, err := billDays(ctx, st, org, now)
	if err != nil {
		return Report{}, err
	}
	return find(ctx, st, org, opts, now, b)
}

// bills is the window of bills Find reads.
type bills struct {
	ok bool // false: the org has no bills up to today
	// from is the window's first day, to its last (the last day the bills
	// reach), first the first day of it with bills; civil dates.
	from, first, to time.Time
}

// billDays works out Find's window: whole days in the org's time zone, the
// last WindowDays up to the last day its bills reach (today at the latest).
func billDays(ctx context.Context, st *store.Store, org store.Org, now time.Time) (bills, error) {
	today := civil(now, org.Location())
	_, last, ok, err := st.SpendDays(ctx, org.ID, time.Time{}, today)
	if err != nil || !ok {
		return bills{}, wrap(err)
	}
	b := bills{ok: true, to: last, from: last.AddDate(0, 0, -(WindowDays - 1))}
	b.first, _, _, err = st.SpendDays(ctx, org.ID, b.from, b.to)
	return b, wrap(err)
}

func wrap(err error) error {
	if err != nil {
		return fmt.Errorf("savings: %w", err)
	}
	return nil
}

// find runs the finders over the window b (opts checked).
func find(ctx context.Context, st *store.Store, org store.Org, opts Options, now time.Time, b bills) (Report, error) {
	rep := Report{RoutingShare: opts.RoutingShare, CommitDiscount: opts.CommitDiscount, Findings: []Finding{}, Totals: []Amount{}}
	if !b.ok {
		return rep, nil
	}
	loc := org.Location()
	dayFrom, first, dayTo := b.from, b.first, b.to
	covered := int64(dayTo.Sub(first).Hours()/24) + 1
	w := window{loc: loc, days: covered, month: decimal.NewFromInt(MonthHours).Div(decimal.NewFromInt(covered * 24))}
	rep.CoveredDays = decimal.NewFromInt(covered)
	rep.From = time.Date(dayFrom.Year(), dayFrom.Month(), dayFrom.Day(), 0, 0, 0, 0, loc)
	rep.To = time.Date(dayTo.Year(), dayTo.Month(), dayTo.Day()+1, 0, 0, 0, 0, loc)
	rep.Through = dateOf(dayTo)

	prices, err := advisor.LoadOrgPrices(ctx, st, org.ID, advisor.PriceOverrides, now)
	if err != nil {
		return rep, fmt.Errorf("savings: %w", err)
	}
	rep.Sources = []string{
		"GPU prices: " + prices.Catalog.Source + " (as of " + prices.Catalog.AsOf + ")",
		"LLM prices: " + prices.LLM.Source + " (as of " + prices.LLM.AsOf + ")",
	}
	days, err := st.GPUResourceDays(ctx, org.ID, dayFrom, dayTo.AddDate(0, 0, 1))
	if err != nil {
		return rep, fmt.Errorf("savings: %w", err)
	}
	usage, err := st.LLMUsageByModel(ctx, org.ID, dayFrom, dayTo.AddDate(0, 0, 1))
	if err != nil {
		return rep, fmt.Errorf("savings: %w", err)
	}
	var fs []Finding
	fs = append(fs, alwaysOn(days, w)...)
	// The on-demand USD resources, by instance type, are what three
	// finders read: grouped once.
	onDemand := byInstanceType(byResource(days, onDemandUSD))
	fs = append(fs, spot(onDemand, prices.Catalog, w)...)
	fs = append(fs, cheaperGPU(days, onDemand, prices.Catalog)...)
	fs = append(fs, routing(usage, prices.LLM, opts.RoutingShare, w, dayFrom, dayTo)...)
	fs = append(fs, commitments(days, onDemand, opts.CommitDiscount)...)
	slices.SortStableFunc(fs, func(a, b Finding) int {
		if c := b.Monthly.Cmp(a.Monthly); c != 0 {
			return c
		}
		if c := cmp.Compare(slices.Index(Kinds, a.Kind), slices.Index(Kinds, b.Kind)); c != 0 {
			return c
		}
		return cmp.Compare(a.Title, b.Title)
	})
	rep.Findings = append(rep.Findings, fs...)
	rep.Totals = totals(fs)
	return rep, nil
}

// window is how the finders scale what they read to a month.
type window struct {
	loc *time.Location
	// days is how many days of bills the window covers.
	days int64
	// month multiplies an amount over the covered part of the window into
	// an amount per month.
	month decimal.Decimal
}

func (w window) monthly(d decimal.Decimal) decimal.Decimal { return d.Mul(w.month).Round(2) }

// scales says whether the window covers enough days to scale to a month
// (MonthlyMinDays).
func (w window) scales() bool { return w.days >= MonthlyMinDays }

// price sets f's figures from what it saved and cost over the window:
// per month when the window scales, else for the observed days only,
// unpriced. It reports false when the saving is noise (under MinMonthly,
// whichever the period).
func (w window) price(f *Finding, saved, cost decimal.Decimal) bool {
	if !w.scales() {
		saved = saved.Round(2)
		f.Observed = &Observed{Days: w.days, Savings: saved, Spend: cost.Round(2)}
		return !saved.LessThan(MinMonthly)
	}
	f.Monthly, f.Priced, f.Spend = w.monthly(saved), true, w.monthly(cost)
	return !f.Monthly.LessThan(MinMonthly)
}

// totals adds findings up per currency. Findings about the same spend are
// alternatives (stop the instance, or move it to spot): each key counts
// once, at the larger of its always-on findings added together and its
// largest other finding.
func totals(fs []Finding) []Amount {
	type sums struct{ alwaysOn, best decimal.Decimal }
	byKey := map[string]*sums{}
	var keys []string
	for _, f := range fs {
		if !f.Priced || !f.Monthly.IsPositive() {
			continue
		}
		k := f.Currency + "\x00" + f.key
		s := byKey[k]
		if s == nil {
			s = &sums{}
			byKey[k] = s
			keys = append(keys, k)
		}
		if f.Kind == KindAlwaysOn {
			s.alwaysOn = s.alwaysOn.Add(f.Monthly)
		} else if f.Monthly.GreaterThan(s.best) {
			s.best = f.Monthly
		}
	}
	per := map[string]decimal.Decimal{}
	var currencies []string
	for _, k := range keys {
		cur, _, _ := strings.Cut(k, "\x00")
		if _, ok := per[cur]; !ok {
			currencies = append(currencies, cur)
		}
		s := byKey[k]
		per[cur] = per[cur].Add(decimal.Max(s.alwaysOn, s.best))
	}
	slices.Sort(currencies)
	out := []Amount{}
	for _, c := range currencies {
		out = append(out, Amount{Currency: c, Amount: per[c]})
	}
	return out
}

func civil(t time.Time, loc *time.Location) time.Time {
	y, m, d := t.In(loc).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

func dateOf(t time.Time) string { return t.Format(time.DateOnly) }

// num writes a quantity with thousands separators and at most places
// decimals.
func num(d decimal.Decimal, places int32) string { return quantity.Group(d.Round(places).String()) }
