package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// wantLLMHoursMatchCharges checks llm_hourly against grouping orgID's
// charges directly, as LLMPeakFactor did before the rollup, and the peak
// factor over the whole of November against the same grouping.
func wantLLMHoursMatchCharges(t *testing.T, st *store.Store, orgID int64, step string) {
	t.Helper()
	ctx := context.Background()
	var missing, extra, hours int
	err := st.Pool().QueryRow(ctx, `
		WITH direct AS (
			SELECT date_trunc('hour', charge_period_start, 'UTC') AS hour, sum(x_input_tokens + x_output_tokens)::bigint AS tokens,
				count(*) AS rows
			FROM charges
			WHERE org_id = $1 AND x_model <> '' AND charge_period_end - charge_period_start <= interval '1 hour'
			GROUP BY 1
		), rolled AS (SELECT hour, tokens, rows FROM llm_hourly WHERE org_id = $1)
		SELECT (SELECT count(*) FROM (SELECT * FROM direct EXCEPT SELECT * FROM rolled) m),
			(SELECT count(*) FROM (SELECT * FROM rolled EXCEPT SELECT * FROM direct) e),
			(SELECT count(*) FROM direct)`, orgID).Scan(&missing, &extra, &hours)
	if err != nil {
		t.Fatal(err)
	}
	if missing != 0 || extra != 0 {
		t.Errorf("%s: llm_hourly lacks %d of %d hours of charges and has %d others", step, missing, hours, extra)
	}
	from, to := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var directMax, directHours int64
	if err := st.Pool().QueryRow(ctx, `
		SELECT coalesce(max(tokens), 0)::bigint, count(*) FROM (
			SELECT sum(x_input_tokens + x_output_tokens) AS tokens FROM charges
			WHERE org_id = $1 AND x_model <> '' AND charge_period_start >= $2 AND charge_period_start < $3
				AND charge_period_end - charge_period_start <= interval '1 hour'
			GROUP BY date_trunc('hour', charge_period_start AT TIME ZONE 'UTC')
			HAVING sum(x_input_tokens + x_output_tokens) > 0) h`, orgID, from, to).Scan(&directMax, &directHours); err != nil {
		t.Fatal(err)
	}
	p, err := st.LLMPeakFactor(ctx, orgID, from, to)
	if err != nil {
		t.Fatal(err)
	}
	if p.MaxTokensPerHour != directMax || p.HoursWithData != directHours {
		t.Errorf("%s: peak %d tokens over %d hours, charges say %d over %d", step, p.MaxTokensPerHour, p.HoursWithData, directMax, directHours)
	}
}

// TestLLMHoursFollowCharges keeps llm_hourly equal to the charges it counts
// through every path that writes or deletes them: a streamed (COPY) import,
// request-id and usage-bucket imports, a restated bucket, a removed import,
// a rebuild, and another org beside.
func TestLLMHoursFollowCharges(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	org, _ := storetest.Org(t, st, storetest.OrgOpts{})
	other, _ := storetest.Org(t, st, storetest.OrgOpts{})
	llm := func(model string, in, out int64) func(*store.Charge) {
		return func(c *store.Charge) {
			c.Source, c.ProviderName, c.Model, c.InputTokens, c.OutputTokens = "openai-usage", "OpenAI", model, in, out
		}
	}
	key := func(k string) func(*store.Charge) { return func(c *store.Charge) { c.DedupeKey = k } }
	daily := func(c *store.Charge) { c.ChargePeriodEnd = c.ChargePeriodStart.AddDate(0, 0, 1) }
	minute := func(c *store.Charge) {
		c.ChargePeriodStart = c.ChargePeriodStart.Add(17 * time.Minute)
		c.ChargePeriodEnd = c.ChargePeriodStart.Add(time.Minute)
	}

	// Streamed: an hour with two rows, a row of a minute, a day-long row
	// (not counted), a cloud row (not counted).
	importRows(t, st, org, store.DedupeNone,
		charge(1, "2026-11-01 10:00", "1", llm("gpt-4o", 1000, 200)),
		charge(2, "2026-11-01 10:00", "1", llm("gpt-4o-mini", 50, 5)),
		charge(3, "2026-11-01 11:00", "1", llm("gpt-4o", 7, 3), minute),
		charge(4, "2026-11-02 00:00", "1", llm("gpt-4o", 99999, 1), daily),
		charge(5, "2026-11-01 10:00", "2"))
	wantLLMHoursMatchCharges(t, st, org.ID, "streamed import")

	// Request ids, then usage buckets and a restatement of one bucket.
	importRows(t, st, org, store.DedupeSkip,
		charge(1, "2026-11-01 10:00", "0.5", llm("gpt-4o", 10, 1), key("req-1")),
		charge(2, "2026-11-03 23:00", "0.5", llm("gpt-4o", 400, 40), key("req-2")))
	wantLLMHoursMatchCharges(t, st, org.ID, "request-id import")
	importRows(t, st, org, store.DedupeReplace,
		charge(1, "2026-11-04 08:00", "3", llm("gpt-4o", 5000, 500), key("b|08")),
		charge(2, "2026-11-04 09:00", "3", llm("gpt-4o", 6000, 600), key("b|09")))
	restated := importRows(t, st, org, store.DedupeReplace,
		charge(1, "2026-11-04 09:00", "4", llm("gpt-4o", 6500, 650), key("b|09")))
	if restated.ReplacedRows != 1 {
		t.Fatalf("restated %d rows, want 1", restated.ReplacedRows)
	}
	wantLLMHoursMatchCharges(t, st, org.ID, "restated bucket")
	importRows(t, st, other, store.DedupeNone, charge(1, "2026-11-01 10:00", "1", llm("gpt-4o", 3, 3)))

	// Removing the streamed import takes its hours away; none is left at zero.
	imports, err := st.Imports(ctx, org.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteImport(ctx, org.ID, imports[len(imports)-1].ID); err != nil {
		t.Fatal(err)
	}
	wantLLMHoursMatchCharges(t, st, org.ID, "after deleting the streamed import")
	var empty int
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM llm_hourly WHERE rows = 0`).Scan(&empty); err != nil || empty != 0 {
		t.Errorf("%d llm_hourly rows with no charges (%v)", empty, err)
	}

	if err := st.RebuildDailySpend(ctx, org.ID, time.UTC); err != nil {
		t.Fatal(err)
	}
	wantLLMHoursMatchCharges(t, st, org.ID, "rebuilt")
	wantLLMHoursMatchCharges(t, st, other.ID, "the other org")
}
