package digest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/burnrate/burnrate/digest"
	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/pricing"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// importCompletions imports 30 days up to 2026-03-10 of an OpenAI
// completions usage export with the same daily tokens of one model.
func importCompletions(t *testing.T, st *store.Store, org store.Org, model string, input, output int64) {
	t.Helper()
	var f strings.Builder
	f.WriteString("start_time,end_time,start_time_iso,end_time_iso,project_id,num_model_requests,user_id,api_key_id,model,batch,service_tier,input_tokens,output_tokens,input_cached_tokens,input_audio_tokens,output_audio_tokens\n")
	for d := date("2026-02-09"); !d.After(date("2026-03-10")); d = d.AddDate(0, 0, 1) {
		start, end := d.UTC(), d.AddDate(0, 0, 1).UTC()
		fmt.Fprintf(&f, "%d,%d,%s,%s,proj_ml,1000.0,,key_1,%s,False,default,%d,%d,0,0,0\n",
			start.Unix(), end.Unix(), start.Format(time.RFC3339), end.Format(time.RFC3339), model, input, output)
	}
	im := ingest.NewImporter(st, ingest.PriceTable(pricing.DefaultLLMPrices()), pricing.DefaultCatalog())
	if _, err := im.Import(context.Background(), ingest.ImportRequest{Org: org, FileName: "usage.csv", Via: "test"},
		strings.NewReader(f.String())); err != nil {
		t.Fatal(err)
	}
}

// TestHintComparesWithAComparableOpenModel: the digest's cheaper option
// prices self-hosting the open model of the API model's tier, never a
// smaller one; so gpt-4o-mini's volume, which an 8B model on one GPU would
// undercut, gets no hint (its tier's 32B model costs more to host than the
// API), and a model with no credible open substitute gets none, however
// much it costs.
func TestHintComparesWithAComparableOpenModel(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)

	big, _ := storetest.Org(t, st, storetest.OrgOpts{Name: "Big"})
	importCompletions(t, st, big, "gpt-4o-2024-08-06", 1_000_000_000, 300_000_000)
	d, err := digest.Build(context.Background(), st, big, date("2026-03-10"), morningAfter(date("2026-03-10")))
	if err != nil {
		t.Fatal(err)
	}
	sub, ok := pricing.Substitute("gpt-4o")
	if !ok || sub.OpenModel == pricing.NoSubstitute {
		t.Fatalf("the tier table has no substitute for gpt-4o: %+v", sub)
	}
	if d.Hint == nil {
		t.Fatal("no hint for 165,000 USD a month of gpt-4o")
	}
	if !strings.Contains(d.Hint.Text, sub.OpenModel) || !strings.Contains(d.Hint.Text, sub.Tier) || strings.Contains(d.Hint.Text, "llama-3.1-8b") {
		t.Errorf("hint does not name %s (%s): %q", sub.OpenModel, sub.Tier, d.Hint.Text)
	}

	mini, _ := storetest.Org(t, st, storetest.OrgOpts{Name: "Mini"})
	importCompletions(t, st, mini, "gpt-4o-mini-2024-07-18", 1_000_000_000, 300_000_000)
	if d, err = digest.Build(context.Background(), st, mini, date("2026-03-10"), morningAfter(date("2026-03-10"))); err != nil {
		t.Fatal(err)
	}
	if d.Hint != nil {
		t.Errorf("hint for gpt-4o-mini, whose comparable open model costs more to host: %q", d.Hint.Text)
	}

	sonnet, _ := storetest.Org(t, st, storetest.OrgOpts{Name: "Sonnet"})
	importCompletions(t, st, sonnet, "claude-sonnet-4-5", 1_000_000_000, 300_000_000)
	if d, err = digest.Build(context.Background(), st, sonnet, date("2026-03-10"), morningAfter(date("2026-03-10"))); err != nil {
		t.Fatal(err)
	}
	if d.Hint != nil {
		t.Errorf("hint for a model with no open substitute: %q", d.Hint.Text)
	}
}

// TestHintUsesTheOrgsTierTable: the hint compares with the open model the
// org's saved tier table names, and an org that marked its model as having
// no open substitute gets no hint; another org keeps the shipped table.
func TestHintUsesTheOrgsTierTable(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()

	mine, owner := storetest.Org(t, st, storetest.OrgOpts{Name: "Mine"})
	theirs, _ := storetest.Org(t, st, storetest.OrgOpts{Name: "Theirs"})
	for _, o := range []store.Org{mine, theirs} {
		importCompletions(t, st, o, "gpt-4o-2024-08-06", 1_000_000_000, 300_000_000)
	}
	if err := st.SetModelSubstitutes(ctx, mine.ID, owner.ID, map[string]string{"gpt-4o": "llama-3.3-70b"}); err != nil {
		t.Fatal(err)
	}
	d, err := digest.Build(ctx, st, mine, date("2026-03-10"), morningAfter(date("2026-03-10")))
	if err != nil {
		t.Fatal(err)
	}
	if d.Hint == nil || !strings.Contains(d.Hint.Text, "llama-3.3-70b") || strings.Contains(d.Hint.Text, "deepseek-v3") {
		t.Fatalf("hint with the org's tier table: %+v", d.Hint)
	}
	d, err = digest.Build(ctx, st, theirs, date("2026-03-10"), morningAfter(date("2026-03-10")))
	if err != nil {
		t.Fatal(err)
	}
	if d.Hint == nil || !strings.Contains(d.Hint.Text, "deepseek-v3") {
		t.Fatalf("other org's hint: %+v", d.Hint)
	}

	if err := st.SetModelSubstitutes(ctx, mine.ID, owner.ID, map[string]string{"gpt-4o": pricing.NoSubstitute}); err != nil {
		t.Fatal(err)
	}
	if d, err = digest.Build(ctx, st, mine, date("2026-03-10"), morningAfter(date("2026-03-10"))); err != nil {
		t.Fatal(err)
	}
	if d.Hint != nil {
		t.Errorf("hint for a model the org says has no open substitute: %q", d.Hint.Text)
	}
}
