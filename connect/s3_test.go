package connect_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/connect"
	"github.com/burnrate/burnrate/ingest/curgen"
	"github.com/burnrate/burnrate/store"
)

// fakeS3 is an S3-compatible server in the process (gofakes3), with a
// client to lay exports out in it, and a switch that refuses data files as
// a bucket policy would.
type fakeS3 struct {
	url    string
	client *s3.Client
	deny   atomic.Bool
	gets   atomic.Int32 // data files read
}

func newFakeS3(t *testing.T) *fakeS3 {
	f := &fakeS3{}
	faker := gofakes3.New(s3mem.New())
	h := faker.Server()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/data/") || strings.HasSuffix(r.URL.Path, ".csv.gz") {
			if f.deny.Load() {
				w.Header().Set("Content-Type", "application/xml")
				w.WriteHeader(http.StatusForbidden)
				fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`)
				return
			}
			if r.Method == http.MethodGet {
				f.gets.Add(1)
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	f.url = srv.URL
	f.client = s3.New(s3.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider("AKIATESTTESTTEST", "secret", ""),
	})
	if _, err := f.client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String("billing")}); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fakeS3) put(t *testing.T, key string, body []byte) {
	t.Helper()
	if _, err := f.client.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String("billing"), Key: aws.String(key), Body: bytes.NewReader(body)}); err != nil {
		t.Fatal(err)
	}
}

func gz(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

var cur2Header = []string{"identity_line_item_id", "identity_time_interval", "bill_billing_period_start_date", "bill_billing_period_end_date",
	"bill_payer_account_id", "line_item_usage_account_id", "line_item_line_item_type", "line_item_usage_start_date", "line_item_usage_end_date",
	"line_item_product_code", "line_item_usage_type", "line_item_usage_amount", "line_item_unblended_cost", "line_item_currency_code",
	"product_instance_type", "product_region_code", "pricing_unit", "resource_tags"}

// cur2Part writes CUR 2.0 rows of month (YYYY-MM) for days [from, to],
// each day a GPU instance's hours at rate dollars, and returns the CSV and
// its total.
func cur2Part(t *testing.T, month string, from, to int, rate string) ([]byte, decimal.Decimal) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write(cur2Header)
	total := decimal.Zero
	next := month[:5] + fmt.Sprintf("%02d", 1+int(month[6]-'0')+10*int(month[5]-'0')) // next month, enough for Oct and Nov
	for d := from; d <= to; d++ {
		day := fmt.Sprintf("%s-%02d", month, d)
		cost := decimal.RequireFromString(rate).Mul(decimal.NewFromInt(24)).Add(decimal.New(int64(d), -4))
		total = total.Add(cost)
		w.Write([]string{fmt.Sprintf("li-%s", day), day + "T00:00:00Z/" + day + "T23:59:59Z", month + "-01T00:00:00.000Z", next + "-01T00:00:00.000Z",
			"111122223333", "444455556666", "Usage", day + "T00:00:00.000Z", day + "T23:59:59.000Z",
			"AmazonEC2", "USE1-BoxUsage:p4d.24xlarge", "24", cost.String(), "USD", "p4d.24xlarge", "us-east-1", "Hrs", `{"user_team":"ml"}`})
	}
	w.Flush()
	return buf.Bytes(), total
}

// putExport lays out one execution of a CUR 2.0 Data Export for month
// exactly as AWS writes it: the data parts under data/BILLING_PERIOD=…/
// and the manifest, naming them, under metadata/BILLING_PERIOD=…/.
func (f *fakeS3) putExport(t *testing.T, month, execution string, parts ...[]byte) {
	t.Helper()
	base := "cur/burnrate-cur2"
	var files []string
	for i, p := range parts {
		key := fmt.Sprintf("%s/data/BILLING_PERIOD=%s/2026-11-20T06:00:00.000Z-%s/burnrate-cur2-%05d.csv.gz", base, month, execution, i+1)
		f.put(t, key, gz(t, p))
		files = append(files, "s3://billing/"+key)
	}
	m, _ := json.Marshal(map[string]any{
		"executionId": execution, "exportArn": "arn:aws:bcm-data-exports:us-east-1:111122223333:export/burnrate-cur2-0c2a1b",
		"dataFiles": files, "columns": []map[string]string{{"name": "line_item_unblended_cost", "type": "double"}},
		"additionalOutputFiles": []any{},
	})
	f.put(t, fmt.Sprintf("%s/metadata/BILLING_PERIOD=%s/burnrate-cur2-Manifest.json", base, month), m)
}

// The first sync imports each billing period at its current version (two
// parts of November as one import); the second is a no-op that reads no
// data; a new version of November replaces November and leaves October.
func TestS3DataExport(t *testing.T) {
	b := newBundle(t)
	f := newFakeS3(t)
	oct, octTotal := cur2Part(t, "2026-10", 1, 31, "32.7726")
	nov1, n1 := cur2Part(t, "2026-11", 1, 10, "32.7726")
	nov2, n2 := cur2Part(t, "2026-11", 11, 19, "32.7726")
	f.putExport(t, "2026-10", "exec-oct-final", oct)
	f.putExport(t, "2026-11", "exec-nov-1", nov1, nov2)

	c := b.create(t, connect.Input{Name: "AWS CUR", Kind: connect.KindS3, Bucket: "billing", Prefix: "/cur/burnrate-cur2/", Region: "us-east-1",
		EndpointURL: f.url, AccessKeyID: "AKIATESTTESTTEST", SecretAccessKey: "secret"})
	if c.SecretHint != "AKIATESTTESTTEST" {
		t.Fatalf("hint %q", c.SecretHint)
	}
	res := syncNow(t, b, c.ID)
	if len(res.Imports) != 2 || res.Rows != 31+19 || res.Imports[0].Source != "aws-cur2" {
		t.Fatalf("first sync %+v", res)
	}
	if got, want := b.billed(t), octTotal.Add(n1).Add(n2); !got.Equal(want) {
		t.Fatalf("billed %s, want %s", got, want)
	}
	imps, _ := b.st.Imports(context.Background(), b.org.ID, 10)
	if imps[0].Via != "connection AWS CUR" || !strings.Contains(imps[0].FileName, "BILLING_PERIOD=2026-11 exec-nov-1") {
		t.Fatalf("history %+v", imps[0])
	}

	gets := f.gets.Load()
	res = syncNow(t, b, c.ID)
	if len(res.Imports) != 0 || f.gets.Load() != gets {
		t.Fatalf("second sync imported %+v and read %d data files", res.Imports, f.gets.Load()-gets)
	}

	// AWS restates November: a new execution, one part, other rates.
	nov3, n3 := cur2Part(t, "2026-11", 1, 20, "35.0001")
	f.putExport(t, "2026-11", "exec-nov-2", nov3)
	res = syncNow(t, b, c.ID)
	if len(res.Imports) != 1 || res.Imports[0].ReplacedRows != 19 || res.Rows != 20 {
		t.Fatalf("third sync %+v", res)
	}
	if got, want := b.billed(t), octTotal.Add(n3); !got.Equal(want) {
		t.Fatalf("billed %s after the restatement, want %s", got, want)
	}

	// A policy that refuses the data files: said in plain words.
	nov4, _ := cur2Part(t, "2026-11", 1, 21, "35.0001")
	f.putExport(t, "2026-11", "exec-nov-3", nov4)
	f.deny.Store(true)
	_, err := b.svc.Sync(context.Background(), b.org.ID, c.ID)
	if err == nil {
		t.Fatal("a refused read succeeded")
	}
	got := b.connection(t, c.ID)
	want := ": 403 from S3: the credentials lack s3:GetObject on cur/burnrate-cur2/data/BILLING_PERIOD=2026-11/2026-11-20T06:00:00.000Z-exec-nov-3/burnrate-cur2-00001.csv.gz"
	if !strings.HasSuffix(got.LastError, want) {
		t.Fatalf("error %q\nwant  %q", got.LastError, want)
	}
	if b2 := b.billed(t); !b2.Equal(octTotal.Add(n3)) {
		t.Fatal("a failed pull changed the spend")
	}
}

// A legacy CUR: period folders, a manifest naming the current assembly's
// report keys.
func TestS3LegacyCUR(t *testing.T) {
	b := newBundle(t)
	f := newFakeS3(t)
	data, err := os.ReadFile("../ingest/testdata/exports/aws/test_cur.csv")
	if err != nil {
		t.Fatal(err)
	}
	want := columnSum(t, data, "lineItem/UnblendedCost")
	key := "legacy/myreport/20180101-20180201/5f3b-assembly/myreport-1.csv.gz"
	f.put(t, key, gz(t, data))
	m, _ := json.Marshal(map[string]any{"assemblyId": "5f3b-assembly", "account": "111122223333", "reportKeys": []string{key},
		"bucket": "billing", "compression": "GZIP", "contentType": "text/csv", "billingPeriod": map[string]string{"start": "20180101T000000.000Z", "end": "20180201T000000.000Z"}})
	f.put(t, "legacy/myreport/20180101-20180201/myreport-Manifest.json", m)
	f.put(t, "legacy/myreport/20180101-20180201/5f3b-assembly/myreport-Manifest.json", m) // the version's own copy, not a period

	c := b.create(t, connect.Input{Name: "CUR", Kind: connect.KindS3, Bucket: "billing", Prefix: "legacy/myreport", EndpointURL: f.url,
		AccessKeyID: "AKIATESTTESTTEST", SecretAccessKey: "secret"})
	res := syncNow(t, b, c.ID)
	if len(res.Imports) != 1 || res.Imports[0].Source != "aws-cur" {
		t.Fatalf("sync %+v", res)
	}
	if got := b.billed(t); !got.Equal(want) {
		t.Fatalf("billed %s, want the file's %s", got, want)
	}
	if res := syncNow(t, b, c.ID); len(res.Imports) != 0 {
		t.Fatalf("second sync %+v", res)
	}
}

func TestS3Mistakes(t *testing.T) {
	b := newBundle(t)
	f := newFakeS3(t)
	c := b.create(t, connect.Input{Name: "empty", Kind: connect.KindS3, Bucket: "billing", Prefix: "nothing/here", EndpointURL: f.url,
		AccessKeyID: "AKIATESTTESTTEST", SecretAccessKey: "secret"})
	if err := b.svc.Test(context.Background(), c); err == nil || !strings.Contains(err.Error(), "no export manifests under s3://billing/nothing/here") {
		t.Fatalf("test of an empty prefix: %v", err)
	}
	c = b.create(t, connect.Input{Name: "nobucket", Kind: connect.KindS3, Bucket: "no-such-bucket", EndpointURL: f.url,
		AccessKeyID: "AKIATESTTESTTEST", SecretAccessKey: "secret"})
	if err := b.svc.Test(context.Background(), c); err == nil || !strings.HasPrefix(err.Error(), "404 from S3: bucket no-such-bucket") {
		t.Fatalf("test of a missing bucket: %v", err)
	}
	for _, in := range []connect.Input{
		{Name: "x", Kind: connect.KindS3, Bucket: "Bad_Bucket"},
		{Name: "x", Kind: connect.KindS3, Bucket: "billing", EndpointURL: "file:///etc/passwd"},
		{Name: "x", Kind: connect.KindS3, Bucket: "billing", AccessKeyID: "AKIATESTTESTTEST"},
		{Name: "x", Kind: connect.KindS3, Bucket: "billing", Region: "mars"},
	} {
		err := b.st.Fenced(context.Background(), b.org.ID, 0, func(st *store.Store) error {
			_, err := b.svc.Create(context.Background(), st, b.org.ID, 0, in)
			return err
		})
		if _, ok := err.(*connect.InputError); !ok {
			t.Errorf("%+v: %v, want an input error", in, err)
		}
	}
	// A Parquet part that is cut short fails as the importer says.
	f.put(t, "pq/exp/data/BILLING_PERIOD=2026-11/x/exp-00001.snappy.parquet", []byte("PAR1"))
	m, _ := json.Marshal(map[string]any{"executionId": "e1", "dataFiles": []string{"s3://billing/pq/exp/data/BILLING_PERIOD=2026-11/x/exp-00001.snappy.parquet"}})
	f.put(t, "pq/exp/metadata/BILLING_PERIOD=2026-11/exp-Manifest.json", m)
	c = b.create(t, connect.Input{Name: "parquet", Kind: connect.KindS3, Bucket: "billing", Prefix: "pq/exp", EndpointURL: f.url,
		AccessKeyID: "AKIATESTTESTTEST", SecretAccessKey: "secret"})
	if _, err := b.svc.Sync(context.Background(), b.org.ID, c.ID); err == nil || !strings.Contains(err.Error(), "Parquet") {
		t.Fatalf("parquet: %v", err)
	}
}

// putParquetExport lays out one execution of a Data Export in Parquet for
// January 2026 (curgen's month), as AWS writes it.
func (f *fakeS3) putParquetExport(t *testing.T, execution string, parts ...[]byte) {
	t.Helper()
	base := "pq/burnrate-cur2"
	var files []string
	for i, p := range parts {
		key := fmt.Sprintf("%s/data/BILLING_PERIOD=2026-01/2026-01-25T06:00:00.000Z-%s/burnrate-cur2-%05d.snappy.parquet", base, execution, i+1)
		f.put(t, key, p)
		files = append(files, "s3://billing/"+key)
	}
	m, _ := json.Marshal(map[string]any{"executionId": execution, "dataFiles": files})
	f.put(t, base+"/metadata/BILLING_PERIOD=2026-01/burnrate-cur2-Manifest.json", m)
}

// curgenFiles writes the generator's rows for seed as CSV and as Parquet.
func curgenFiles(t *testing.T, rows int, seed int64) (csvData, pq []byte) {
	var c, p bytes.Buffer
	if err := curgen.Generate(&c, rows, seed); err != nil {
		t.Fatal(err)
	}
	if err := curgen.GenerateParquet(&p, rows, seed); err != nil {
		t.Fatal(err)
	}
	return c.Bytes(), p.Bytes()
}

// A Data Export delivered as Parquet: a version of one part is imported as
// the Parquet file it is, a version of two parts as one import; the totals
// are the generator's CSV's to the cent.
func TestS3Parquet(t *testing.T) {
	b := newBundle(t)
	f := newFakeS3(t)
	csv1, pq1 := curgenFiles(t, 3000, 7)
	f.putParquetExport(t, "exec-jan-1", pq1)
	c := b.create(t, connect.Input{Name: "CUR parquet", Kind: connect.KindS3, Bucket: "billing", Prefix: "pq/burnrate-cur2", EndpointURL: f.url,
		AccessKeyID: "AKIATESTTESTTEST", SecretAccessKey: "secret"})
	res := syncNow(t, b, c.ID)
	if len(res.Imports) != 1 || res.Rows != 3000 || !strings.HasSuffix(res.Imports[0].FileName, ".parquet") {
		t.Fatalf("first sync %+v", res)
	}
	if got, want := b.billed(t), columnSum(t, csv1, "lineItem/UnblendedCost"); !got.Equal(want) {
		t.Fatalf("billed %s, want the generator's %s", got, want)
	}
	if res := syncNow(t, b, c.ID); len(res.Imports) != 0 {
		t.Fatalf("second sync %+v", res)
	}

	csv2, pq2 := curgenFiles(t, 2000, 8)
	csv3, pq3 := curgenFiles(t, 1500, 9)
	f.putParquetExport(t, "exec-jan-2", pq2, pq3)
	res = syncNow(t, b, c.ID)
	if len(res.Imports) != 1 || res.Rows != 3500 || res.Imports[0].ReplacedRows != 3000 {
		t.Fatalf("sync of two parts %+v", res)
	}
	want := columnSum(t, csv2, "lineItem/UnblendedCost").Add(columnSum(t, csv3, "lineItem/UnblendedCost"))
	if got := b.billed(t); !got.Equal(want) {
		t.Fatalf("billed %s after the new version, want %s", got, want)
	}

	// A version whose second part is not whole Parquet fails, and the
	// period keeps what it had.
	f.putParquetExport(t, "exec-jan-3", pq2, []byte("PAR1 cut short PAR1"))
	if _, err := b.svc.Sync(context.Background(), b.org.ID, c.ID); err == nil || !strings.Contains(err.Error(), "Parquet") {
		t.Fatalf("a broken part: %v", err)
	}
	if got := b.billed(t); !got.Equal(want) {
		t.Fatalf("billed %s after a failed sync, want %s", got, want)
	}
}

// columnSum adds up a CSV column, for a fixture's expected total.
func columnSum(t *testing.T, data []byte, col string) decimal.Decimal {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	i := -1
	for j, h := range rows[0] {
		if h == col {
			i = j
		}
	}
	sum := decimal.Zero
	for _, row := range rows[1:] {
		if i < len(row) && row[i] != "" {
			sum = sum.Add(decimal.RequireFromString(row[i]))
		}
	}
	return sum
}
