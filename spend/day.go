package spend

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/budget"
	"github.com/burnrate/burnrate/store"
)

// DayDrivers is how many cost drivers of each currency a DayReport lists.
const DayDrivers = 10

// DayReport is what an org spent on one day, per currency, against the day
// before: the morning digest's numbers. It is computed as of the end of
// Day: the month-to-date cards count no spend after Day, and forecast the
// rest of the month as budget.ForecastPeriod does on the basis asked
// (the ForecastWindow days up to Day, or up to the last day every source
// has delivered).
type DayReport struct {
	Day        time.Time
	Group      store.Dimension
	Currencies []DayCurrency // alphabetical; every currency spent in this month or last up to Day
}

// DayCurrency is one currency of a DayReport.
type DayCurrency struct {
	Currency  string
	Spent     decimal.Decimal // on Day
	DayBefore decimal.Decimal // on the day before
	// Groups is Day's spend by the report's group, largest first, with
	// the groups beyond TopGroups summed in a last one named for what it
	// holds; groups that spent nothing on Day are left out.
	Groups []GroupSpend
	// Movers are the groups whose spend changed most from the day before,
	// largest change first (at most TopMovers).
	Movers []Mover
	// Anomaly is set when Day spent well above its trailing median.
	Anomaly *Anomaly
	// Drivers are Day's largest provider/service/account/model slices
	// (at most DayDrivers).
	Drivers []store.Driver
	// What the money bought on Day: GPU-hours by GPU type and tokens by
	// model, largest spend first, and their sums.
	GPUs         []store.GPUUsage
	GPUHours     decimal.Decimal
	Models       []store.ModelUsage // TopModels, the rest folded
	InputTokens  int64
	OutputTokens int64
	Requests     int64
	Month        MonthCard // Day's month up to Day, and its forecast
}

// Change is Spent minus DayBefore.
func (c DayCurrency) Change() decimal.Decimal { return c.Spent.Sub(c.DayBefore) }

// Percent is the change relative to the day before, "new" when the day
// before spent nothing.
func (c DayCurrency) Percent() string {
	return Mover{Before: c.DayBefore, After: c.Spent}.Percent()
}

// GroupSpend is one group's spend on a day.
type GroupSpend struct {
	Group  string // as shown: "" is a group without a value, Other names what it sums
	Amount decimal.Decimal
}

// Day reports what orgID spent on day (a day in the org's time zone),
// grouped by group (provider when ""), its month's forecast on basis at
// (budget.EndOf(day), or freshness's for the org). It reads daily_spend
// only.
func Day(ctx context.Context, st *store.Store, orgID int64, day time.Time, group store.Dimension, at budget.Basis) (DayReport, error) {
	if group == "" {
		group = store.DimProvider
	}
	r := DayReport{Day: day, Group: group}
	// One query for the series (day with its AnomalyWindow days before,
	// for the anomaly baseline and the day before) and the month cards
	// (the first of last month on); groups ranked by the window's spend.
	base := budget.AddDays(day, -AnomalyWindow)
	from := time.Date(day.Year(), day.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, -1, 0)
	if base.Before(from) {
		from = base
	}
	rows, err := st.SpendByDayTop(ctx, orgID, store.SpendFilter{From: from, To: day}, group,
		store.TopGroups{N: TopGroups, From: base, To: day})
	if err == nil {
		rows, err = withUnmodelled(ctx, st, orgID, store.SpendFilter{From: from, To: day}, group, rows)
	}
	if err != nil {
		return r, err
	}
	cards := map[string]MonthCard{}
	at.Day = day
	for _, c := range monthCards(rows, at) {
		cards[c.Currency] = c
	}
	breakdown, err := st.SpendBreakdownTop(ctx, orgID, store.SpendFilter{From: day, To: day}, DayDrivers)
	if err != nil {
		return r, err
	}
	for _, whole := range Build(rows, from, day, group) {
		s := whole.Trim(base)
		last := len(s.Days) - 1
		c := DayCurrency{Currency: s.Currency, Month: cards[s.Currency]}
		if last >= 0 {
			c.Spent = s.Totals[last]
			if last >= 1 {
				c.DayBefore = s.Totals[last-1]
			}
			c.Groups = dayGroups(s, last)
			c.Movers = Movers(s, last, 1, TopMovers)
			// Judged on the whole series: Anomalies skips the days before
			// its first spend, which the trimmed week cannot tell.
			if as := Anomalies(whole, len(whole.Days)-1); len(as) > 0 {
				c.Anomaly = &as[0]
			}
		}
		for _, dr := range breakdown.Drivers {
			if dr.Currency == s.Currency && len(c.Drivers) < DayDrivers {
				c.Drivers = append(c.Drivers, dr)
			}
		}
		for _, g := range breakdown.GPUs {
			if g.Currency == s.Currency {
				c.GPUs = append(c.GPUs, g)
				c.GPUHours = c.GPUHours.Add(g.GPUHours)
			}
		}
		for _, m := range FoldModels(breakdown.Models, TopModels) {
			if m.Currency == s.Currency {
				c.Models = append(c.Models, m)
				c.InputTokens += m.InputTokens
				c.OutputTokens += m.OutputTokens
				c.Requests += m.Requests
			}
		}
		r.Currencies = append(r.Currencies, c)
	}
	return r, nil
}

// dayGroups is the spend of each group of s on its day i, largest first,
// the folded rest last; groups that spent nothing that day are left out.
func dayGroups(s Series, i int) []GroupSpend {
	var keys []string
	for _, g := range s.Groups {
		if !s.ByGroup[g][i].IsZero() {
			keys = append(keys, g)
		}
	}
	// s.Groups is ranked over the whole series; the day has its own order.
	slices.SortStableFunc(keys, func(a, b string) int {
		if oa, ob := a == OtherGroup, b == OtherGroup; oa != ob {
			if oa {
				return 1
			}
			return -1
		}
		if c := s.ByGroup[b][i].Cmp(s.ByGroup[a][i]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	out := make([]GroupSpend, 0, len(keys))
	for _, g := range keys {
		out = append(out, GroupSpend{Group: s.Name(g), Amount: s.ByGroup[g][i]})
	}
	return out
}
