package ingest

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
	"time"
)

// hostileSeeds are inputs the Reader must refuse with a line: bytes
// Postgres text cannot hold, ragged rows, dates out of range.
var hostileSeeds = []string{
	"BilledCost,ChargePeriodStart,ServiceName\n1,2024-01-01,Caf\xe9\n",
	"BilledCost,ChargePeriodStart,ServiceName\n1,2024-01-01,a\x00b\n",
	"BilledCost,ChargePeriodStart,Tags\n1,2024-01-01,\"{\"\"k\"\": \"\"\\u0000\"\"}\"\n",
	"\xff\xfeB\x00i\x00l\x00l\x00",
	"B\x00i\x00l\x00l\x00e\x00d\x00C\x00o\x00s\x00t\x00,\x00",
	"BilledCost,ChargePeriodStart,ServiceName\n1,2024-01-01\n2,2024-01-01,x,y\n",
	"usage_start_time,cost,service.description\n1970-01-01 00:00:00+00:00,1,x\n",
	"start_time,end_time,model,input_tokens,output_tokens\n100000000,100086400,gpt-4o,1,1\n",
}

// addSamples seeds a fuzz corpus with every fixture (plain and gzip) and
// the hostile seeds.
func addSamples(f *testing.F, add func(b []byte)) {
	for _, s := range hostileSeeds {
		add([]byte(s))
	}
	files := append(sampleFiles(f), "testdata/exports/azure/empty_frame.csv")
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		add(b)
		if len(b) < 4096 {
			add(gzipBytes(f, b))
		}
	}
}

// drain reads every row; it must end in io.EOF or a typed error, never panic.
func drain(t *testing.T, in []byte, opts Options) {
	rd, err := Open(bytes.NewReader(in), opts)
	if err != nil {
		if err.Error() == "" {
			t.Fatal("empty error message")
		}
		return
	}
	var row Row
	for range 100000 {
		err := rd.Next(&row)
		if err == io.EOF {
			return
		}
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Next returned %T %v, want *ParseError", err, err)
			}
			return
		}
		if row.Source != rd.Source() {
			t.Fatalf("row source %q, reader %q", row.Source, rd.Source())
		}
		if row.ChargePeriodStart.IsZero() {
			t.Fatal("row without a charge period start")
		}
		storable(t, &row)
	}
}

// storable fails unless every text of row is UTF-8 without NUL (what
// Postgres text and jsonb hold) and its dates are within the bounds.
func storable(t *testing.T, row *Row) {
	t.Helper()
	texts := []string{row.ProviderName, row.ServiceName, row.ServiceCategory, row.SKU, row.ResourceID, row.RegionID,
		row.SubAccountID, string(row.ChargeCategory), row.BillingCurrency, row.ConsumedUnit, row.Team, row.InstanceType,
		row.GPUType, row.Model, row.BillingAccountID, row.DedupeKey}
	for k, v := range row.Tags {
		texts = append(texts, k, v)
	}
	for _, s := range texts {
		if badText(s) >= 0 {
			t.Fatalf("row holds %q, which Postgres text cannot", s)
		}
	}
	b := boundsAt(time.Now())
	for _, d := range []time.Time{row.ChargePeriodStart, row.BillingPeriodStart} {
		if !d.IsZero() && b.check(d) != nil {
			t.Fatalf("row dated %s, out of bounds", d)
		}
	}
}

// FuzzOpen exercises detection and every parser reachable from a header.
func FuzzOpen(f *testing.F) {
	addSamples(f, func(b []byte) { f.Add(b) })
	f.Fuzz(func(t *testing.T, in []byte) {
		drain(t, in, Options{FileName: "fuzz.csv", Pricer: testPrices, GPUs: testGPUs, MaxRecordBytes: 1 << 16})
	})
}

// FuzzParse forces each source (and the generic mapping) on arbitrary input.
func FuzzParse(f *testing.F) {
	sources := Sources()
	addSamples(f, func(b []byte) {
		for i := range sources {
			f.Add(b, uint8(i))
		}
	})
	f.Fuzz(func(t *testing.T, in []byte, which uint8) {
		src := sources[int(which)%len(sources)]
		opts := Options{FileName: "fuzz.csv", Source: src, Pricer: testPrices, GPUs: testGPUs, MaxRecordBytes: 1 << 16}
		if src == SourceGeneric {
			opts.Mapping = genericMapping
		}
		drain(t, in, opts)
	})
}

// FuzzParseTagMap covers the JSON / Python-repr / Hive map reader.
func FuzzParseTagMap(f *testing.F) {
	for _, s := range []string{
		`{"team":"ml"}`, `"a": "b","c": "d"`, `[{'key': 'k', 'value': 'v', 'x': None}]`, `{a=b, c=d}`,
		`["team:ml", "x"]`, `[{'name': 'FreeTrial', 'amount': -5e-06, 'full_name': None}]`, `{'a': [1, (2, 3)]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_ = parseTagMap(s, func(k, v string) {})
		_, _ = parseLoose(s)
		_, _ = parseDecimal(s)
		_, _ = parseTime(s)
		_, _ = parseCount(s)
	})
}
