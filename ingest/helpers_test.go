package ingest

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/pricing"
)

// fakePricer prices a handful of models; prices are USD per 1M tokens.
type fakePricer map[string][3]string // model -> input, output, cached input

var testPrices = fakePricer{
	"gpt-4o":                     {"2.5", "10", "1.25"},
	"gpt-4o-2024-08-06":          {"2.5", "10", "1.25"},
	"gpt-4o-mini-2024-07-18":     {"0.15", "0.6", "0.075"},
	"claude-sonnet-4-5-20250929": {"3", "15", "0.3"},
	"claude-haiku-4-5-20251001":  {"1", "5", "0.1"},
}

// PriceUsage prices u at the test prices, cache writes at Anthropic's
// 1.25× and 2× the input price; it knows no long-context rates.
func (f fakePricer) PriceUsage(model string, u pricing.TokenUsage) (decimal.Decimal, bool) {
	p, ok := f[model]
	if !ok {
		return decimal.Zero, false
	}
	in, out, c := decimal.RequireFromString(p[0]), decimal.RequireFromString(p[1]), decimal.RequireFromString(p[2])
	n := decimal.NewFromInt
	sum := in.Mul(n(u.Uncached)).Add(out.Mul(n(u.Output))).Add(c.Mul(n(u.CacheRead))).
		Add(in.Mul(n(u.CacheWrite5m)).Mul(decimal.RequireFromString("1.25"))).Add(in.Mul(n(u.CacheWrite1h)).Mul(n(2)))
	return sum.Shift(-6), true
}

// fakeGPUs knows a few instance types per provider.
type fakeGPUs map[string]struct {
	gpu   string
	count float64
}

var testGPUs = fakeGPUs{
	"aws/p4d.24xlarge":               {"A100", 8},
	"aws/p5.48xlarge":                {"H100", 8},
	"aws/g5.xlarge":                  {"A10G", 1},
	"aws/g5.12xlarge":                {"A10G", 4},
	"aws/p3.2xlarge":                 {"V100", 1},
	"azure/Standard_NC24ads_A100_v4": {"A100-80GB", 1},
	"azure/Standard_NV6ads_A10_v5":   {"A10", 0.167},
	"gcp/a2-highgpu-1g":              {"A100", 1},
}

func (f fakeGPUs) InstanceGPU(provider, instanceType string) (string, float64, bool) {
	g, ok := f[provider+"/"+instanceType]
	return g.gpu, g.count, ok
}

var genericMapping = &Mapping{
	Date: "Day", Cost: "Amount", Currency: "Curr", Service: "Service", Account: "Account",
	Provider: "Vendor", Tags: []string{"Team"}, DateFormat: "02.01.2006",
}

// optsFor returns the options a test uses for a fixture path.
func optsFor(path string) Options {
	o := Options{FileName: filepath.Base(path), Pricer: testPrices, GPUs: testGPUs}
	if filepath.Base(path) == "generic_costs.csv" || filepath.Base(path) == "generic_costs.csv.gz" {
		o.Mapping = genericMapping
	}
	return o
}

// readAll parses a whole input and returns cloned rows.
func readAll(t testing.TB, r io.Reader, opts Options) ([]Row, Source, error) {
	t.Helper()
	rd, err := Open(r, opts)
	if err != nil {
		return nil, "", err
	}
	var rows []Row
	var row Row
	for {
		err := rd.Next(&row)
		if errors.Is(err, io.EOF) {
			return rows, rd.Source(), nil
		}
		if err != nil {
			return rows, rd.Source(), err
		}
		rows = append(rows, row.Clone())
	}
}

func readFile(t testing.TB, path string, opts Options) ([]Row, Source, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return readAll(t, f, opts)
}

func gzipBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// sampleFiles lists every cost file under testdata (not the header-only one).
func sampleFiles(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, pat := range []string{"testdata/exports/*/*.csv", "testdata/llm/*.csv"} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			if filepath.Base(f) != "empty_frame.csv" {
				out = append(out, f)
			}
		}
	}
	return out
}
