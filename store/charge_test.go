package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// sliceSource is a ChargeSource over a slice.
type sliceSource struct {
	rows []store.Charge
	i    int
}

func (s *sliceSource) Next() bool            { s.i++; return s.i <= len(s.rows) }
func (s *sliceSource) Charge() *store.Charge { return &s.rows[s.i-1] }
func (s *sliceSource) Err() error            { return nil }

func charge(line int, day string, cost string, mods ...func(*store.Charge)) store.Charge {
	start, _ := time.Parse("2006-01-02 15:04", day)
	c := store.Charge{
		Line: line, Source: "aws-cur", ProviderName: "AWS", ServiceName: "EC2", ChargeCategory: "Usage",
		ChargePeriodStart: start, ChargePeriodEnd: start.Add(time.Hour),
		BilledCost: decimal.RequireFromString(cost), EffectiveCost: decimal.RequireFromString(cost),
		BillingCurrency: "USD", BillingAccountID: "111", BillingPeriodStart: time.Date(start.Year(), start.Month(), 1, 0, 0, 0, 0, time.UTC),
	}
	for _, m := range mods {
		m(&c)
	}
	return c
}

func importRows(t *testing.T, st *store.Store, org store.Org, dedupe store.Dedupe, rows ...store.Charge) store.WriteResult {
	t.Helper()
	ctx := context.Background()
	imp, err := st.CreateImport(ctx, store.NewImport{OrgID: org.ID, FileName: "f.csv", SHA256: []byte(t.Name() + time.Now().String()), Via: "test"})
	if err != nil {
		t.Fatal(err)
	}
	var res store.WriteResult
	err = st.InTx(ctx, func(tx *store.Store) error {
		var err error
		res, err = tx.WriteCharges(ctx, org.ID, imp.ID, time.UTC, dedupe, &sliceSource{rows: rows})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// totals returns the billed sums of charges and of daily_spend, which must
// always agree.
func totals(t *testing.T, st *store.Store, orgID int64) (charges, rollup decimal.Decimal) {
	t.Helper()
	ctx := context.Background()
	if err := st.Pool().QueryRow(ctx, `SELECT coalesce(sum(billed_cost), 0) FROM charges WHERE org_id = $1`, orgID).Scan(&charges); err != nil {
		t.Fatal(err)
	}
	if err := st.Pool().QueryRow(ctx, `SELECT coalesce(sum(billed), 0) FROM daily_spend WHERE org_id = $1`, orgID).Scan(&rollup); err != nil {
		t.Fatal(err)
	}
	return charges, rollup
}

func wantTotals(t *testing.T, st *store.Store, orgID int64, want string) {
	t.Helper()
	c, r := totals(t, st, orgID)
	if !c.Equal(decimal.RequireFromString(want)) || !r.Equal(c) {
		t.Fatalf("charges total %s, rollup total %s, want %s", c, r, want)
	}
}

func TestWriteChargesRestatedPeriodIsReplaced(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	org, _ := storetest.Org(t, st, storetest.OrgOpts{})
	res := importRows(t, st, org, store.DedupeNone,
		charge(2, "2026-11-01 00:00", "10.10"), charge(3, "2026-11-02 00:00", "5.05"))
	if res.Rows != 2 || res.ReplacedRows != 0 {
		t.Fatalf("first import = %+v", res)
	}
	wantTotals(t, st, org.ID, "15.15")
	// The restated November export replaces November, keeps October.
	importRows(t, st, org, store.DedupeNone, charge(2, "2026-10-31 00:00", "1"))
	res = importRows(t, st, org, store.DedupeNone,
		charge(2, "2026-11-01 00:00", "10.10"), charge(3, "2026-11-02 00:00", "5.05"), charge(4, "2026-11-03 00:00", "2.5"))
	if res.Rows != 3 || res.ReplacedRows != 2 {
		t.Fatalf("restated import = %+v, want 3 rows replacing 2", res)
	}
	wantTotals(t, st, org.ID, "18.65")
	// Another billing account's period is its own.
	importRows(t, st, org, store.DedupeNone, charge(2, "2026-11-01 00:00", "100", func(c *store.Charge) { c.BillingAccountID = "222" }))
	wantTotals(t, st, org.ID, "118.65")
}

func TestWriteChargesEventsSkipKnownKeys(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	org, _ := storetest.Org(t, st, storetest.OrgOpts{})
	key := func(k string) func(*store.Charge) {
		return func(c *store.Charge) { c.Source, c.DedupeKey, c.BillingPeriodStart = "litellm-spend", k, time.Time{} }
	}
	importRows(t, st, org, store.DedupeSkip, charge(2, "2026-11-01 10:00", "0.5", key("a")), charge(3, "2026-11-01 11:00", "0.25", key("b")))
	res := importRows(t, st, org, store.DedupeSkip,
		charge(2, "2026-11-01 11:00", "0.25", key("b")), charge(3, "2026-11-01 12:00", "1", key("c")), charge(4, "2026-11-01 12:00", "1", key("c")))
	if res.Rows != 1 || res.SkippedRows != 2 {
		t.Fatalf("overlapping log = %+v, want 1 new row and 2 skipped", res)
	}
	wantTotals(t, st, org.ID, "1.75")
}

func TestWriteChargesBucketsReplaceKnownKeys(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	org, _ := storetest.Org(t, st, storetest.OrgOpts{})
	key := func(k string) func(*store.Charge) {
		return func(c *store.Charge) { c.Source, c.DedupeKey, c.BillingPeriodStart = "openai-usage", k, time.Time{} }
	}
	importRows(t, st, org, store.DedupeReplace, charge(2, "2026-11-01 00:00", "3", key("d1|p|m")), charge(3, "2026-11-02 00:00", "4", key("d2|p|m")))
	// A later export restates day 2 and adds day 3.
	res := importRows(t, st, org, store.DedupeReplace, charge(2, "2026-11-02 00:00", "4.5", key("d2|p|m")), charge(3, "2026-11-03 00:00", "1", key("d3|p|m")))
	if res.Rows != 2 || res.ReplacedRows != 1 {
		t.Fatalf("restated buckets = %+v, want 2 rows replacing 1", res)
	}
	wantTotals(t, st, org.ID, "8.5")
}

func TestRebuildDailySpendInOrgTimeZone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	org, _ := storetest.Org(t, st, storetest.OrgOpts{})
	importRows(t, st, org, store.DedupeNone, charge(2, "2026-11-02 03:00", "7"))
	tokyo, _ := time.LoadLocation("America/Los_Angeles")
	if err := st.RebuildDailySpend(ctx, org.ID, tokyo); err != nil {
		t.Fatal(err)
	}
	var day time.Time
	if err := st.Pool().QueryRow(ctx, `SELECT day FROM daily_spend WHERE org_id = $1`, org.ID).Scan(&day); err != nil {
		t.Fatal(err)
	}
	// 03:00 UTC on the 2nd is the evening of the 1st in Los Angeles.
	if got := day.Format("2006-01-02"); got != "2026-11-01" {
		t.Fatalf("day = %s, want 2026-11-01", got)
	}
	wantTotals(t, st, org.ID, "7")
}

func TestWriteChargesKeepsTagsExactly(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	org, _ := storetest.Org(t, st, storetest.OrgOpts{})
	tags := map[string]string{
		"team": "ml-research", `quote"d`: `back\slash`, "ctrl": "tab\there\nnewline\x01", "ünï": "日本 🔥", "empty": "",
	}
	importRows(t, st, org, store.DedupeNone, charge(2, "2026-11-01 00:00", "1", func(c *store.Charge) { c.Tags = tags }))
	var got map[string]string
	if err := st.Pool().QueryRow(context.Background(), `SELECT tags FROM charges WHERE org_id = $1`, org.ID).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(tags) {
		t.Fatalf("tags = %q, want %q", got, tags)
	}
	for k, v := range tags {
		if got[k] != v {
			t.Fatalf("tag %q = %q, want %q", k, got[k], v)
		}
	}
}

// TestBinaryCopyWritesWhatPgxWrites: every column of charges, encoded by the
// import's own binary COPY, reads back exactly as pgx.CopyFrom writes it:
// text with quotes and UTF-8, negative and tiny and 30-digit numerics,
// timestamps with microseconds, before and after 2000, null and set tags
// and billing periods.
func TestBinaryCopyWritesWhatPgxWrites(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	org, _ := storetest.Org(t, st, storetest.OrgOpts{})
	d := decimal.RequireFromString
	full := store.Charge{
		Line: 7, Source: "focus", ProviderName: "Microsoft Azure", ServiceName: "Virtual \"Machines\"", ServiceCategory: "Compute",
		SKU: "NC24ads A100 v4 — Spot", ResourceID: "/subscriptions/x/rg", RegionID: "westeurope", SubAccountID: "sub-1",
		ChargeCategory: "Usage", ChargePeriodStart: time.Date(2026, 11, 2, 3, 4, 5, 123456000, time.UTC),
		ChargePeriodEnd: time.Date(2026, 11, 2, 4, 0, 0, 0, time.FixedZone("x", 3600)),
		BilledCost:      d("-0.000000000000000001"), EffectiveCost: d("123456789012345678901234.5678901"), ListCost: d("12.50"),
		BillingCurrency: "EUR", ConsumedQuantity: d("1e3"), ConsumedUnit: "1 Hour", Tags: map[string]string{"team": "ml", "é\"k": "v\\1\n"},
		Team: "ml", InstanceType: "Standard_NC24ads_A100_v4", GPUType: "A100-80GB", GPUCount: d("0.167"), GPUHours: d("24"),
		Model: "gpt-4o", InputTokens: 1 << 40, OutputTokens: 5, CachedTokens: 0, Requests: 3, PricedByUs: true,
		BillingAccountID: "8611537", BillingPeriodStart: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), DedupeKey: "k|1",
		ProviderRaw: "Microsoft", ServiceRaw: "",
	}
	bare := store.Charge{Line: 8, Source: "aws-cur", ChargePeriodStart: time.Date(1999, 12, 31, 23, 59, 59, 999999000, time.UTC),
		ChargePeriodEnd: time.Date(1999, 12, 31, 23, 59, 59, 999999000, time.UTC)}
	bin, viaPgx, err := store.CopyBothWays(context.Background(), st, org.ID, 42, []store.Charge{full, bare})
	if err != nil {
		t.Fatal(err)
	}
	if len(bin) != 2 || len(viaPgx) != 2 {
		t.Fatalf("rows: %d binary, %d pgx", len(bin), len(viaPgx))
	}
	for i := range bin {
		if bin[i] != viaPgx[i] {
			t.Errorf("row %d:\nbinary %s\npgx    %s", i, bin[i], viaPgx[i])
		}
	}
}
