package ingest

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/pricing"
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

// TestOCICostReport reads an Oracle Cloud cost report in OCI's own format.
func TestOCICostReport(t *testing.T) {
	t.Parallel()
	path := "testdata/exports/oci/oci_cost_report.csv"
	rows, src, err := readFile(t, path, Options{FileName: "oci.csv", GPUs: pricing.DefaultCatalog()})
	if err != nil {
		t.Fatal(err)
	}
	if src != SourceOCICost || len(rows) != 7 {
		t.Fatalf("source %s, %d rows", src, len(rows))
	}
	e4, h100, a10, correction := rows[0], rows[2], rows[3], rows[5]
	if e4.ProviderName != "Oracle Cloud" || e4.ServiceName != "COMPUTE" || e4.ServiceCategory != "Compute" ||
		e4.SKU != "Compute - Standard - E4 - OCPU" || e4.RegionID != "us-ashburn-1" || e4.SubAccountID != "ml-platform" ||
		!strings.HasPrefix(e4.BillingAccountID, "ocid1.tenancy.") || !e4.BilledCost.Equal(decimal.RequireFromString("0.05")) ||
		e4.ChargePeriodStart.Format(time.RFC3339) != "2026-06-01T00:00:00Z" || e4.ChargePeriodEnd.Format(time.RFC3339) != "2026-06-01T01:00:00Z" ||
		e4.DedupeKey != "e1fd8c2b-0d8a-4c46-a4a0-8f2a1b000001/US-ASHBURN-1/0001" || e4.Team != "ml" ||
		e4.Tags["Oracle-Tags.CreatedBy"] != "default/alice@example.com" || e4.GPUType != "" {
		t.Errorf("E4 row: %+v", e4)
	}
	// OCI bills GPUs per GPU-hour: 8 GPU-hours in one hour is 8 GPUs.
	if h100.GPUType != "H100" || !h100.GPUHours.Equal(decimal.NewFromInt(8)) || !h100.GPUCount.Equal(decimal.NewFromInt(8)) {
		t.Errorf("H100 row: %s × %s, %s GPU-hours", h100.GPUType, h100.GPUCount, h100.GPUHours)
	}
	if a10.GPUType != "A10" || !a10.GPUHours.Equal(decimal.NewFromInt(1)) || a10.Team != "search" {
		t.Errorf("A10 row: %s, %s GPU-hours, team %q", a10.GPUType, a10.GPUHours, a10.Team)
	}
	if correction.ChargeCategory != ChargeAdjustment || !correction.BilledCost.Equal(decimal.RequireFromString("-0.01")) || !correction.GPUHours.IsZero() {
		t.Errorf("correction: %+v", correction)
	}
	// A shape named in the row maps through the GPU catalog.
	for _, tc := range []struct{ shape, gpu, count string }{
		{"BM.GPU.H100.8", "H100", "8"}, {"BM.GPU.A100-v2.8", "A100-80GB", "8"}, {"VM.GPU.A10.1", "A10", "1"}, {"BM.GPU4.8", "A100", "8"},
	} {
		in := "lineItem/referenceNo,lineItem/intervalUsageStart,lineItem/intervalUsageEnd,product/resource,cost/myCost,usage/billedQuantity,cost/billingUnitReadable\n" +
			"r1,2026-06-01T00:00Z,2026-06-01T01:00Z," + tc.shape + ",10,1,Hours\n"
		rows, _, err := readAll(t, strings.NewReader(in), Options{GPUs: pricing.DefaultCatalog()})
		if err != nil {
			t.Fatal(err)
		}
		r := rows[0]
		if r.InstanceType != tc.shape || r.GPUType != tc.gpu || r.GPUCount.String() != tc.count || r.GPUHours.String() != tc.count {
			t.Errorf("%s: %s × %s, %s GPU-hours", tc.shape, r.GPUType, r.GPUCount, r.GPUHours)
		}
	}
	// Every line item has a reference number: without one it could not be
	// told apart from the same line in the next report.
	noRef := "lineItem/referenceNo,lineItem/intervalUsageStart,cost/myCost\n,2026-06-01T00:00Z,1\n"
	if _, _, err := readAll(t, strings.NewReader(noRef), Options{FileName: "oci.csv"}); err == nil ||
		!strings.Contains(err.Error(), "oci.csv: line 2, column lineItem/referenceNo: value is empty") {
		t.Errorf("no reference: %v", err)
	}
}

// TestOCIFocusReport reads OCI's FOCUS report: FOCUS 1.0-preview names
// (Provider, Region, UsageQuantity) and oci_ columns.
func TestOCIFocusReport(t *testing.T) {
	t.Parallel()
	path := "testdata/exports/oci/oci_focus_report.csv"
	rows, src, err := readFile(t, path, Options{FileName: "focus.csv", GPUs: pricing.DefaultCatalog()})
	if err != nil {
		t.Fatal(err)
	}
	if src != SourceOCIFocus || len(rows) != 5 {
		t.Fatalf("source %s, %d rows", src, len(rows))
	}
	h100, a100, adj := rows[0], rows[1], rows[4]
	if h100.ProviderName != "Oracle Cloud" || h100.RegionID != "us-ashburn-1" || !h100.ConsumedQuantity.Equal(decimal.NewFromInt(8)) ||
		h100.GPUType != "H100" || !h100.GPUHours.Equal(decimal.NewFromInt(8)) || h100.Team != "ml" ||
		h100.DedupeKey != "4f7c0d2e-0001/US-ASHBURN-1/0001" {
		t.Errorf("H100 row: %+v", h100)
	}
	if a100.InstanceType != "BM.GPU.A100-v2.8" || a100.GPUType != "A100-80GB" || !a100.GPUCount.Equal(decimal.NewFromInt(8)) ||
		!a100.GPUHours.Equal(decimal.NewFromInt(8)) {
		t.Errorf("A100 row: %s %s × %s, %s GPU-hours", a100.InstanceType, a100.GPUType, a100.GPUCount, a100.GPUHours)
	}
	if adj.ChargeCategory != ChargeAdjustment || !adj.BilledCost.Equal(decimal.RequireFromString("-0.01")) {
		t.Errorf("adjustment: %+v", adj)
	}
	// The FinOps sample's Oracle rows are the same provider.
	rows, _, err = readFile(t, "testdata/exports/focus/focus_sample_1.0.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	oracle := 0
	for _, r := range rows {
		if strings.Contains(strings.ToLower(r.ProviderName), "oracle") {
			oracle++
			if r.ProviderName != "Oracle Cloud" {
				t.Fatalf("FinOps sample provider %q", r.ProviderName)
			}
		}
	}
	if oracle == 0 {
		t.Error("no Oracle rows in the FinOps sample")
	}
}

// TestGenericCurrencyAmounts: the generic mapping reads costs as people
// write money, in the declared decimal style, through quantity.
func TestGenericCurrencyAmounts(t *testing.T) {
	t.Parallel()
	dot := "Day,Amount\n2026-01-31,\"$10,100.00\"\n2026-02-01,\"(1,234.00)\"\n2026-02-02,-0.5\n2026-02-03,USD 7\n"
	rows, _, err := readAll(t, strings.NewReader(dot), Options{Mapping: &Mapping{Date: "Day", Cost: "Amount", DefaultCurrency: "usd"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, r.BilledCost.String()+" "+string(r.ChargeCategory))
	}
	if strings.Join(got, ", ") != "10100 Usage, -1234 Credit, -0.5 Credit, 7 Usage" {
		t.Errorf("dot style: %v", got)
	}
	comma := "Tag,Betrag\n31.01.2026,\"1.234,56 €\"\n01.02.2026,\"-12,50 €\"\n"
	m := &Mapping{Date: "Tag", Cost: "Betrag", DefaultCurrency: "EUR", DateFormat: "02.01.2006", DecimalSeparator: ","}
	rows, _, err = readAll(t, strings.NewReader(comma), Options{Mapping: m})
	if err != nil {
		t.Fatal(err)
	}
	if !rows[0].BilledCost.Equal(decimal.RequireFromString("1234.56")) || !rows[1].BilledCost.Equal(decimal.RequireFromString("-12.5")) ||
		rows[0].ChargePeriodStart.Format(time.DateOnly) != "2026-01-31" {
		t.Errorf("comma style: %s, %s on %s", rows[0].BilledCost, rows[1].BilledCost, rows[0].ChargePeriodStart)
	}
	// The wrong style is an error at the cell, not a misread amount.
	_, _, err = readAll(t, strings.NewReader(comma), Options{FileName: "k.csv", Mapping: &Mapping{Date: "Tag", Cost: "Betrag", DefaultCurrency: "EUR", DateFormat: "02.01.2006"}})
	if err == nil || !strings.Contains(err.Error(), `k.csv: line 2, column Betrag: "1.234,56 €" is not a number`) {
		t.Errorf("wrong style: %v", err)
	}
	// Bounds hold whatever the formatting.
	huge := "Day,Amount\n2026-01-31,\"$1,000,000,000,000,000.00\"\n"
	_, _, err = readAll(t, strings.NewReader(huge), Options{FileName: "h.csv", Mapping: &Mapping{Date: "Day", Cost: "Amount", DefaultCurrency: "USD"}})
	if err == nil || !errors.Is(err, ErrOutOfRange) {
		t.Errorf("huge amount: %v", err)
	}
	if _, _, err := readAll(t, strings.NewReader(dot), Options{Mapping: &Mapping{Date: "Day", Cost: "Amount", DefaultCurrency: "USD", DecimalSeparator: ";"}}); !errors.Is(err, ErrBadMapping) {
		t.Errorf("bad separator: %v", err)
	}
	if len(DateFormats()) == 0 || DateFormats()[1].Example != "31/01/2026" || DateFormats()[4].Example != "2026-01-31T13:45:00Z" {
		t.Errorf("date formats: %+v", DateFormats())
	}
}

// TestUnknownFormatPreview: an unknown file's error carries its header and
// first rows, bounded, for the mapping page, from CSV and Parquet alike.
func TestUnknownFormatPreview(t *testing.T) {
	t.Parallel()
	in := "when,how much," + strings.Repeat("x", 300) + "\n"
	for i := range 9 {
		in += "2026-01-0" + strconv.Itoa(i+1) + ",3," + strings.Repeat("y", 300) + "\n"
	}
	_, err := Open(strings.NewReader(in), Options{FileName: "m.csv"})
	var fe *FormatError
	if !errors.As(err, &fe) || !errors.Is(err, ErrUnknownFormat) {
		t.Fatalf("%v", err)
	}
	p := fe.Preview
	if len(p.Header) != 3 || p.Header[0] != "when" || len(p.Rows) != 5 || p.Rows[0][0] != "2026-01-01" || len(p.Rows[0][2]) > 90 {
		t.Errorf("preview %+v", p)
	}
	type other struct {
		Day    string  `parquet:"day"`
		Amount float64 `parquet:"amount"`
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[other](&buf)
	_, _ = w.Write([]other{{"2026-01-01", 1.5}, {"2026-01-02", 2}})
	_ = w.Close()
	_, err = OpenParquet(context.Background(), bytes.NewReader(buf.Bytes()), int64(buf.Len()), Options{FileName: "o.parquet"})
	if !errors.As(err, &fe) || len(fe.Preview.Rows) != 2 || fe.Preview.Rows[1][1] != "2" || fe.Preview.Header[0] != "day" {
		t.Errorf("Parquet preview: %v %+v", err, fe)
	}
}

// TestGCPBigQueryRows: the gcp-bigquery source is gcp-billing's parser with
// the usage day as each row's slice, and a credit written as a row of its
// own a Credit.
func TestGCPBigQueryRows(t *testing.T) {
	t.Parallel()
	in := "billing_account_id,usage_start_time,usage_end_time,service.description,sku.description,project.id,cost,currency,cost_type,credits\n" +
		"01A2B3,2026-11-19T06:00:00.000000Z,2026-11-19T07:00:00.000000Z,Compute Engine,N2 Instance Core,ml,12.5,USD,regular,\n" +
		"01A2B3,2026-11-19T06:00:00.000000Z,2026-11-19T07:00:00.000000Z,Compute Engine,Credit: Sustained usage discount,ml,-2.25,USD,credit,\n"
	rows, src, err := readAll(t, strings.NewReader(in), Options{FileName: "bq.csv", Source: SourceGCPBigQuery})
	if err != nil || src != SourceGCPBigQuery || len(rows) != 2 {
		t.Fatalf("%s, %d rows, %v", src, len(rows), err)
	}
	day := time.Date(2026, 11, 19, 0, 0, 0, 0, time.UTC)
	if !rows[0].BillingPeriodStart.Equal(day) || rows[0].ChargeCategory != ChargeUsage || rows[1].ChargeCategory != ChargeCredit ||
		rows[1].BilledCost.String() != "-2.25" {
		t.Fatalf("rows %+v", rows)
	}
	// Uploaded as gcp-billing, the same rows are sliced by invoice month.
	rows, _, _ = readAll(t, strings.NewReader(in), Options{FileName: "bq.csv"})
	if !rows[0].BillingPeriodStart.Equal(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("gcp-billing slice %s", rows[0].BillingPeriodStart)
	}
}
