package ingest

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/burnrate/burnrate/store"
)

// cur2Row is a CUR 2.0 (AWS Data Exports) row as the Parquet delivery
// types it: timestamps, doubles, and the resource_tags map.
type cur2Row struct {
	BillPayerAccountID         string            `parquet:"bill_payer_account_id"`
	BillBillingPeriodStartDate time.Time         `parquet:"bill_billing_period_start_date,timestamp(millisecond)"`
	LineItemUsageAccountID     string            `parquet:"line_item_usage_account_id"`
	LineItemLineItemType       string            `parquet:"line_item_line_item_type"`
	LineItemUsageStartDate     time.Time         `parquet:"line_item_usage_start_date,timestamp(millisecond)"`
	LineItemUsageEndDate       time.Time         `parquet:"line_item_usage_end_date,timestamp(millisecond)"`
	LineItemProductCode        string            `parquet:"line_item_product_code"`
	LineItemUsageType          string            `parquet:"line_item_usage_type"`
	LineItemResourceID         string            `parquet:"line_item_resource_id,optional"`
	LineItemUsageAmount        float64           `parquet:"line_item_usage_amount"`
	LineItemUnblendedCost      float64           `parquet:"line_item_unblended_cost"`
	LineItemCurrencyCode       string            `parquet:"line_item_currency_code"`
	ProductInstanceType        *string           `parquet:"product_instance_type,optional"`
	ProductRegionCode          string            `parquet:"product_region_code"`
	PricingUnit                string            `parquet:"pricing_unit"`
	SavingsPlanEffectiveCost   *float64          `parquet:"savings_plan_savings_plan_effective_cost,optional"`
	ResourceTags               map[string]string `parquet:"resource_tags"`
}

// cur2Sample returns n deterministic CUR 2.0 rows: GPU and CPU instances,
// storage, Savings Plan covered usage and negations, credits.
func cur2Sample(n int) []cur2Row {
	types := []string{"p4d.24xlarge", "g5.xlarge", "m5.large", ""}
	teams := []string{"ml", "search", "", "web"}
	start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	out := make([]cur2Row, n)
	for i := range out {
		inst := types[i%len(types)]
		r := cur2Row{
			BillPayerAccountID: "111122223333", BillBillingPeriodStartDate: start,
			LineItemUsageAccountID: fmt.Sprintf("4444555566%02d", i%3), LineItemLineItemType: "Usage",
			LineItemUsageStartDate: start.Add(time.Duration(i%720) * time.Hour),
			LineItemProductCode:    "AmazonEC2", LineItemUsageAmount: 1, LineItemCurrencyCode: "USD",
			ProductRegionCode: "us-east-1", PricingUnit: "Hrs",
			LineItemUnblendedCost: float64(i%97)*0.137 + 0.0001*float64(i%13),
		}
		r.LineItemUsageEndDate = r.LineItemUsageStartDate.Add(time.Hour)
		if inst != "" {
			r.LineItemUsageType = "USE1-BoxUsage:" + inst
			r.ProductInstanceType = &inst
			r.LineItemResourceID = fmt.Sprintf("i-%08x", i)
		} else {
			r.LineItemProductCode, r.LineItemUsageType, r.PricingUnit = "AmazonS3", "USE1-TimedStorage-ByteHrs", "GB-Mo"
			r.LineItemUsageAmount = 0.5 + float64(i%7)
		}
		switch i % 11 {
		case 3:
			r.LineItemLineItemType = "SavingsPlanCoveredUsage"
			eff := r.LineItemUnblendedCost * 0.7
			r.SavingsPlanEffectiveCost = &eff
		case 5:
			r.LineItemLineItemType, r.LineItemUnblendedCost = "SavingsPlanNegation", -r.LineItemUnblendedCost
		case 7:
			r.LineItemLineItemType, r.LineItemUnblendedCost = "Credit", -1.25
		}
		if t := teams[i%len(teams)]; t != "" {
			r.ResourceTags = map[string]string{"user_team": t, "aws_created_by": "IAMUser:alice"}
		}
		out[i] = r
	}
	return out
}

func writeCUR2Parquet(t testing.TB, rows []cur2Row, perGroup int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[cur2Row](&buf, parquet.MaxRowsPerRowGroup(int64(perGroup)))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// writeCUR2CSV writes the same rows as the CSV delivery does.
func writeCUR2CSV(t testing.TB, rows []cur2Row) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	hdr := []string{"bill_payer_account_id", "bill_billing_period_start_date", "line_item_usage_account_id", "line_item_line_item_type",
		"line_item_usage_start_date", "line_item_usage_end_date", "line_item_product_code", "line_item_usage_type", "line_item_resource_id",
		"line_item_usage_amount", "line_item_unblended_cost", "line_item_currency_code", "product_instance_type", "product_region_code",
		"pricing_unit", "savings_plan_savings_plan_effective_cost", "resource_tags"}
	_ = w.Write(hdr)
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	ts := func(t time.Time) string { return t.Format(time.RFC3339) }
	for _, r := range rows {
		inst, eff, tags := "", "", ""
		if r.ProductInstanceType != nil {
			inst = *r.ProductInstanceType
		}
		if r.SavingsPlanEffectiveCost != nil {
			eff = f(*r.SavingsPlanEffectiveCost)
		}
		if r.ResourceTags != nil {
			b, _ := json.Marshal(r.ResourceTags)
			tags = string(b)
		}
		_ = w.Write([]string{r.BillPayerAccountID, ts(r.BillBillingPeriodStartDate), r.LineItemUsageAccountID, r.LineItemLineItemType,
			ts(r.LineItemUsageStartDate), ts(r.LineItemUsageEndDate), r.LineItemProductCode, r.LineItemUsageType, r.LineItemResourceID,
			f(r.LineItemUsageAmount), f(r.LineItemUnblendedCost), r.LineItemCurrencyCode, inst, r.ProductRegionCode, r.PricingUnit, eff, tags})
	}
	w.Flush()
	return buf.Bytes()
}

// TestParquetCUR2SameRowsAsCSV reads CUR 2.0 as Parquet (several row
// groups) and as CSV: the rows must be the same, field for field.
func TestParquetCUR2SameRowsAsCSV(t *testing.T) {
	t.Parallel()
	sample := cur2Sample(1500)
	pq := writeCUR2Parquet(t, sample, 400)
	if !IsParquet(bytes.NewReader(pq)) {
		t.Fatal("not detected as Parquet")
	}
	rd, err := OpenParquet(context.Background(), bytes.NewReader(pq), int64(len(pq)), Options{FileName: "cur.parquet", GPUs: testGPUs})
	if err != nil {
		t.Fatal(err)
	}
	if rd.Source() != SourceAWSCUR2 {
		t.Fatalf("source %s", rd.Source())
	}
	var fromPQ []Row
	var row Row
	for {
		err := rd.Next(&row)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		fromPQ = append(fromPQ, row.Clone())
	}
	fromCSV, src, err := readAll(t, bytes.NewReader(writeCUR2CSV(t, sample)), Options{FileName: "cur.csv", GPUs: testGPUs})
	if err != nil || src != SourceAWSCUR2 {
		t.Fatal(src, err)
	}
	if len(fromPQ) != 1500 || len(fromCSV) != 1500 {
		t.Fatalf("%d Parquet rows, %d CSV rows", len(fromPQ), len(fromCSV))
	}
	for i := range fromPQ {
		a, _ := json.Marshal(fromPQ[i])
		b, _ := json.Marshal(fromCSV[i])
		if !bytes.Equal(a, b) {
			t.Fatalf("row %d differs:\nparquet %s\ncsv     %s", i, a, b)
		}
	}
	// The committed fixture (the web and CLI tests upload it) is this
	// generator's first 200 rows; -update rewrites it.
	fixture := "testdata/parquet/cur2_data_export.parquet"
	small := writeCUR2Parquet(t, sample[:200], 80)
	if *update {
		if err := os.MkdirAll(filepath.Dir(fixture), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(fixture, small, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(strings.TrimSuffix(fixture, ".parquet")+".csv", writeCUR2CSV(t, sample[:200]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if b, err := os.ReadFile(fixture); err != nil || !bytes.Equal(b, small) {
		t.Errorf("%s is not the generator's output (%v); run with -update", fixture, err)
	}
	r := fromPQ[0]
	if r.Tags["team"] != "ml" || r.Team != "ml" || r.GPUType != "A100" || r.InstanceType != "p4d.24xlarge" {
		t.Errorf("first row: %+v", r)
	}
}

// TestImportParquetMatchesCSV imports the same data as CSV and as Parquet,
// into two orgs: charges, the daily rollup and the reported totals must be
// identical. The Parquet file arrives once with offsets (as the CLI and
// the upload paths give it) and once as a bare stream (spooled).
func TestImportParquetMatchesCSV(t *testing.T) {
	t.Parallel()
	sample := cur2Sample(3000)
	pq := writeCUR2Parquet(t, sample, 700)
	csvBody := writeCUR2CSV(t, sample)

	type stored struct {
		res     ImportResult
		charges string
		rollup  string
	}
	load := func(name string, body io.Reader) stored {
		b := setupImport(t)
		res, err := b.im.Import(context.Background(), ImportRequest{Org: b.org, FileName: name, Via: "test"}, body)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var s stored
		s.res = res
		q := func(sql string) string {
			var out string
			if err := b.st.Pool().QueryRow(context.Background(), sql, b.org.ID).Scan(&out); err != nil {
				t.Fatal(err)
			}
			return out
		}
		s.charges = q(`SELECT string_agg(concat_ws('|', charge_period_start, billed_cost, effective_cost, list_cost, service_name, sku,
			resource_id, region_id, sub_account_id, tags::text, team, x_gpu_type, x_gpu_hours, consumed_quantity), ',' ORDER BY line) FROM charges WHERE org_id = $1`)
		s.rollup = q(`SELECT string_agg(concat_ws('|', day, billed, rows), ',' ORDER BY day, billed) FROM daily_spend WHERE org_id = $1`)
		return s
	}
	fromCSV := load("cur.csv", bytes.NewReader(csvBody))
	fromPQ := load("cur.parquet", bytes.NewReader(pq))
	streamed := load("cur-stream.parquet", io.MultiReader(bytes.NewReader(pq)))
	for _, got := range []stored{fromPQ, streamed} {
		if got.res.Rows != 3000 || got.res.Source != SourceAWSCUR2 || fmt.Sprint(got.res.Totals) != fmt.Sprint(fromCSV.res.Totals) {
			t.Errorf("%s: %d rows of %s, totals %v; CSV: %v", got.res.FileName, got.res.Rows, got.res.Source, got.res.Totals, fromCSV.res.Totals)
		}
		if got.charges != fromCSV.charges {
			t.Errorf("%s: charges differ from the CSV's", got.res.FileName)
		}
		if got.rollup != fromCSV.rollup || got.rollup == "" {
			t.Errorf("%s: daily_spend differs from the CSV's", got.res.FileName)
		}
		if *got.res.PeriodStart != *fromCSV.res.PeriodStart || *got.res.PeriodEnd != *fromCSV.res.PeriodEnd {
			t.Errorf("%s: period differs", got.res.FileName)
		}
	}
}

// focusPQRow is a FOCUS row with costs as text, as some exporters type
// them, so that a bad value can be planted.
type focusPQRow struct {
	BillingAccountID  string `parquet:"BillingAccountId"`
	ChargePeriodStart string `parquet:"ChargePeriodStart"`
	ChargePeriodEnd   string `parquet:"ChargePeriodEnd"`
	BilledCost        string `parquet:"BilledCost"`
	BillingCurrency   string `parquet:"BillingCurrency"`
	ProviderName      string `parquet:"ProviderName"`
	ServiceName       string `parquet:"ServiceName"`
	ChargeCategory    string `parquet:"ChargeCategory"`
}

func writeFocusParquet(t testing.TB, rows []focusPQRow, perGroup int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[focusPQRow](&buf, parquet.MaxRowsPerRowGroup(int64(perGroup)))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestImportBadParquetWritesNothing: a bad value names its row group, row
// and column; a cut-short, corrupt or lying file fails cleanly; none
// writes a row.
func TestImportBadParquetWritesNothing(t *testing.T) {
	t.Parallel()
	rows := make([]focusPQRow, 10)
	for i := range rows {
		rows[i] = focusPQRow{"acct", "2026-10-01T00:00:00Z", "2026-10-02T00:00:00Z", "1.5", "USD", "AWS", "Amazon EC2", "Usage"}
	}
	rows[7].BilledCost = "12,5" // row group 2 (of 4 rows each), its row 4
	badValue := writeFocusParquet(t, rows, 4)
	good := writeCUR2Parquet(t, cur2Sample(500), 100)

	corrupt := bytes.Clone(good)
	for i := 200; i < len(corrupt)/2; i += 7 {
		corrupt[i] ^= 0x5a
	}
	lying := bytes.Clone(good)
	copy(lying[len(lying)-8:], []byte{0xff, 0xff, 0xff, 0x7f})

	b := setupImport(t)
	for _, tc := range []struct {
		name, body string
		want       []string
	}{
		{"value.parquet", string(badValue), []string{`value.parquet: row group 2, row 4, column BilledCost: "12,5" is not a number`}},
		{"cut.parquet", string(good[:len(good)/2]), []string{"cut.parquet: corrupt Parquet data", "cut short"}},
		{"corrupt.parquet", string(corrupt), []string{"corrupt.parquet: ", "corrupt Parquet data"}},
		{"lying.parquet", string(lying), []string{"lying.parquet: corrupt Parquet data: its footer claims"}},
		{"tiny.parquet", "PAR1", []string{"tiny.parquet: corrupt Parquet data: 4 bytes is too short"}},
	} {
		_, err := b.im.Import(context.Background(), ImportRequest{Org: b.org, FileName: tc.name, Via: "test"}, bytes.NewReader([]byte(tc.body)))
		t.Log(err)
		var ierr *ImportError
		if !errors.As(err, &ierr) {
			t.Errorf("%s: %v, want an ImportError", tc.name, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", tc.name, err, w)
			}
		}
		if tc.name == "value.parquet" {
			if _, col := ierr.Position(); col != "BilledCost" {
				t.Errorf("position column %q", col)
			}
		}
	}
	n, imps := b.chargesAndImports(t)
	if n != 0 || len(imps) != 5 {
		t.Fatalf("%d charges written, %d imports", n, len(imps))
	}
	for _, imp := range imps {
		if imp.Status != store.ImportFailed || imp.Rows != 0 {
			t.Errorf("%s: %s with %d rows", imp.FileName, imp.Status, imp.Rows)
		}
	}
	// Parquet inside gzip is not what exporters write: refused, by name.
	if _, _, err := readAll(t, bytes.NewReader(gzipBytes(t, good)), Options{FileName: "x.parquet.gz"}); err == nil ||
		!strings.Contains(err.Error(), "Parquet") {
		t.Errorf("gzip-wrapped Parquet: %v", err)
	}
}

// TestParquetPageBombRefused: a page header claiming a gigabyte (which the
// library would allocate before decompressing) is refused before any page
// is read.
func TestParquetPageBombRefused(t *testing.T) {
	t.Parallel()
	good := writeCUR2Parquet(t, cur2Sample(50), 50)
	hostile := rewriteFirstPage(t, good, func(h *format.PageHeader) { h.UncompressedPageSize = 1 << 30 })
	_, err := OpenParquet(context.Background(), bytes.NewReader(hostile), int64(len(hostile)), Options{FileName: "bomb.parquet"})
	if err == nil || !strings.Contains(err.Error(), "bomb.parquet: corrupt Parquet data: row group 1, column \"bill_payer_account_id\": a page claims 1073741824 bytes") {
		t.Fatalf("page bomb: %v", err)
	}
}

// rewriteFirstPage returns file with the header of its first page changed
// by edit.
func rewriteFirstPage(t testing.TB, file []byte, edit func(*format.PageHeader)) []byte {
	t.Helper()
	f, err := parquet.OpenFile(bytes.NewReader(file), int64(len(file)))
	if err != nil {
		t.Fatal(err)
	}
	m := f.Metadata().RowGroups[0].Columns[0].MetaData
	off := m.DataPageOffset
	if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < off {
		off = m.DictionaryPageOffset
	}
	var h format.PageHeader
	r := (&thrift.CompactProtocol{}).NewReaderFromBytes(file[off:])
	if err := thrift.NewDecoder(r).Decode(&h); err != nil {
		t.Fatal(err)
	}
	edit(&h)
	b, err := thrift.Marshal(&thrift.CompactProtocol{}, &h)
	if err != nil {
		t.Fatal(err)
	}
	return append(append(bytes.Clone(file[:off]), b...), file[off+int64(r.BytesRead()):]...)
}
