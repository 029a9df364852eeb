package savings

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/advisor"
	"github.com/burnrate/burnrate/pricing"
	"github.com/burnrate/burnrate/quantity"
	"github.com/burnrate/burnrate/store"
)

// resource is one GPU resource's days, merged across purchase kinds unless
// the caller kept only one.
type resource struct {
	provider, id, instanceType, gpu, currency string
	gpuCount                                  decimal.Decimal
	days                                      map[time.Time]*store.GPUResourceDay
	all                                       *resTotals // over every day, once computed
}

// resTotals are a resource's sums over every one of its days.
type resTotals struct {
	first, last           time.Time
	hours, gpuHours, cost decimal.Decimal
	charges               int64
	n                     int
}

// whole is the resource's sums over all its days, computed once: the
// finders ask for them of every resource several times.
func (r *resource) whole() *resTotals {
	if r.all == nil {
		t := &resTotals{}
		t.first, t.last = r.span()
		t.hours, t.gpuHours, t.cost, t.charges, t.n = r.sum(t.first, t.last)
		r.all = t
	}
	return r.all
}

func (r *resource) sum(from, to time.Time) (hours, gpuHours, cost decimal.Decimal, charges int64, n int) {
	for d, v := range r.days {
		if d.Before(from) || d.After(to) {
			continue
		}
		hours, gpuHours, cost = hours.Add(v.InstanceHours()), gpuHours.Add(v.GPUHours), cost.Add(v.Cost)
		charges += v.Charges
		n++
	}
	return
}

func (r *resource) span() (first, last time.Time) {
	for d := range r.days {
		if first.IsZero() || d.Before(first) {
			first = d
		}
		if d.After(last) {
			last = d
		}
	}
	return first, last
}

func (r *resource) evidence(from, to time.Time) Evidence {
	var hours, gpuHours, cost decimal.Decimal
	var charges int64
	if t := r.whole(); from.Equal(t.first) && to.Equal(t.last) {
		hours, gpuHours, cost, charges = t.hours, t.gpuHours, t.cost, t.charges
	} else {
		hours, gpuHours, cost, charges, _ = r.sum(from, to)
	}
	return Evidence{
		Provider: r.provider, Resource: r.id, InstanceType: r.instanceType, GPU: r.gpu,
		From: dateOf(from), To: dateOf(to), Days: int(to.Sub(from).Hours()/24) + 1,
		Hours: hours.Round(2), GPUHours: gpuHours.Round(2), Amount: cost.Round(2), Charges: charges,
	}
}

// byResource groups rows that keep accepts by resource, merging a day's
// purchase kinds; resources come in the rows' order.
func byResource(rows []store.GPUResourceDay, keep func(store.GPUResourceDay) bool) []*resource {
	idx := map[string]*resource{}
	var out []*resource
	for _, d := range rows {
		if !keep(d) {
			continue
		}
		k := strings.Join([]string{d.Provider, d.ResourceID, d.InstanceType, d.GPUType, d.Currency}, "\x00")
		r := idx[k]
		if r == nil {
			r = &resource{provider: d.Provider, id: d.ResourceID, instanceType: d.InstanceType, gpu: d.GPUType,
				currency: d.Currency, days: map[time.Time]*store.GPUResourceDay{}}
			idx[k] = r
			out = append(out, r)
		}
		r.gpuCount = decimal.Max(r.gpuCount, d.GPUCount)
		day := r.days[d.Day]
		if day == nil {
			c := d
			r.days[d.Day] = &c
			continue
		}
		day.GPUHours, day.Cost, day.Charges = day.GPUHours.Add(d.GPUHours), day.Cost.Add(d.Cost), day.Charges+d.Charges
		day.GPUCount = decimal.Max(day.GPUCount, d.GPUCount)
		if day.Team != d.Team {
			day.Team = ""
		}
		day.Untagged = day.Untagged && d.Untagged
	}
	return out
}

// group is the resources of one provider's instance type in one currency.
type group struct {
	provider, instanceType, gpu, currency string
	gpuCount                              decimal.Decimal
	resources                             []*resource
}

func byInstanceType(rs []*resource) []*group {
	idx := map[string]*group{}
	var out []*group
	for _, r := range rs {
		k := r.provider + "\x00" + r.instanceType + "\x00" + r.currency
		g := idx[k]
		if g == nil {
			g = &group{provider: r.provider, instanceType: r.instanceType, gpu: r.gpu, currency: r.currency}
			idx[k] = g
			out = append(out, g)
		}
		g.gpuCount = decimal.Max(g.gpuCount, r.gpuCount)
		g.resources = append(g.resources, r)
	}
	return out
}

func (g *group) key() string { return "gpu:" + g.provider + "/" + g.instanceType }

func (g *group) sum() (hours, gpuHours, cost decimal.Decimal) {
	for _, r := range g.resources {
		t := r.whole()
		hours, gpuHours, cost = hours.Add(t.hours), gpuHours.Add(t.gpuHours), cost.Add(t.cost)
	}
	return
}

// evidence is the group's resources, the costliest first, at most
// MaxEvidence of them, and how many more there are. Only those it lists
// are turned into Evidence: a group can hold tens of thousands.
func (g *group) evidence() ([]Evidence, int) {
	rs := slices.Clone(g.resources)
	slices.SortFunc(rs, func(a, b *resource) int {
		if c := b.whole().cost.Cmp(a.whole().cost); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	n := min(len(rs), MaxEvidence)
	out := make([]Evidence, 0, n)
	for _, r := range rs[:n] {
		t := r.whole()
		out = append(out, r.evidence(t.first, t.last))
	}
	return out, len(rs) - n
}

// latestDay is the last day any GPU row is on.
func latestDay(rows []store.GPUResourceDay) time.Time {
	var last time.Time
	for _, d := range rows {
		if d.Day.After(last) {
			last = d.Day
		}
	}
	return last
}

func onDemandUSD(d store.GPUResourceDay) bool {
	return d.Purchase == store.PurchaseOnDemand && d.Currency == "USD"
}

func label(r *resource) string {
	if r.id == "" {
		return r.instanceType + " (no resource id)"
	}
	return r.instanceType + " " + r.id
}

// alwaysOn finds GPU resources that ran about 24 hours a day for at least
// AlwaysOnMinDays days up to the end of the bills, on days none of whose
// charges carried a team tag. Bills carry no utilisation, so an owner is the
// one signal a bill gives that someone uses it; stopping one saves its
// whole cost.
func alwaysOn(rows []store.GPUResourceDay, w window) []Finding {
	last := latestDay(rows)
	full := decimal.NewFromFloat(FullDayHours)
	var out []Finding
	for _, r := range byResource(rows, func(d store.GPUResourceDay) bool { return d.ResourceID != "" }) {
		isFull := func(day time.Time) bool {
			v, ok := r.days[day]
			return ok && v.InstanceHours().GreaterThanOrEqual(full)
		}
		end := last
		if !isFull(end) { // the last day of a bill is often partial
			end = end.AddDate(0, 0, -1)
		}
		start, n := end, 0
		for d := end; isFull(d); d = d.AddDate(0, 0, -1) {
			start, n = d, n+1
		}
		if n < AlwaysOnMinDays {
			continue
		}
		owned, tagged := false, false
		for d := start; !d.After(end); d = d.AddDate(0, 0, 1) {
			owned = owned || r.days[d].Team != ""
			tagged = tagged || !r.days[d].Untagged
		}
		if owned {
			continue
		}
		ev := r.evidence(start, end)
		_, _, cost, _, _ := r.sum(start, end)
		perDay := cost.Div(decimal.NewFromInt(int64(n)))
		monthly := perDay.Mul(decimal.NewFromInt(MonthHours)).Div(decimal.NewFromInt(24)).Round(2)
		if monthly.LessThan(MinMonthly) {
			continue
		}
		ev.Note = "no team tag"
		if !tagged {
			ev.Note = "no tags at all"
		}
		out = append(out, Finding{
			Kind: KindAlwaysOn, Currency: r.currency, Monthly: monthly, Priced: true, Spend: monthly,
			Title: fmt.Sprintf("%s running 24/7 for %d days, %s/day, %s", label(r), n, quantity.FormatMoney(perDay, r.currency), ev.Note),
			Detail: "Bills show no GPU utilisation; a GPU instance that runs around the clock and that no team tag claims is " +
				"often forgotten. Stopping it saves its whole cost. If it is needed, tag it with your team tag and it leaves this list.",
			Evidence: []Evidence{ev}, key: "gpu:" + r.provider + "/" + r.instanceType,
		})
	}
	return out
}

// spot finds on-demand USD hours of instance types whose catalog spot price
// is at most SpotMaxRatio of on-demand, leaving out resources that ran
// SteadyHoursPerDay or more a day on average (services, which need
// on-demand capacity or several replicas). The spot cost includes the
// advisor's interruption overhead (re-run work, restarts).
func spot(groups []*group, cat *pricing.Catalog, w window) []Finding {
	ratio := decimal.RequireFromString(SpotMaxRatio)
	overhead := decimal.NewFromFloat(pricing.DefaultAssumptions().SpotOverhead()).Round(4)
	steady := decimal.NewFromInt(SteadyHoursPerDay)
	var out []Finding
	for _, g := range groups {
		in, ok := cat.Instance(advisor.CatalogProvider(g.provider), g.instanceType)
		if !ok || in.OnDemand == nil || in.Spot == nil || in.Suspicious || in.Spot.GreaterThan(in.OnDemand.Mul(ratio)) {
			continue
		}
		kept := *g
		kept.resources = nil
		for _, r := range g.resources {
			t := r.whole()
			if t.n > 0 && t.hours.Div(decimal.NewFromInt(int64(t.n))).GreaterThanOrEqual(steady) {
				continue
			}
			kept.resources = append(kept.resources, r)
		}
		if len(kept.resources) == 0 {
			continue
		}
		hours, _, cost := kept.sum()
		if !hours.IsPositive() {
			continue
		}
		spotCost := hours.Mul(*in.Spot).Mul(overhead)
		paid := cost.Div(hours)
		f := Finding{
			Kind: KindSpot, Currency: "USD",
			Title: fmt.Sprintf("%s on-demand hours of %s could run on spot: %s/h in the catalog against %s/h paid",
				num(hours, 1), g.instanceType, quantity.FormatMoney(*in.Spot, "USD"), quantity.FormatMoney(paid, "USD")),
			Detail: fmt.Sprintf("For jobs that checkpoint and tolerate interruption: these resources ran less than %d hours a day "+
				"on average. Spot price from %s (%s), times %s for interruptions (re-run work and restarts, as the GPU advisor assumes).",
				SteadyHoursPerDay, catalogName(in), in.Source, overhead.String()),
			key: g.key(),
		}
		if !w.price(&f, cost.Sub(spotCost), cost) {
			continue
		}
		out = append(out, f)
		out[len(out)-1].Evidence, out[len(out)-1].MoreEvidence = kept.evidence()
	}
	return out
}

// cheaperGPU compares what the org paid per GPU-hour on demand, per
// instance type, with the cheapest on-demand catalog offer of the same GPU
// and GPUs per instance elsewhere (trusted prices only: no marketplace
// offers, no prices flagged as suspicious). A move is a standing decision,
// so it is priced on sustained usage only: the type must have run on at
// least CheaperMinDays days of the GPU bills, and the saving is scaled to a
// month from the days those bills cover, never from a burst's own days
// (docs/savings.md, "Cheaper GPU").
func cheaperGPU(rows []store.GPUResourceDay, groups []*group, cat *pricing.Catalog) []Finding {
	ratio := decimal.RequireFromString(CheaperMaxRatio)
	first, last := daySpan(rows)
	if first.IsZero() {
		return nil
	}
	observed := int(last.Sub(first).Hours()/24) + 1
	month := decimal.NewFromInt(MonthHours).Div(decimal.NewFromInt(int64(observed) * 24))
	var out []Finding
	insts := cat.Instances()
	for _, g := range groups {
		_, gpuHours, cost := g.sum()
		if !gpuHours.IsPositive() {
			continue
		}
		used := g.usageDays()
		if used < CheaperMinDays {
			continue
		}
		gpu, _ := pricing.NormalizeGPU(g.gpu)
		paid := cost.Div(gpuHours)
		var best *pricing.Instance
		var bestRate decimal.Decimal
		for i, in := range insts {
			if in.OnDemand == nil || in.Suspicious || in.Fractional() || in.Provider == "vast" || in.GPU != gpu ||
				!decimal.NewFromFloat(in.GPUCount).Equal(g.gpuCount) ||
				(in.Provider == advisor.CatalogProvider(g.provider) && strings.EqualFold(in.InstanceType, g.instanceType)) {
				continue
			}
			rate := in.OnDemand.Div(decimal.NewFromFloat(in.GPUCount))
			if best == nil || rate.LessThan(bestRate) {
				best, bestRate = &insts[i], rate
			}
		}
		if best == nil || bestRate.GreaterThan(paid.Mul(ratio)) {
			continue
		}
		monthly := gpuHours.Mul(paid.Sub(bestRate)).Mul(month).Round(2)
		if monthly.LessThan(MinMonthly) {
			continue
		}
		out = append(out, Finding{
			Kind: KindCheaperGPU, Currency: "USD", Monthly: monthly, Priced: true, Spend: cost.Mul(month).Round(2),
			Title: fmt.Sprintf("%s GPU-hours on %s %s at %s/GPU-hour; %s has the same %s× %s at %s/GPU-hour",
				num(gpuHours, 1), g.provider, g.instanceType, quantity.FormatMoney(paid, "USD"), catalogName(*best),
				num(g.gpuCount, 3), gpu, quantity.FormatMoney(bestRate, "USD")),
			Detail: fmt.Sprintf("Used on %d of the %d days of GPU bills from %s to %s; the saving per month is what those days "+
				"saved, scaled to a month from the %d days. Same GPU, same GPUs per machine, on demand. Price from %s (%s). "+
				"Moving has its own costs (data transfer, another account, capacity), which this figure does not include.",
				used, observed, dateOf(first), dateOf(last), observed, catalogName(*best), priceSource(*best)),
			Window: &Window{From: dateOf(first), To: dateOf(last), Days: observed, UsageDays: used},
			key:    g.key(),
		})
		out[len(out)-1].Evidence, out[len(out)-1].MoreEvidence = g.evidence()
	}
	return out
}

// daySpan is the first and last day of any GPU row.
func daySpan(rows []store.GPUResourceDay) (first, last time.Time) {
	for _, d := range rows {
		if first.IsZero() || d.Day.Before(first) {
			first = d.Day
		}
		if d.Day.After(last) {
			last = d.Day
		}
	}
	return first, last
}

// usageDays counts the distinct days any of the group's resources ran.
func (g *group) usageDays() int {
	seen := map[time.Time]bool{}
	for _, r := range g.resources {
		for d, v := range r.days {
			if v.GPUHours.IsPositive() {
				seen[d] = true
			}
		}
	}
	return len(seen)
}

// commitments finds the on-demand usage of each instance type that ran
// every hour of every day of the GPU bills (at least CommitmentMinDays):
// the part a 1-year savings plan or committed use discount would cover at
// no risk. It is priced at discount when one is given; Burnrate's catalog
// has no commitment rates.
func commitments(rows []store.GPUResourceDay, groups []*group, discount decimal.Decimal) []Finding {
	first, last := daySpan(rows)
	if first.IsZero() {
		return nil
	}
	spanDays := int(last.Sub(first).Hours()/24) + 1
	if spanDays < CommitmentMinDays {
		return nil
	}
	day := decimal.NewFromInt(24)
	var out []Finding
	for _, g := range groups {
		baseline := decimal.Zero
		for i := range spanDays {
			d := first.AddDate(0, 0, i)
			h := decimal.Zero
			for _, r := range g.resources {
				if v, ok := r.days[d]; ok {
					h = h.Add(v.InstanceHours())
				}
			}
			inst := h.Div(day)
			if i == 0 || inst.LessThan(baseline) {
				baseline = inst
			}
		}
		baseline = baseline.RoundFloor(2)
		if !baseline.IsPositive() {
			continue
		}
		hours, _, cost := g.sum()
		rate := cost.Div(hours)
		steadyMonth := baseline.Mul(decimal.NewFromInt(MonthHours)).Mul(rate).Round(2)
		if steadyMonth.LessThan(MinMonthly) {
			continue
		}
		f := Finding{
			Kind: KindCommitment, Currency: "USD", Spend: steadyMonth,
			Title: fmt.Sprintf("%s× %s ran on demand every hour of %d days: %s/month of steady spend",
				num(baseline, 2), g.instanceType, spanDays, quantity.FormatMoney(steadyMonth, "USD")),
			key: g.key(),
		}
		f.Evidence, f.MoreEvidence = g.evidence()
		if discount.IsPositive() {
			f.Priced, f.Monthly = true, steadyMonth.Mul(discount).Round(2)
			f.Detail = fmt.Sprintf("At the %s%% 1-year discount you entered, on the steady part only (%s/h paid now). "+
				"A commitment is paid whether used or not: cover no more than the least that ran.",
				num(discount.Mul(decimal.NewFromInt(100)), 2), quantity.FormatMoney(rate, "USD"))
		} else {
			f.Detail = "Burnrate's price catalog has no 1-year savings plan or committed use rates for GPU instances, so this " +
				"is not priced: enter the discount your provider quotes for " + g.instanceType + " to price it."
		}
		if f.Priced && f.Monthly.LessThan(MinMonthly) {
			continue
		}
		out = append(out, f)
	}
	return out
}

func catalogName(in pricing.Instance) string { return in.Provider + " " + in.InstanceType }

// priceSource says where an instance's price comes from, and its region
// when it has one (a negotiated price may have none).
func priceSource(in pricing.Instance) string {
	if in.Region == "" {
		return in.Source
	}
	return in.Source + ", region " + in.Region
}
