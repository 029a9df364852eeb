package web

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/budget"
	"github.com/burnrate/burnrate/store"
)

// Date range presets of the dashboard, by their value in the URL.
const (
	rangeThisMonth = "this-month"
	rangeLastMonth = "last-month"
	range7d        = "7d"
	range30d       = "30d"
	range90d       = "90d"
	rangeCustom    = "custom"
)

var rangePresets = []string{rangeThisMonth, rangeLastMonth, range7d, range30d, range90d, rangeCustom}

// maxRangeDays caps a view's length: two years of days is plenty for a
// chart, and keeps one request from summing an org's whole history daily.
const maxRangeDays = 732

// Anomalies: a day is anomalous when it spends more than anomalyFactor
// times the median of the anomalyWindow days before it, and more than
// anomalyMinimum (in its currency) — so that 3 cents after 1 cent is not.
const (
	anomalyWindow  = 7
	anomalyFactor  = 2
	anomalyMinimum = 50
)

// spendQuery is a dashboard or API view, as held in the URL.
type spendQuery struct {
	Range  string
	Filter store.SpendFilter
	Group  store.Dimension
	Chart  string // daily, cumulative
}

func unprocessable(format string, args ...any) error {
	return echo.NewHTTPError(http.StatusUnprocessableEntity, fmt.Sprintf(format, args...))
}

func parseDay(name, v string) (time.Time, error) {
	d, err := time.Parse(time.DateOnly, v)
	if err != nil {
		return time.Time{}, unprocessable("%s: %q is not a date: use YYYY-MM-DD", name, v)
	}
	return d, nil
}

// parseSpendQuery reads a view from q; today is the org's today. A view
// with no range is this month so far; from/to make it custom.
func parseSpendQuery(q url.Values, today time.Time) (spendQuery, error) {
	sq := spendQuery{Range: q.Get("range"), Group: store.Dimension(q.Get("group_by")), Chart: q.Get("chart")}
	if sq.Group == "" {
		sq.Group = store.Dimension(q.Get("group"))
	}
	if sq.Group == "" {
		sq.Group = store.DimProvider
	}
	if !sq.Group.ValidGroup() {
		return sq, unprocessable("group_by: %q is not one of provider, service, account, team, model, source", sq.Group)
	}
	if sq.Chart != "cumulative" {
		sq.Chart = "daily"
	}
	f := &sq.Filter
	from, to := q.Get("from"), q.Get("to")
	if sq.Range == "" {
		sq.Range = rangeThisMonth
		if from != "" || to != "" {
			sq.Range = rangeCustom
		}
	}
	monthStart := time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, time.UTC)
	switch sq.Range {
	case rangeThisMonth:
		f.From, f.To = monthStart, today
	case rangeLastMonth:
		f.From, f.To = monthStart.AddDate(0, -1, 0), monthStart.AddDate(0, 0, -1)
	case range7d, range30d, range90d:
		n := map[string]int{range7d: 7, range30d: 30, range90d: 90}[sq.Range]
		f.From, f.To = budget.AddDays(today, 1-n), today
	case rangeCustom:
		if from == "" || to == "" {
			return sq, unprocessable("from and to are both needed (YYYY-MM-DD, both days included)")
		}
		var err error
		if f.From, err = parseDay("from", from); err != nil {
			return sq, err
		}
		if f.To, err = parseDay("to", to); err != nil {
			return sq, err
		}
	default:
		return sq, unprocessable("range: %q is not one of %s", sq.Range, strings.Join(rangePresets, ", "))
	}
	if f.To.Before(f.From) {
		return sq, unprocessable("from (%s) is after to (%s)", f.From.Format(time.DateOnly), f.To.Format(time.DateOnly))
	}
	if budget.DaysBetween(f.From, f.To) >= maxRangeDays {
		return sq, unprocessable("the range is longer than %d days: pick a shorter one", maxRangeDays)
	}
	f.Provider, f.Service, f.Account = q.Get("provider"), q.Get("service"), q.Get("account")
	f.Team, f.Model, f.Source, f.Category = q.Get("team"), q.Get("model"), q.Get("source"), q.Get("category")
	switch c := store.CostBasis(q.Get("cost")); c {
	case "", store.CostBilled:
		f.Cost = store.CostBilled
	case store.CostEffective:
		f.Cost = c
	default:
		return sq, unprocessable("cost: %q is not billed or effective", c)
	}
	return sq, nil
}

// values is the view as URL parameters, custom ranges with their days.
func (sq spendQuery) values() url.Values {
	v := url.Values{}
	v.Set("range", sq.Range)
	if sq.Range == rangeCustom {
		v.Set("from", sq.Filter.From.Format(time.DateOnly))
		v.Set("to", sq.Filter.To.Format(time.DateOnly))
	}
	v.Set("group", string(sq.Group))
	if sq.Chart != "daily" {
		v.Set("chart", sq.Chart)
	}
	if sq.Filter.Cost == store.CostEffective {
		v.Set("cost", string(sq.Filter.Cost))
	}
	for d, val := range sq.Filter.Values() {
		if val != "" {
			v.Set(string(d), val)
		}
	}
	return v
}

// topGroups is how many groups of each currency a dashboard view lays out
// (series, daily table, models table), the largest by spend in the range;
// the rest are summed as one "Other". Without it a view of thousands of
// models held thousands of series of every day, hundreds of megabytes.
const topGroups = 25

// otherGroup is the key of the series that sums the groups beyond the
// top: Postgres text cannot hold a NUL byte, so no real group has it.
const otherGroup = "\x00other"

// otherName names what a row or series summing n left-out values of dim
// holds, for people and for exports alike.
func otherName(n int, dim string) string {
	if n == 1 {
		return "Other (1 more " + dim + ")"
	}
	return "Other (" + strconv.Itoa(n) + " more " + dim + "s)"
}

// series is one currency's daily spend, per group, over a run of days with
// no gaps.
type series struct {
	Currency string
	Days     []time.Time
	Groups   []string                     // largest total first; otherGroup, when there, last
	ByGroup  map[string][]decimal.Decimal // aligned with Days
	Totals   []decimal.Decimal            // per day, all groups
	Dim      store.Dimension              // what the groups are values of
	Other    int                          // how many groups otherGroup sums
}

// name is group g as shown and exported: itself, or for otherGroup what it
// sums.
func (s series) name(g string) string {
	if g == otherGroup {
		return otherName(s.Other, string(s.Dim))
	}
	return g
}

// total is the series' sum.
func (s series) total() decimal.Decimal {
	t := decimal.Zero
	for _, v := range s.Totals {
		t = t.Add(v)
	}
	return t
}

// buildSeries lays rows out per currency over every day from..to, missing
// days and groups at zero; rows marked Other go to otherGroup. dim is what
// the rows are grouped by. Currencies come in alphabetical order.
func buildSeries(rows []store.DaySpend, from, to time.Time, dim store.Dimension) []series {
	n := budget.DaysBetween(from, to) + 1
	byCur := map[string]*series{}
	groupTotals := map[string]map[string]decimal.Decimal{}
	for _, r := range rows {
		i := budget.DaysBetween(from, r.Day)
		if i < 0 || i >= n {
			continue
		}
		s := byCur[r.Currency]
		if s == nil {
			s = &series{Currency: r.Currency, ByGroup: map[string][]decimal.Decimal{}, Totals: make([]decimal.Decimal, n), Dim: dim}
			for d := 0; d < n; d++ {
				s.Days = append(s.Days, budget.AddDays(from, d))
			}
			byCur[r.Currency] = s
			groupTotals[r.Currency] = map[string]decimal.Decimal{}
		}
		key := r.Group
		if r.Other {
			key = otherGroup
			s.Other = max(s.Other, r.OtherGroups)
		}
		g := s.ByGroup[key]
		if g == nil {
			g = make([]decimal.Decimal, n)
			s.ByGroup[key] = g
		}
		g[i] = g[i].Add(r.Amount)
		s.Totals[i] = s.Totals[i].Add(r.Amount)
		groupTotals[r.Currency][key] = groupTotals[r.Currency][key].Add(r.Amount)
	}
	var out []series
	for cur, s := range byCur {
		gt := groupTotals[cur]
		for g := range s.ByGroup {
			s.Groups = append(s.Groups, g)
		}
		sort.Slice(s.Groups, func(i, j int) bool {
			if oi, oj := s.Groups[i] == otherGroup, s.Groups[j] == otherGroup; oi != oj {
				return oj
			}
			if c := gt[s.Groups[i]].Cmp(gt[s.Groups[j]]); c != 0 {
				return c > 0
			}
			return s.Groups[i] < s.Groups[j]
		})
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b series) int { return strings.Compare(a.Currency, b.Currency) })
	return out
}

// trim drops the days before from (kept only as a baseline).
func (s series) trim(from time.Time) series {
	i := budget.DaysBetween(s.Days[0], from)
	if i <= 0 {
		return s
	}
	t := s
	t.Days = s.Days[i:]
	t.Totals = s.Totals[i:]
	t.ByGroup = map[string][]decimal.Decimal{}
	var groups []string
	for _, g := range s.Groups {
		vs := s.ByGroup[g][i:]
		for _, v := range vs {
			if !v.IsZero() {
				t.ByGroup[g] = vs
				groups = append(groups, g)
				break
			}
		}
	}
	t.Groups = groups
	return t
}

func median(vs []decimal.Decimal) decimal.Decimal {
	if len(vs) == 0 {
		return decimal.Zero
	}
	s := slices.Clone(vs)
	slices.SortFunc(s, func(a, b decimal.Decimal) int { return a.Cmp(b) })
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return s[len(s)/2-1].Add(s[len(s)/2]).Div(decimal.NewFromInt(2))
}

// anomaly is a day that spent well above its trailing baseline, and the
// groups whose growth made it.
type anomaly struct {
	Day      time.Time
	Currency string
	Amount   decimal.Decimal
	Baseline decimal.Decimal // median of the anomalyWindow days before
	Drivers  []mover         // groups that grew most against their own medians
}

// findAnomalies looks at each day of s from index start on (the days
// before serve as baseline only).
func findAnomalies(s series, start int) []anomaly {
	var out []anomaly
	minimum := decimal.NewFromInt(anomalyMinimum)
	for i := max(start, anomalyWindow); i < len(s.Days); i++ {
		base := median(s.Totals[i-anomalyWindow : i])
		amount := s.Totals[i]
		if !base.IsPositive() || amount.LessThanOrEqual(minimum) || amount.LessThanOrEqual(base.Mul(decimal.NewFromInt(anomalyFactor))) {
			continue
		}
		a := anomaly{Day: s.Days[i], Currency: s.Currency, Amount: amount, Baseline: base}
		for _, g := range s.Groups {
			vs := s.ByGroup[g]
			gb := median(vs[i-anomalyWindow : i])
			if vs[i].GreaterThan(gb) {
				a.Drivers = append(a.Drivers, mover{Group: s.name(g), Currency: s.Currency, Before: gb, After: vs[i]})
			}
		}
		sortMovers(a.Drivers)
		if len(a.Drivers) > 3 {
			a.Drivers = a.Drivers[:3]
		}
		out = append(out, a)
	}
	return out
}

// mover is a group whose spend changed between two spans.
type mover struct {
	Group         string
	Currency      string
	Before, After decimal.Decimal
}

// Change is After - Before.
func (m mover) Change() decimal.Decimal { return m.After.Sub(m.Before) }

// Percent is the change relative to Before, "new" when Before is zero.
func (m mover) Percent() string {
	if m.Before.IsZero() {
		return "new"
	}
	return m.Change().Mul(decimal.NewFromInt(100)).Div(m.Before.Abs()).StringFixed(0) + "%"
}

func sortMovers(ms []mover) {
	sort.SliceStable(ms, func(i, j int) bool {
		if c := ms[i].Change().Abs().Cmp(ms[j].Change().Abs()); c != 0 {
			return c > 0
		}
		return ms[i].Group < ms[j].Group
	})
}

// movers compares each group's spend over the span days ending at index
// end (inclusive) with the span before it, largest change first.
func movers(s series, end, span, limit int) []mover {
	if end-2*span+1 < 0 {
		return nil
	}
	var out []mover
	for _, g := range s.Groups {
		vs := s.ByGroup[g]
		m := mover{Group: s.name(g), Currency: s.Currency}
		for i := end - span + 1; i <= end; i++ {
			m.After = m.After.Add(vs[i])
		}
		for i := end - 2*span + 1; i <= end-span; i++ {
			m.Before = m.Before.Add(vs[i])
		}
		if !m.Change().IsZero() {
			out = append(out, m)
		}
	}
	sortMovers(out)
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

// lastDayWithSpend is the index of the last day of s that spent anything
// (bills arrive late, so today is often empty), or -1.
func lastDayWithSpend(s series) int {
	for i := len(s.Totals) - 1; i >= 0; i-- {
		if !s.Totals[i].IsZero() {
			return i
		}
	}
	return -1
}

// apiSpend is GET /api/v1/spend's body.
type apiSpend struct {
	Days   []apiSpendDay     `json:"days"`
	Totals map[string]string `json:"totals"`
}

type apiSpendDay struct {
	Date     string            `json:"date"`
	Currency string            `json:"currency"`
	Groups   map[string]string `json:"groups"`
}

// handleAPISpend serves daily spend grouped by one dimension, from
// daily_spend: both dates included, days in the org's time zone.
func (s *Server) handleAPISpend(c echo.Context) error {
	q := c.QueryParams()
	if q.Get("from") == "" || q.Get("to") == "" {
		return unprocessable("from and to are required: ?from=YYYY-MM-DD&to=YYYY-MM-DD (both days included)")
	}
	if q.Get("range") != "" && q.Get("range") != rangeCustom {
		return unprocessable("range is not supported here: give from and to")
	}
	org := currentOrg(c)
	sq, err := parseSpendQuery(q, budget.Day(time.Now(), org.Location()))
	if err != nil {
		return err
	}
	rows, err := s.db(c).SpendByDay(c.Request().Context(), org.ID, sq.Filter, sq.Group)
	if err != nil {
		return err
	}
	out := apiSpend{Days: []apiSpendDay{}, Totals: map[string]string{}}
	totals := map[string]decimal.Decimal{}
	for _, r := range rows {
		date := r.Day.Format(time.DateOnly)
		if n := len(out.Days); n == 0 || out.Days[n-1].Date != date || out.Days[n-1].Currency != r.Currency {
			out.Days = append(out.Days, apiSpendDay{Date: date, Currency: r.Currency, Groups: map[string]string{}})
		}
		out.Days[len(out.Days)-1].Groups[r.Group] = r.Amount.String()
		totals[r.Currency] = totals[r.Currency].Add(r.Amount)
	}
	for cur, v := range totals {
		out.Totals[cur] = v.String()
	}
	return c.JSON(http.StatusOK, out)
}
