package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/pricing"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestImportsCommand lists an org's imports and removes one with its rows,
// as text and JSON; a second removal and a bad id say what is wrong.
func TestImportsCommand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.URL(t)
	st, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	org, _ := storetest.Org(t, st, storetest.OrgOpts{Name: "Imports Co"})
	im := ingest.NewImporter(st, ingest.PriceTable(pricing.DefaultLLMPrices()), pricing.DefaultCatalog())
	res, err := im.Import(ctx, ingest.ImportRequest{Org: org, FileName: "bill.csv", Via: "test"}, strings.NewReader(
		"BilledCost,ChargePeriodStart,ChargePeriodEnd,BillingCurrency,ProviderName,ServiceName,ChargeCategory,BillingAccountId\n"+
			"12.5,2026-11-01T00:00:00Z,2026-11-02T00:00:00Z,USD,AWS,Amazon S3,Usage,acct-1\n"+
			"7.25,2026-11-02T00:00:00Z,2026-11-03T00:00:00Z,USD,AWS,Amazon S3,Usage,acct-1\n"))
	if err != nil {
		t.Fatal(err)
	}
	imports := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(ctx, append([]string{"imports"}, args...),
			env(map[string]string{"DATABASE_URL": url, "LOG_LEVEL": "error"}), &out, &bytes.Buffer{})
		return out.String(), err
	}

	text, err := imports("list", "--org", org.Slug)
	if err != nil {
		t.Fatal(err)
	}
	if want := "bill.csv\tfocus\t2 rows\t2026-11-01 to 2026-11-02\t19.75 USD\tsucceeded"; !strings.Contains(text, want) {
		t.Errorf("list lacks %q:\n%s", want, text)
	}
	out, err := imports("delete", "--org", org.Slug, "--json", fmt.Sprint(res.ID))
	if err != nil {
		t.Fatalf("delete: %v", err)
	}
	var removed ingest.HistoryEntry
	if err := json.Unmarshal([]byte(out), &removed); err != nil || removed.Status != "removed" || removed.RemovedBy != "cli" ||
		removed.RemovedAt == nil || removed.Rows != 2 {
		t.Fatalf("delete --json printed %s (%v), want the import as removed from the command line", out, err)
	}
	var charges int
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM charges WHERE org_id = $1`, org.ID).Scan(&charges); err != nil || charges != 0 {
		t.Errorf("%d charges left after the removal (%v)", charges, err)
	}
	out, err = imports("list", "--org", org.Slug, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Imports []ingest.HistoryEntry `json:"imports"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list.Imports) != 1 || list.Imports[0].Status != "removed" {
		t.Errorf("list --json after the removal: %s (%v)", out, err)
	}
	if _, err := imports("delete", "--org", org.Slug, fmt.Sprint(res.ID)); err == nil || !strings.Contains(err.Error(), "removed already") {
		t.Errorf("second delete: %v", err)
	}
	// What the text output says, on another import.
	again, err := im.Import(ctx, ingest.ImportRequest{Org: org, FileName: "bill.csv", Via: "test"}, strings.NewReader(
		"BilledCost,ChargePeriodStart,ChargePeriodEnd,BillingCurrency,ProviderName,ServiceName,ChargeCategory,BillingAccountId\n"+
			"1,2026-11-01T00:00:00Z,2026-11-02T00:00:00Z,USD,AWS,Amazon S3,Usage,acct-1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if text, err := imports("delete", "--org", org.Slug, fmt.Sprint(again.ID)); err != nil || text != fmt.Sprintf("removed import %d (bill.csv): 1 rows\n", again.ID) {
		t.Errorf("delete: %q, %v", text, err)
	}
	if _, err := imports("delete", "--org", org.Slug, "bill.csv"); err == nil || !strings.Contains(err.Error(), `"bill.csv" is not an import's id`) {
		t.Errorf("delete by name: %v", err)
	}
	if _, err := imports("delete", "--org", org.Slug); err == nil || !strings.Contains(err.Error(), "usage: burnrate imports") {
		t.Errorf("delete without an id: %v", err)
	}
}
