package store_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/budget"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// spendData is a generated data set: charges spread over days around
// daylight-saving changes in New York, several currencies, GPU and LLM rows.
type spendData struct {
	org     store.Org
	loc     *time.Location
	charges []store.Charge
	first   time.Time // first day with charges (org's zone)
	last    time.Time
}

var (
	propProviders  = []string{"AWS", "Google Cloud", "OpenAI", "Anthropic"}
	propServices   = []string{"EC2", "S3", "Vertex", "API", "LiteLLM proxy"}
	propAccounts   = []string{"111", "222", "proj_ml", ""}
	propTeams      = []string{"ml", "platform", "inference", ""}
	propModels     = []string{"", "", "gpt-4o", "claude-sonnet-4-5"}
	propSources    = []string{"aws-cur", "focus", "openai-usage"}
	propCategories = []string{"Usage", "Usage", "Usage", "Tax", "Credit"}
	propGPUs       = []string{"", "", "A100", "H100"}
	propCurrencies = []string{"USD", "USD", "EUR"}
	propEnvs       = []string{"prod", "dev", "staging"}
)

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func genSpendData(t *testing.T, st *store.Store, seed uint64) spendData {
	t.Helper()
	ctx := context.Background()
	org, _ := storetest.Org(t, st, storetest.OrgOpts{})
	org, err := st.UpdateOrg(ctx, org.ID, store.OrgUpdate{Name: org.Name, TimeZone: "America/New_York", Currency: "USD", TeamTagKey: "team"})
	if err != nil {
		t.Fatal(err)
	}
	loc := org.Location()
	r := rand.New(rand.NewPCG(seed, 42))
	// 2026-02-20 .. 2026-04-10 in New York spans the March change.
	base := time.Date(2026, 2, 20, 0, 0, 0, 0, loc)
	data := spendData{org: org, loc: loc}
	for imp := 0; imp < 3; imp++ {
		var rows []store.Charge
		for i := 0; i < 700; i++ {
			start := base.Add(time.Duration(r.IntN(50*24*60)) * time.Minute)
			cents := r.IntN(200_00) - 10_00 // credits are negative
			billed := decimal.New(int64(cents), -2).Add(decimal.New(int64(r.IntN(1000)), -7))
			ch := store.Charge{
				Line: i + 2, Source: pick(r, propSources), ProviderName: pick(r, propProviders), ServiceName: pick(r, propServices),
				SubAccountID: pick(r, propAccounts), ChargeCategory: pick(r, propCategories),
				ChargePeriodStart: start, ChargePeriodEnd: start.Add(time.Hour),
				BilledCost: billed, EffectiveCost: billed.Mul(decimal.RequireFromString("0.9")), ListCost: billed,
				BillingCurrency: pick(r, propCurrencies), Team: pick(r, propTeams), Model: pick(r, propModels),
				GPUType: pick(r, propGPUs), BillingAccountID: fmt.Sprint("acct", imp),
				Tags: map[string]string{"env": pick(r, propEnvs)},
			}
			if ch.Team != "" {
				ch.Tags["team"] = ch.Team
			}
			if ch.GPUType != "" {
				ch.GPUHours = decimal.New(int64(r.IntN(800)), -1)
			}
			if ch.Model != "" {
				ch.InputTokens, ch.OutputTokens, ch.CachedTokens = int64(r.IntN(1e6)), int64(r.IntN(1e5)), int64(r.IntN(1e4))
			}
			rows = append(rows, ch)
			day := budget.Day(start, loc)
			if data.first.IsZero() || day.Before(data.first) {
				data.first = day
			}
			if day.After(data.last) {
				data.last = day
			}
		}
		importRowsIn(t, st, org, loc, rows)
		data.charges = append(data.charges, rows...)
	}
	return data
}

func importRowsIn(t *testing.T, st *store.Store, org store.Org, loc *time.Location, rows []store.Charge) {
	t.Helper()
	ctx := context.Background()
	imp, err := st.CreateImport(ctx, store.NewImport{OrgID: org.ID, FileName: "gen.csv", SHA256: []byte(fmt.Sprint(time.Now().UnixNano(), len(rows))), Via: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.InTx(ctx, func(tx *store.Store) error {
		_, err := tx.WriteCharges(ctx, org.ID, imp.ID, loc, store.DedupeNone, &sliceSource{rows: rows})
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// matches is the filter applied to one charge, by hand.
func (d spendData) matches(f store.SpendFilter, c store.Charge) bool {
	day := budget.Day(c.ChargePeriodStart, d.loc)
	if day.Before(f.From) || day.After(f.To) {
		return false
	}
	for _, m := range []struct{ want, got string }{
		{f.Provider, c.ProviderName}, {f.Service, c.ServiceName}, {f.Account, c.SubAccountID}, {f.Team, c.Team},
		{f.Model, c.Model}, {f.Source, c.Source}, {f.Category, c.ChargeCategory},
	} {
		if m.want != "" && m.want != m.got {
			return false
		}
	}
	return true
}

func (d spendData) randomFilter(r *rand.Rand) store.SpendFilter {
	span := budget.DaysBetween(d.first, d.last)
	from := d.first.AddDate(0, 0, r.IntN(span+1)-3)
	to := from.AddDate(0, 0, r.IntN(40))
	f := store.SpendFilter{From: from, To: to, Cost: pick(r, []store.CostBasis{store.CostBilled, store.CostAmortized, ""})}
	maybe := func(xs []string) string {
		if r.IntN(3) == 0 {
			return pick(r, xs)
		}
		return ""
	}
	f.Provider, f.Service, f.Account, f.Team = maybe(propProviders), maybe(propServices), maybe(propAccounts), maybe(propTeams)
	f.Model, f.Source, f.Category = maybe(propModels), maybe(propSources), maybe(propCategories)
	return f
}

func cost(f store.SpendFilter, c store.Charge) decimal.Decimal {
	if f.Cost == store.CostAmortized {
		return c.EffectiveCost
	}
	return c.BilledCost
}

func groupOf(g store.Dimension, c store.Charge) string {
	switch g {
	case store.DimProvider:
		return c.ProviderName
	case store.DimService:
		return c.ServiceName
	case store.DimAccount:
		return c.SubAccountID
	case store.DimTeam:
		return c.Team
	case store.DimModel:
		return c.Model
	case store.DimSource:
		return c.Source
	}
	return ""
}

// TestDashboardTotalsEqualCharges is a property test: for random filters
// over a generated data set, every figure the dashboard reads from
// daily_spend equals the same figure computed from the charges by hand.
func TestDashboardTotalsEqualCharges(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	data := genSpendData(t, st, 7)
	r := rand.New(rand.NewPCG(99, 1))
	nonEmpty := 0
	for iter := 0; iter < 150; iter++ {
		f := data.randomFilter(r)
		group := pick(r, append([]store.Dimension{""}, store.GroupDimensions...))

		want := map[string]decimal.Decimal{}
		wantByDay := map[string]decimal.Decimal{}
		wantGPUHours := map[string]decimal.Decimal{}
		wantTokens := map[string]int64{}
		for _, c := range data.charges {
			if !data.matches(f, c) {
				continue
			}
			want[c.BillingCurrency] = want[c.BillingCurrency].Add(cost(f, c))
			k := fmt.Sprint(budget.Day(c.ChargePeriodStart, data.loc).Format(time.DateOnly), "|", c.BillingCurrency, "|", groupOf(group, c))
			wantByDay[k] = wantByDay[k].Add(cost(f, c))
			if c.GPUType != "" {
				wantGPUHours[c.GPUType] = wantGPUHours[c.GPUType].Add(c.GPUHours)
			}
			if c.Model != "" {
				wantTokens[c.Model] += c.InputTokens + c.OutputTokens
			}
		}
		if len(want) > 0 {
			nonEmpty++
		}
		desc := fmt.Sprintf("iteration %d, filter %+v, group %q", iter, f, group)

		got, err := st.SpendTotals(ctx, data.org.ID, f)
		if err != nil {
			t.Fatal(err)
		}
		equalSums(t, desc+": SpendTotals", got, want)

		days, err := st.SpendByDay(ctx, data.org.ID, f, group)
		if err != nil {
			t.Fatal(err)
		}
		gotByDay := map[string]decimal.Decimal{}
		for _, d := range days {
			gotByDay[fmt.Sprint(d.Day.Format(time.DateOnly), "|", d.Currency, "|", d.Group)] = d.Amount
		}
		equalSums(t, desc+": SpendByDay", gotByDay, wantByDay)

		b, err := st.SpendBreakdown(ctx, data.org.ID, f)
		if err != nil {
			t.Fatal(err)
		}
		drivers := map[string]decimal.Decimal{}
		for _, dr := range b.Drivers {
			drivers[dr.Currency] = drivers[dr.Currency].Add(dr.Amount)
		}
		equalSums(t, desc+": drivers", drivers, want)
		gpuHours := map[string]decimal.Decimal{}
		for _, g := range b.GPUs {
			gpuHours[g.GPUType] = gpuHours[g.GPUType].Add(g.GPUHours)
		}
		equalSums(t, desc+": GPU-hours", gpuHours, wantGPUHours)
		tokens := map[string]int64{}
		for _, m := range b.Models {
			tokens[m.Model] += m.Tokens()
		}
		if fmt.Sprint(tokens) != fmt.Sprint(wantTokens) {
			t.Fatalf("%s: tokens = %v, want %v", desc, tokens, wantTokens)
		}
	}
	if nonEmpty < 50 {
		t.Fatalf("only %d of 150 random filters matched anything: the generator is off", nonEmpty)
	}
}

func equalSums(t *testing.T, what string, got, want map[string]decimal.Decimal) {
	t.Helper()
	for k, w := range want {
		if !got[k].Equal(w) {
			t.Fatalf("%s: [%s] = %s, want %s", what, k, got[k], w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok && !g.IsZero() {
			t.Fatalf("%s: [%s] = %s, want nothing", what, k, g)
		}
	}
}

// TestBudgetSpendTagScopeFromCharges checks that tag-scoped budgets (summed
// from charges) and plain ones (from daily_spend) agree with the charges.
func TestBudgetSpendTagScopeFromCharges(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	data := genSpendData(t, st, 11)
	r := rand.New(rand.NewPCG(5, 5))
	for iter := 0; iter < 60; iter++ {
		sc := store.BudgetScope{}
		if r.IntN(2) == 0 {
			sc.Tags = map[string]string{"env": pick(r, propEnvs)}
		}
		if r.IntN(3) == 0 {
			sc.Provider = pick(r, propProviders)
		}
		if r.IntN(3) == 0 {
			sc.Team = pick(r, propTeams[:3])
		}
		cur := pick(r, propCurrencies)
		b, err := st.CreateBudget(ctx, data.org.ID, 0, store.BudgetInput{Name: "b", Amount: decimal.NewFromInt(100), Currency: cur, Period: "monthly", Scope: sc, Thresholds: []int{50}})
		if err != nil {
			t.Fatal(err)
		}
		f := data.randomFilter(r)
		want := map[string]decimal.Decimal{}
		for _, c := range data.charges {
			day := budget.Day(c.ChargePeriodStart, data.loc)
			if day.Before(f.From) || day.After(f.To) || c.BillingCurrency != cur ||
				(sc.Provider != "" && c.ProviderName != sc.Provider) || (sc.Team != "" && c.Team != sc.Team) ||
				(sc.Tags != nil && c.Tags["env"] != sc.Tags["env"]) {
				continue
			}
			want[day.Format(time.DateOnly)] = want[day.Format(time.DateOnly)].Add(c.BilledCost)
		}
		got, err := st.BudgetSpendByDay(ctx, data.org.ID, b, f.From, f.To, data.loc)
		if err != nil {
			t.Fatal(err)
		}
		gotS := map[string]decimal.Decimal{}
		for d, v := range got {
			gotS[d.Format(time.DateOnly)] = v
		}
		equalSums(t, fmt.Sprintf("iteration %d scope %+v %s", iter, sc, cur), gotS, want)
		if sc.Tags == nil {
			// The dashboard's one-pass variant agrees.
			all, err := st.BudgetsSpendByDay(ctx, data.org.ID, []store.Budget{b, {ID: -1, Currency: "EUR"}}, f.From, f.To)
			if err != nil {
				t.Fatal(err)
			}
			gotS = map[string]decimal.Decimal{}
			for d, v := range all[b.ID] {
				gotS[d.Format(time.DateOnly)] = v
			}
			equalSums(t, fmt.Sprintf("iteration %d scope %+v %s, one pass", iter, sc, cur), gotS, want)
		}
	}
}

func TestBudgetCRUDAndAlerts(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	org, owner := storetest.Org(t, st, storetest.OrgOpts{})
	other, _ := storetest.Org(t, st, storetest.OrgOpts{})
	in := store.BudgetInput{Name: "GPUs", Amount: decimal.RequireFromString("1000.50"), Currency: "USD", Period: "monthly",
		Scope: store.BudgetScope{Provider: "AWS", Tags: map[string]string{"env": "prod"}}, Thresholds: []int{50, 80, 100}, Recipients: []string{"a@b.c"}}
	b, err := st.CreateBudget(ctx, org.ID, owner.ID, in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.Budget(ctx, org.ID, b.ID)
	if err != nil || got.Name != "GPUs" || !got.Amount.Equal(in.Amount) || got.Scope.Tags["env"] != "prod" || len(got.Thresholds) != 3 || got.Recipients[0] != "a@b.c" || got.CreatedBy != owner.ID {
		t.Fatalf("Budget = %+v, %v", got, err)
	}
	if _, err := st.Budget(ctx, other.ID, b.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("other org's Budget: %v, want ErrNotFound", err)
	}
	in.Name, in.Period = "GPUs daily", "daily"
	if _, err := st.UpdateBudget(ctx, other.ID, b.ID, in); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("other org's UpdateBudget: %v, want ErrNotFound", err)
	}
	if got, err = st.UpdateBudget(ctx, org.ID, b.ID, in); err != nil || got.Period != "daily" {
		t.Fatalf("UpdateBudget = %+v, %v", got, err)
	}
	p := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	fresh, err := st.ClaimBudgetAlerts(ctx, org.ID, b.ID, p, []int{50, 80}, decimal.NewFromInt(850), p)
	if err != nil || len(fresh) != 2 {
		t.Fatalf("first record = %v, %v", fresh, err)
	}
	fresh, err = st.ClaimBudgetAlerts(ctx, org.ID, b.ID, p, []int{50, 80, 100}, decimal.NewFromInt(1100), p.Add(time.Hour))
	if err != nil || len(fresh) != 1 || fresh[0] != 100 {
		t.Fatalf("second record = %v, %v; want only 100 new", fresh, err)
	}
	if as, _ := st.BudgetAlerts(ctx, org.ID, b.ID); len(as) != 3 {
		t.Fatalf("alerts = %v", as)
	}
	if err := st.DeleteBudget(ctx, other.ID, b.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("other org's DeleteBudget: %v", err)
	}
	if err := st.DeleteBudget(ctx, org.ID, b.ID); err != nil {
		t.Fatal(err)
	}
	if bs, _ := st.Budgets(ctx, org.ID); len(bs) != 0 {
		t.Fatalf("budgets after delete = %v", bs)
	}
}
