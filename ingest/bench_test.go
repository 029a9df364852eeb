package ingest

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/burnrate/burnrate/ingest/curgen"
	"github.com/burnrate/burnrate/store/storetest"
)

// BenchmarkParseAWSCUR parses a generated 130-column legacy CUR held in
// memory and reports rows/s; allocs/op are per file, see allocs/row.
func BenchmarkParseAWSCUR(b *testing.B) {
	const rows = 100_000
	var buf bytes.Buffer
	if err := curgen.Generate(&buf, rows, 1); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rd, err := Open(bytes.NewReader(data), Options{FileName: "gen.csv", GPUs: testGPUs})
		if err != nil {
			b.Fatal(err)
		}
		var row Row
		n := 0
		for {
			err := rd.Next(&row)
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != rows {
			b.Fatalf("%d rows", n)
		}
	}
	b.StopTimer()
	perOp := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(rows/perOp, "rows/s")
}

// BenchmarkParseAWSCURParquet parses the same generated CUR written as
// Parquet (curgen.GenerateParquet) and reports rows/s, beside
// BenchmarkParseAWSCUR.
func BenchmarkParseAWSCURParquet(b *testing.B) {
	const rows = 100_000
	var buf bytes.Buffer
	if err := curgen.GenerateParquet(&buf, rows, 1); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rd, err := OpenParquet(context.Background(), bytes.NewReader(data), int64(len(data)), Options{FileName: "gen.parquet", GPUs: testGPUs})
		if err != nil {
			b.Fatal(err)
		}
		var row Row
		n := 0
		for {
			err := rd.Next(&row)
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != rows {
			b.Fatalf("%d rows", n)
		}
	}
	b.StopTimer()
	perOp := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(rows/perOp, "rows/s")
}

// BenchmarkImportAWSCUR imports a generated legacy CUR into Postgres through
// the Importer, a new org each time, and reports rows/s; with -cpuprofile
// it shows the Go side of scripts/bench-import.
func BenchmarkImportAWSCUR(b *testing.B) {
	const rows = 200_000
	var buf bytes.Buffer
	if err := curgen.Generate(&buf, rows, 1); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	st := storetest.New(b)
	im := NewImporter(st, testPrices, testGPUs)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		org, _ := storetest.Org(b, st, storetest.OrgOpts{})
		b.StartTimer()
		res, err := im.Import(context.Background(), ImportRequest{Org: org, FileName: "gen.csv", Via: "test"}, bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		if res.Rows != rows {
			b.Fatalf("%d rows", res.Rows)
		}
	}
	b.StopTimer()
	b.ReportMetric(rows/(b.Elapsed().Seconds()/float64(b.N)), "rows/s")
}

// BenchmarkReimportAWSCUR imports a restated legacy CUR over an earlier
// export of the same billing account and period, a new org each time: the
// earlier rows leave charges and every rollup, the new ones come in, in
// one transaction. Reports rows/s of the new file.
func BenchmarkReimportAWSCUR(b *testing.B) {
	const rows = 200_000
	var first, restated bytes.Buffer
	if err := curgen.Generate(&first, rows, 1); err != nil {
		b.Fatal(err)
	}
	if err := curgen.Generate(&restated, rows, 2); err != nil {
		b.Fatal(err)
	}
	st := storetest.New(b)
	im := NewImporter(st, testPrices, testGPUs)
	b.SetBytes(int64(restated.Len()))
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		org, _ := storetest.Org(b, st, storetest.OrgOpts{})
		if _, err := im.Import(context.Background(), ImportRequest{Org: org, FileName: "first.csv", Via: "test"}, bytes.NewReader(first.Bytes())); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := im.Import(context.Background(), ImportRequest{Org: org, FileName: "restated.csv", Via: "test"}, bytes.NewReader(restated.Bytes()))
		if err != nil {
			b.Fatal(err)
		}
		if res.Rows != rows || res.ReplacedRows != rows {
			b.Fatalf("%d rows, %d replaced", res.Rows, res.ReplacedRows)
		}
	}
	b.StopTimer()
	b.ReportMetric(rows/(b.Elapsed().Seconds()/float64(b.N)), "rows/s")
}
