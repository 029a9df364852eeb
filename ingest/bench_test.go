package ingest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/burnrate/burnrate/ingest/curgen"
	"github.com/burnrate/burnrate/store"
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
	cpu := newCPUMeter(b, st)
	for b.Loop() {
		b.StopTimer()
		org, _ := storetest.Org(b, st, storetest.OrgOpts{})
		b.StartTimer()
		cpu.start()
		res, err := im.Import(context.Background(), ImportRequest{Org: org, FileName: "gen.csv", Via: "test"}, bytes.NewReader(data))
		cpu.stop()
		if err != nil {
			b.Fatal(err)
		}
		if res.Rows != rows {
			b.Fatalf("%d rows", res.Rows)
		}
	}
	b.StopTimer()
	b.ReportMetric(rows/(b.Elapsed().Seconds()/float64(b.N)), "rows/s")
	cpu.report()
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
	cpu := newCPUMeter(b, st)
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		org, _ := storetest.Org(b, st, storetest.OrgOpts{})
		if _, err := im.Import(context.Background(), ImportRequest{Org: org, FileName: "first.csv", Via: "test"}, bytes.NewReader(first.Bytes())); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		cpu.start()
		res, err := im.Import(context.Background(), ImportRequest{Org: org, FileName: "restated.csv", Via: "test"}, bytes.NewReader(restated.Bytes()))
		cpu.stop()
		if err != nil {
			b.Fatal(err)
		}
		if res.Rows != rows || res.ReplacedRows != rows {
			b.Fatalf("%d rows, %d replaced", res.Rows, res.ReplacedRows)
		}
	}
	b.StopTimer()
	b.ReportMetric(rows/(b.Elapsed().Seconds()/float64(b.N)), "rows/s")
	cpu.report()
}

// BenchmarkImportSmall imports small files into a new org each time, where
// an import's fixed costs (its statements, the rollups it writes) are most
// of its time: 100 rows of a CUR (a cloud export's path) and an OpenAI
// costs export (usage buckets: staged, merged, replaced).
func BenchmarkImportSmall(b *testing.B) {
	var cur bytes.Buffer
	if err := curgen.Generate(&cur, 100, 1); err != nil {
		b.Fatal(err)
	}
	openai, err := os.ReadFile("testdata/llm/openai_costs_2025-10.csv")
	if err != nil {
		b.Fatal(err)
	}
	st := storetest.New(b)
	im := NewImporter(st, testPrices, testGPUs)
	for name, data := range map[string][]byte{"cur-100-rows": cur.Bytes(), "openai-costs": openai} {
		b.Run(name, func(b *testing.B) {
			cpu := newCPUMeter(b, st)
			for b.Loop() {
				b.StopTimer()
				org, _ := storetest.Org(b, st, storetest.OrgOpts{})
				b.StartTimer()
				cpu.start()
				_, err := im.Import(context.Background(), ImportRequest{Org: org, FileName: name + ".csv", Via: "test"}, bytes.NewReader(data))
				cpu.stop()
				if err != nil {
					b.Fatal(err)
				}
			}
			cpu.report()
		})
	}
}

// cpuMeter adds up the CPU time an import takes in this process and in the
// database's backends, read from /proc: on a machine shared with other
// work it moves far less than wall time does. The backends' share is
// reported only when Postgres runs on this machine and its processes are
// readable (as root, or as their user).
type cpuMeter struct {
	b              *testing.B
	st             *store.Store
	client, server time.Duration
	c0, s0         time.Duration
	serverOK       bool
	n              int
}

func newCPUMeter(b *testing.B, st *store.Store) *cpuMeter {
	return &cpuMeter{b: b, st: st, serverOK: true}
}

func (m *cpuMeter) start() { m.c0, m.s0 = processCPU(), m.backendsCPU() }

func (m *cpuMeter) stop() {
	m.client += processCPU() - m.c0
	m.server += m.backendsCPU() - m.s0
	m.n++
}

func (m *cpuMeter) report() {
	if m.n == 0 {
		return
	}
	m.b.ReportMetric(float64(m.client.Milliseconds())/float64(m.n), "client-cpu-ms/op")
	if m.serverOK {
		m.b.ReportMetric(float64(m.server.Milliseconds())/float64(m.n), "server-cpu-ms/op")
	}
}

// backendsCPU is the user and system time of the database's backends now
// alive (the pool keeps the import's connection).
func (m *cpuMeter) backendsCPU() time.Duration {
	if !m.serverOK {
		return 0
	}
	rows, err := m.st.Pool().Query(context.Background(), `SELECT pid FROM pg_stat_activity WHERE datname = current_database()`)
	if err != nil {
		m.b.Fatal(err)
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		m.b.Fatal(err)
	}
	var total time.Duration
	for _, pid := range pids {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			m.serverOK = false // another machine's, or not ours to read
			return 0
		}
		// The fields after the command's closing parenthesis: utime and
		// stime are the 12th and 13th, in clock ticks (100 a second).
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		utime, _ := strconv.ParseInt(f[11], 10, 64)
		stime, _ := strconv.ParseInt(f[12], 10, 64)
		total += time.Duration(utime+stime) * 10 * time.Millisecond
	}
	return total
}
