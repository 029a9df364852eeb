package savings_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/jobs"
	"github.com/burnrate/burnrate/savings"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

var (
	decimalType = reflect.TypeFor[decimal.Decimal]()
	timeType    = reflect.TypeFor[time.Time]()
)

// sameValue lists where got differs from want, field by field (unexported
// ones too): decimals by value, times by instant and location name.
func sameValue(path string, got, want reflect.Value) []string {
	switch {
	case got.Type() == decimalType:
		g, w := got.Interface().(decimal.Decimal), want.Interface().(decimal.Decimal)
		if !g.Equal(w) || g.String() != w.String() {
			return []string{fmt.Sprintf("%s: %s, want %s", path, g, w)}
		}
		return nil
	case got.Type() == timeType:
		g, w := got.Interface().(time.Time), want.Interface().(time.Time)
		if !g.Equal(w) || g.Location().String() != w.Location().String() {
			return []string{fmt.Sprintf("%s: %s, want %s", path, g, w)}
		}
		return nil
	}
	switch got.Kind() {
	case reflect.Struct:
		var out []string
		for i := range got.NumField() {
			out = append(out, sameValue(path+"."+got.Type().Field(i).Name, got.Field(i), want.Field(i))...)
		}
		return out
	case reflect.Slice:
		if got.IsNil() != want.IsNil() || got.Len() != want.Len() {
			return []string{fmt.Sprintf("%s: %d items (nil %t), want %d (nil %t)", path, got.Len(), got.IsNil(), want.Len(), want.IsNil())}
		}
		var out []string
		for i := range got.Len() {
			out = append(out, sameValue(fmt.Sprintf("%s[%d]", path, i), got.Index(i), want.Index(i))...)
		}
		return out
	case reflect.Pointer:
		if got.IsNil() || want.IsNil() {
			if got.IsNil() != want.IsNil() {
				return []string{fmt.Sprintf("%s: nil %t, want nil %t", path, got.IsNil(), want.IsNil())}
			}
			return nil
		}
		return sameValue(path, got.Elem(), want.Elem())
	case reflect.String:
		if got.String() != want.String() {
			return []string{fmt.Sprintf("%s: %q, want %q", path, got.String(), want.String())}
		}
	case reflect.Int, reflect.Int64:
		if got.Int() != want.Int() {
			return []string{fmt.Sprintf("%s: %d, want %d", path, got.Int(), want.Int())}
		}
	case reflect.Bool:
		if got.Bool() != want.Bool() {
			return []string{fmt.Sprintf("%s: %t, want %t", path, got.Bool(), want.Bool())}
		}
	default:
		return []string{fmt.Sprintf("%s: cannot compare a %s", path, got.Kind())}
	}
	return nil
}

// sameReport fails unless got is want field by field, and both write the
// same JSON (what the API sends).
func sameReport(t *testing.T, step string, got, want savings.Report) {
	t.Helper()
	for _, d := range sameValue("Report", reflect.ValueOf(got), reflect.ValueOf(want)) {
		t.Errorf("%s: %s", step, d)
	}
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Errorf("%s: JSON differs:\n got %s\nwant %s", step, g, w)
	}
}

// richBills gives org findings of every kind but the priced commitment,
// in a time zone that is not UTC, with GPU bills running two days past
// now.
func richBills(t *testing.T, st *store.Store, org store.Org) store.Org {
	t.Helper()
	org, err := st.UpdateOrg(context.Background(), org.ID, store.OrgUpdate{Name: org.Name, TimeZone: "Europe/Paris", Currency: "USD", TeamTagKey: "team"})
	if err != nil {
		t.Fatal(err)
	}
	var lines []gpuLine
	lines = append(lines, days("2026-11-01", 32, gpuLine{resource: "i-0abc", usage: "USE1-BoxUsage:p4d.24xlarge", hours: 24, price: "32.7726"})...)
	lines = append(lines, days("2026-11-01", 10, gpuLine{resource: "i-batch", usage: "USE2-BoxUsage:g5.12xlarge", hours: 8,
		price: "5.672", tags: `{"team": "ml"}`})...)
	lines = append(lines, days("2026-11-05", 20, gpuLine{resource: "i-steady", usage: g548, hours: 24,
		price: g548Price, tags: `{"team": "serving"}`})...)
	for i := range 60 { // more batch jobs than a finding lists
		lines = append(lines, days("2026-11-20", 12, gpuLine{resource: fmt.Sprintf("i-many-%02d", i), usage: "USE2-BoxUsage:g5.12xlarge",
			hours: 6, price: "5.672", tags: `{"team": "ml"}`})...)
	}
	importFOCUS(t, st, org, lines)
	importOpenAI(t, st, org, "gpt-4.1", "2026-11-01", 20, 100_000_000, 20_000_000, 50_000)
	importOpenAI(t, st, org, "claude-sonnet-4-5", "2026-11-03", 15, 10_000_000, 3_000_000, 7_000)
	return org
}

// stored calls Stored at when, failing unless it computed (or read) the
// report as asked and the report is Find's.
func stored(t *testing.T, st *store.Store, org store.Org, when time.Time, step string, computes bool) savings.Report {
	t.Helper()
	rep, computed, err := savings.StoredComputed(context.Background(), st, org, when)
	if err != nil {
		t.Fatalf("%s: %v", step, err)
	}
	if computed != computes {
		t.Errorf("%s: computed %t, want %t", step, computed, computes)
	}
	opts := savings.DefaultOptions()
	opts.Now = when
	want, err := savings.Find(context.Background(), st, org, opts)
	if err != nil {
		t.Fatal(err)
	}
	sameReport(t, step, rep, want)
	return rep
}

func TestStoredIsFind(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	org := richBills(t, st, newOrg(t, st, "acme"))

	rep := stored(t, st, org, now, "first", true)
	kinds, more := map[savings.Kind]bool{}, 0
	for _, f := range rep.Findings {
		kinds[f.Kind] = true
		more += f.MoreEvidence
	}
	if len(kinds) != len(savings.Kinds) || len(rep.Totals) == 0 || more == 0 {
		t.Errorf("the fixture is not rich: %d kinds, totals %v, %d more evidence", len(kinds), rep.Totals, more)
	}
	saved, ok, err := st.SavingsReport(context.Background(), org.ID)
	if err != nil || !ok {
		t.Fatalf("nothing stored: %v", err)
	}
	stored(t, st, org, now, "second", false)
	stored(t, st, org, now.Add(time.Hour), "an hour later", false)
	again, _, err := st.SavingsReport(context.Background(), org.ID)
	if err != nil || !again.ComputedAt.Equal(saved.ComputedAt) {
		t.Errorf("recomputed: %s then %s (%v)", saved.ComputedAt, again.ComputedAt, err)
	}

	// A computation that read its inputs earlier and finishes later
	// leaves the newer report.
	if err := st.PutSavingsReport(context.Background(), org.ID, "older", []byte(`{}`), saved.ComputedAt.Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	stored(t, st, org, now, "after an older computation", false)

	// An org without bills has a stored (empty) report too.
	empty := newOrg(t, st, "empty")
	stored(t, st, empty, now, "empty org", true)
	stored(t, st, empty, now, "empty org again", false)
	// Too few days to scale to a month: observed findings.
	short := newOrg(t, st, "short")
	importOpenAI(t, st, short, "gpt-4.1", "2026-11-27", 3, 100_000_000, 20_000_000, 50_000)
	if rep := stored(t, st, short, now, "short bills", true); len(rep.Findings) == 0 || rep.Findings[0].Observed == nil {
		t.Errorf("short bills: %+v", rep.Findings)
	}
}

// TestStoredFollowsItsInputs: every change to what Find reads gives the
// new report; what it does not read leaves the stored one.
func TestStoredFollowsItsInputs(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	org := richBills(t, st, newOrg(t, st, "acme"))
	stored(t, st, org, now, "first", true)

	importOpenAI(t, st, org, "gpt-4o", "2026-11-10", 10, 50_000_000, 5_000_000, 9_000)
	stored(t, st, org, now, "after an import", true)
	stored(t, st, org, now, "after an import, again", false)

	imports, err := st.Imports(ctx, org.ID, 10)
	if err != nil || len(imports) != 4 {
		t.Fatalf("imports: %v %v", imports, err)
	}
	if _, err := st.RemoveImport(ctx, org.ID, imports[0].ID, 0, "test"); err != nil {
		t.Fatal(err)
	}
	stored(t, st, org, now, "after a removed import", true)
	stored(t, st, org, now, "after a removed import, again", false)

	price := decimal.RequireFromString("20")
	if _, err := st.UpsertGPUPriceOverrides(ctx, org.ID, 0, []store.GPUPriceOverrideInput{{
		Provider: "aws", InstanceType: "p4d.24xlarge", GPU: "A100", GPUCount: decimal.NewFromInt(8), OnDemand: &price, Note: "deal"}}); err != nil {
		t.Fatal(err)
	}
	stored(t, st, org, now, "after a GPU price added", true)
	gpu, err := st.GPUPriceOverrides(ctx, org.ID)
	if err != nil || len(gpu) != 1 {
		t.Fatalf("GPU prices: %v %v", gpu, err)
	}
	cheaper := decimal.RequireFromString("12.5")
	if _, err := st.UpdateGPUPriceOverride(ctx, org.ID, gpu[0].ID, 0, &cheaper, nil, "better deal"); err != nil {
		t.Fatal(err)
	}
	stored(t, st, org, now, "after a GPU price changed", true)
	if err := st.DeleteGPUPriceOverride(ctx, org.ID, gpu[0].ID); err != nil {
		t.Fatal(err)
	}
	stored(t, st, org, now, "after a GPU price deleted", true)

	llm, err := st.UpsertLLMPriceOverride(ctx, org.ID, 0, store.LLMPriceOverrideInput{Model: "gpt-4.1-mini", Provider: "OpenAI",
		Input: decimal.RequireFromString("0.1"), Output: decimal.RequireFromString("0.2")})
	if err != nil {
		t.Fatal(err)
	}
	stored(t, st, org, now, "after an LLM price added", true)
	if _, err := st.UpdateLLMPriceOverride(ctx, org.ID, llm.ID, 0, store.LLMPriceOverrideInput{Model: "gpt-4.1-mini", Provider: "OpenAI",
		Input: decimal.RequireFromString("0.3"), Output: decimal.RequireFromString("0.2")}); err != nil {
		t.Fatal(err)
	}
	stored(t, st, org, now, "after an LLM price changed", true)
	if err := st.DeleteLLMPriceOverride(ctx, org.ID, llm.ID); err != nil {
		t.Fatal(err)
	}
	stored(t, st, org, now, "after an LLM price deleted", true)

	// The break-even's model substitutes are not an input of any finder
	// (routing has its own pairs, Routes): the stored report stays.
	if err := st.SetModelSubstitutes(ctx, org.ID, 0, map[string]string{"gpt-4.1": "llama-3.3-70b"}); err != nil {
		t.Fatal(err)
	}
	stored(t, st, org, now, "after a model substitute", false)

	// The GPU bills run to 2026-12-02: a new day moves the window.
	before := stored(t, st, org, now, "before a new day", false)
	after := stored(t, st, org, now.AddDate(0, 0, 1), "a new day", true)
	if after.Through == before.Through {
		t.Errorf("the window did not move: through %s", after.Through)
	}

	// A time zone change (which rebuilds the rollups) moves the days.
	org, err = st.UpdateOrg(ctx, org.ID, store.OrgUpdate{Name: org.Name, TimeZone: "America/Los_Angeles", Currency: "USD", TeamTagKey: "team"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.RebuildDailySpend(ctx, org.ID, org.Location()); err != nil {
		t.Fatal(err)
	}
	stored(t, st, org, now, "after a time zone change", true)
}

// TestStoredIsFenced: an org's stored report is read and written through
// its fence, and another org's fenced connection never sees it.
func TestStoredIsFenced(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	a := richBills(t, st, newOrg(t, st, "org-a"))
	b := newOrg(t, st, "org-b")
	importOpenAI(t, st, b, "gpt-4o-mini", "2026-11-01", 3, 1000, 1000, 1)
	err := st.Fenced(ctx, a.ID, 0, func(fenced *store.Store) error {
		stored(t, fenced, a, now, "org A fenced", true)
		stored(t, fenced, a, now, "org A fenced, again", false)
		stored(t, fenced, a, now.AddDate(0, 0, 1), "org A fenced, a new day", true) // an update
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = st.Fenced(ctx, b.ID, 0, func(fenced *store.Store) error {
		if _, ok, err := fenced.SavingsReport(ctx, a.ID); ok || err != nil {
			t.Errorf("B's connection reads A's stored report (%v)", err)
		}
		if rep := stored(t, fenced, b, now, "org B fenced", true); len(rep.Findings) != 0 {
			t.Errorf("org B sees %d findings", len(rep.Findings))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	stored(t, st, a, now.AddDate(0, 0, 1), "org A after B", false)
}

func TestRefreshJob(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	org := richBills(t, st, newOrg(t, st, "acme"))
	w := &savings.RefreshWorker{Store: st, Now: func() time.Time { return now }}
	job := &river.Job[savings.RefreshArgs]{Args: savings.RefreshArgs{OrgID: org.ID}}
	if err := w.Work(ctx, job); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := st.SavingsReport(ctx, org.ID); !ok || err != nil {
		t.Fatalf("the job stored nothing (%v)", err)
	}
	stored(t, st, org, now, "after the job", false)

	// An org deleted takes its report with it, and its refresh finds
	// nothing to do.
	if err := st.DeleteOrg(ctx, org.ID); err != nil {
		t.Fatal(err)
	}
	if err := w.Work(ctx, job); err != nil {
		t.Errorf("the job for a deleted org: %v", err)
	}
	var n int
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM savings_reports`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d stored reports left (%v)", n, err)
	}
}

// TestEnqueueRefreshCoalesces: refreshes asked for within a few seconds of
// each other are one job, due RefreshDelay after the first; a refresh
// already running never stands in for one asked for while it runs (it may
// have read the inputs before the change), nor one of another org.
func TestEnqueueRefreshCoalesces(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	q := jobs.NewQueue()
	if _, err := jobs.New(st, jobs.Config{Queue: q}); err != nil {
		t.Fatal(err)
	}
	a, b := newOrg(t, st, "a"), newOrg(t, st, "b")
	jobsOf := func(org store.Org) (n int) {
		t.Helper()
		if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'savings_refresh'
			AND (args->>'org_id')::bigint = $1`, org.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	start := time.Now()
	for range 3 {
		if err := savings.EnqueueRefresh(ctx, q, st, a.ID); err != nil {
			t.Fatal(err)
		}
	}
	if err := savings.EnqueueRefresh(ctx, q, st, b.ID); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) < time.Second { // the three fell in one slot, or at worst two
		if n := jobsOf(a); n != 1 && n != 2 {
			t.Fatalf("%d refreshes of org a after three asked at once, want 1 (2 across a slot's end)", n)
		}
	}
	if n := jobsOf(b); n != 1 {
		t.Fatalf("%d refreshes of org b, want 1", n)
	}
	var due time.Time
	if err := st.Pool().QueryRow(ctx, `SELECT min(scheduled_at) FROM river_job WHERE kind = 'savings_refresh'
		AND (args->>'org_id')::bigint = $1`, a.ID).Scan(&due); err != nil {
		t.Fatal(err)
	}
	if due.Before(start.Add(savings.RefreshDelay).Truncate(time.Microsecond)) || due.After(time.Now().Add(savings.RefreshDelay)) { // stored to the µs
		t.Errorf("the refresh is due at %s, want %s after it was asked for (%s)", due, savings.RefreshDelay, start)
	}

	// The refreshes start running when due, as River runs them. One asked
	// for then is due a slot later: some refresh that has not started yet
	// is due after it was asked for.
	time.Sleep(time.Until(due))
	if _, err := st.Pool().Exec(ctx, `UPDATE river_job SET state = 'running', attempted_at = now()
		WHERE kind = 'savings_refresh' AND (args->>'org_id')::bigint = $1 AND scheduled_at <= now()`, a.ID); err != nil {
		t.Fatal(err)
	}
	asked := time.Now()
	if err := savings.EnqueueRefresh(ctx, q, st, a.ID); err != nil {
		t.Fatal(err)
	}
	var pending int
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'savings_refresh'
		AND (args->>'org_id')::bigint = $1 AND state = 'scheduled' AND scheduled_at > $2`, a.ID, asked).Scan(&pending); err != nil {
		t.Fatal(err)
	}
	if pending != 1 {
		t.Fatalf("%d refreshes of org a due after one was asked for while the others ran, want 1", pending)
	}
}
