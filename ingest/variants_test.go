package ingest

import (
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

// TestGCPFlattenedExport reads the billing export as a SELECT that
// flattens the record writes it (underscores, credits pre-summed).
func TestGCPFlattenedExport(t *testing.T) {
	t.Parallel()
	path := "testdata/exports/gcp/gcp_bq_flattened.csv"
	rows, src, err := readFile(t, path, optsFor(path))
	if err != nil {
		t.Fatal(err)
	}
	if src != SourceGCPBilling || len(rows) != 27 {
		t.Fatalf("source %s, %d rows", src, len(rows))
	}
	gpu := rows[25]
	if gpu.ServiceName != "Compute Engine" || gpu.SubAccountID != "ml-training-31337" || gpu.RegionID != "us-central1" ||
		gpu.SKU != "Nvidia Tesla A100 GPU running in Americas" || gpu.Team != "ml" {
		t.Errorf("GPU row: %+v", gpu)
	}
	// Net of credits: 2.933908 - 0.880172.
	if !gpu.BilledCost.Equal(decimal.RequireFromString("2.053736")) || !gpu.ListCost.Equal(decimal.RequireFromString("2.933908")) {
		t.Errorf("billed %s, list %s", gpu.BilledCost, gpu.ListCost)
	}
	if gpu.GPUType != "A100" || !gpu.GPUHours.Equal(decimal.NewFromInt(1)) {
		t.Errorf("GPU %s, %s hours", gpu.GPUType, gpu.GPUHours)
	}
	if !rows[0].BilledCost.IsZero() || rows[0].ServiceName != "Security Command Center" {
		t.Errorf("first row: billed %s (5e-06 less a 5e-06 credit), service %q", rows[0].BilledCost, rows[0].ServiceName)
	}
	if !rows[0].BillingPeriodStart.Equal(rows[25].BillingPeriodStart) || rows[0].BillingPeriodStart.Format("2006-01") != "2020-11" {
		t.Errorf("invoice month: %s", rows[0].BillingPeriodStart)
	}
	// A list of credits and a sum beside it would count them twice: the list wins.
	both := "service_description,usage_start_time,cost,credits,credits_amount\n" +
		"Compute Engine,2020-11-10 13:00:00 UTC,10,\"[{'amount': -2}]\",-2\n"
	rows, _, err = readAll(t, strings.NewReader(both), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rows[0].BilledCost.Equal(decimal.NewFromInt(8)) {
		t.Errorf("credits counted twice: %s", rows[0].BilledCost)
	}
	// One label per row, as an UNNEST writes it.
	kv := "service_description,usage_start_time,cost,labels_key,labels_value\nCompute Engine,2020-11-10,1,team,search\n"
	rows, _, err = readAll(t, strings.NewReader(kv), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rows[0].Team != "search" {
		t.Errorf("label pair: team %q, tags %v", rows[0].Team, rows[0].Tags)
	}
	// A bad pre-summed credit names its column.
	bad := "service_description,usage_start_time,cost,credits_amount\nCompute Engine,2020-11-10,1,-1.5x\n"
	if _, _, err := readAll(t, strings.NewReader(bad), Options{FileName: "gcp.csv"}); err == nil ||
		!strings.Contains(err.Error(), `gcp.csv: line 2, column credits_amount: "-1.5x" is not a number`) {
		t.Errorf("bad credit: %v", err)
	}
}

// TestAzureHeaderVariants reads one charge written in every header style
// Azure cost exports come in: each must give the same row.
func TestAzureHeaderVariants(t *testing.T) {
	t.Parallel()
	const bom = "\xef\xbb\xbf"
	cases := []struct{ name, csv string }{
		{"EA PascalCase", "Date,MeterCategory,MeterName,SubscriptionId,CostInBillingCurrency,BillingCurrencyCode,ResourceLocation\n" +
			"2024-03-05,Virtual Machines,D4 v3,sub-1,12.5,EUR,westeurope\n"},
		{"MCA camelCase", "date,meterCategory,meterName,subscriptionId,costInBillingCurrency,billingCurrency,resourceLocation\n" +
			"2024-03-05,Virtual Machines,D4 v3,sub-1,12.5,EUR,westeurope\n"},
		{"BOM and MM/DD/YYYY", bom + "Date,MeterCategory,MeterName,SubscriptionId,CostInBillingCurrency,BillingCurrencyCode,ResourceLocation\n" +
			"03/05/2024,Virtual Machines,D4 v3,sub-1,12.5,EUR,westeurope\n"},
		{"older EA Cost/BillingCurrency", "Date,MeterCategory,MeterName,SubscriptionId,Cost,BillingCurrency,ResourceLocation\n" +
			"2024-03-05,Virtual Machines,D4 v3,sub-1,12.5,EUR,westeurope\n"},
		{"legacy usage details", "UsageDateTime,MeterCategory,MeterName,SubscriptionGuid,PreTaxCost,Currency,ResourceLocation\n" +
			"2024-03-05 00:00:00,Virtual Machines,D4 v3,sub-1,12.5,EUR,westeurope\n"},
		{"lower case", "date,metercategory,metername,subscriptionid,costinbillingcurrency,billingcurrencycode,resourcelocation\n" +
			"2024-03-05,Virtual Machines,D4 v3,sub-1,12.5,EUR,westeurope\n"},
		{"German portal download", bom + "Nutzungsdatum (UsageDateTime),Kategorie der Verbrauchseinheit (MeterCategory)," +
			"Name der Verbrauchseinheit (MeterName),Abonnement-GUID (SubscriptionGuid),Kosten vor Steuern (PreTaxCost),Währung (Currency)," +
			"Ressourcenstandort (ResourceLocation)\n" +
			"03/05/2024,Virtual Machines,D4 v3,sub-1,12.5,EUR,westeurope\n"},
		{"localised with the same label", "Date (Date),MeterCategory (MeterCategory),MeterName (MeterName),SubscriptionId (SubscriptionId)," +
			"PreTaxCost (PreTaxCost),Currency (Currency),ResourceLocation (ResourceLocation)\n" +
			"2024-03-05,Virtual Machines,D4 v3,sub-1,12.5,EUR,westeurope\n"},
	}
	for _, tc := range cases {
		rows, src, err := readAll(t, strings.NewReader(tc.csv), Options{FileName: "azure.csv"})
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		r := rows[0]
		if src != SourceAzureCost || len(rows) != 1 || r.ChargePeriodStart.Format("2006-01-02") != "2024-03-05" ||
			!r.BilledCost.Equal(decimal.RequireFromString("12.5")) || r.BillingCurrency != "EUR" || r.ServiceName != "Virtual Machines" ||
			r.SKU != "D4 v3" || r.SubAccountID != "sub-1" || r.RegionID != "westeurope" || r.ServiceCategory != "Compute" {
			t.Errorf("%s: %s %+v", tc.name, src, r)
		}
	}
	// An error names the column as the file spells it.
	bad := "Nutzungsdatum (UsageDateTime),Kosten vor Steuern (PreTaxCost)\n03/05/2024,\"12,5\"\n"
	_, _, err := readAll(t, strings.NewReader(bad), Options{FileName: "de.csv"})
	if err == nil || !strings.Contains(err.Error(), `de.csv: line 2, column Kosten vor Steuern (PreTaxCost): "12,5" is not a number`) {
		t.Errorf("bad cost: %v", err)
	}
	// A label that is not a column name stays a label.
	if got := canonicalInParens("Cost (in euros)"); got != "" {
		t.Errorf("canonicalInParens(Cost (in euros)) = %q", got)
	}
}
