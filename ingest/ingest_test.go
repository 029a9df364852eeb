package ingest

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.golden.json")

// rawTable reads a CSV with encoding/csv only, for independent checks.
func rawTable(t *testing.T, path string) (hdr []string, recs [][]string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cr := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))))
	cr.FieldsPerRecord = -1
	all, err := cr.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return all[0], all[1:]
}

func rat(t *testing.T, s string) *big.Rat {
	t.Helper()
	s = strings.TrimSpace(s)
	if s == "" || s == "NULL" {
		return new(big.Rat)
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("test cannot read %q as a number", s)
	}
	return r
}

var parenName = regexp.MustCompile(`\(([A-Za-z0-9_]+)\)$`)

var gcpCreditAmount = regexp.MustCompile(`'amount': (-?[0-9.e+-]+)`)

// expectedTotals computes a file's total per currency straight from its
// raw cost column (and, for usage reports, tokens × the fake prices),
// without the parser.
func expectedTotals(t *testing.T, path string) (map[string]*big.Rat, int) {
	t.Helper()
	hdr, recs := rawTable(t, path)
	col := func(names ...string) int {
		for _, n := range names {
			for i, h := range hdr {
				h = strings.TrimSpace(h)
				// A localised header: "Kosten vor Steuern (PreTaxCost)".
				if m := parenName.FindStringSubmatch(h); m != nil {
					h = m[1]
				}
				if strings.EqualFold(h, n) {
					return i
				}
			}
		}
		return -1
	}
	cell := func(rec []string, i int) string {
		if i < 0 || i >= len(rec) {
			return ""
		}
		return rec[i]
	}
	perM := func(model string, k int) *big.Rat {
		p, ok := testPrices[model]
		if !ok {
			t.Fatalf("no test price for %q", model)
		}
		r := rat(t, p[k])
		return r.Quo(r, big.NewRat(1_000_000, 1))
	}
	mul := func(a, b *big.Rat) *big.Rat { return new(big.Rat).Mul(a, b) }

	// claude prices a Claude usage row by its columns: uncached, cache
	// reads, output, 5-minute (1.25×) and 1-hour (2×) cache writes, half
	// on the batch tier, plus $0.01 a web search.
	claude := func(model, uncached, read, output, write5m, write1h, tier, searches string, rec []string) *big.Rat {
		m := cell(rec, col(model))
		v := mul(rat(t, cell(rec, col(uncached))), perM(m, 0))
		v.Add(v, mul(rat(t, cell(rec, col(read))), perM(m, 2)))
		v.Add(v, mul(rat(t, cell(rec, col(output))), perM(m, 1)))
		v.Add(v, mul(mul(rat(t, cell(rec, col(write5m))), perM(m, 0)), big.NewRat(5, 4)))
		v.Add(v, mul(mul(rat(t, cell(rec, col(write1h))), perM(m, 0)), big.NewRat(2, 1)))
		if cell(rec, col(tier)) == "batch" {
			v.Mul(v, big.NewRat(1, 2))
		}
		return v.Add(v, mul(rat(t, cell(rec, col(searches))), big.NewRat(1, 100)))
	}
	totals := map[string]*big.Rat{}
	add := func(cur string, v *big.Rat) {
		cur = strings.ToUpper(strings.TrimSpace(cur))
		if cur == "" || cur == "NULL" {
			cur = "USD"
		}
		if totals[cur] == nil {
			totals[cur] = new(big.Rat)
		}
		totals[cur].Add(totals[cur], v)
	}
	rows := 0
	base := filepath.Base(path)
	for _, rec := range recs {
		empty := true
		for _, v := range rec[min(4, len(rec)):] {
			if v != "" {
				empty = false
			}
		}
		if empty {
			continue // empty usage bucket
		}
		rows++
		switch {
		case strings.HasPrefix(base, "completions_usage"):
			in, cached, out := rat(t, cell(rec, col("input_tokens"))), rat(t, cell(rec, col("input_cached_tokens"))), rat(t, cell(rec, col("output_tokens")))
			m := cell(rec, col("model"))
			v := mul(new(big.Rat).Sub(in, cached), perM(m, 0))
			v.Add(v, mul(cached, perM(m, 2)))
			v.Add(v, mul(out, perM(m, 1)))
			if cell(rec, col("batch")) == "True" {
				v.Mul(v, big.NewRat(1, 2))
			}
			add("USD", v)
		case base == "anthropic_usage_report.csv":
			add("USD", claude("model", "uncached_input_tokens", "cache_read_input_tokens", "output_tokens",
				"cache_creation.ephemeral_5m_input_tokens", "cache_creation.ephemeral_1h_input_tokens", "service_tier",
				"server_tool_use.web_search_requests", rec))
		case strings.HasPrefix(base, "claude_console_usage"):
			add("USD", claude("model_version", "usage_input_tokens_no_cache", "usage_input_tokens_cache_read", "usage_output_tokens",
				"usage_input_tokens_cache_write_5m", "usage_input_tokens_cache_write_1h", "usage_type", "web_search_count", rec))
		case strings.HasPrefix(base, "claude_console_cost"):
			add("USD", rat(t, cell(rec, col("cost_usd"))))
		case base == "anthropic_cost_report.csv":
			add(cell(rec, col("currency")), mul(rat(t, cell(rec, col("amount"))), big.NewRat(1, 100)))
		case base == "gcp_bq_flattened.csv": // GCP flattened: cost + credits_amount
			v := rat(t, cell(rec, col("cost")))
			v.Add(v, rat(t, cell(rec, col("credits_amount"))))
			add(cell(rec, col("currency")), v)
		case strings.HasPrefix(base, "202011_"): // GCP: cost + credits
			v := rat(t, cell(rec, col("cost")))
			for _, m := range gcpCreditAmount.FindAllStringSubmatch(cell(rec, col("credits")), -1) {
				v.Add(v, rat(t, m[1]))
			}
			add(cell(rec, col("currency")), v)
		default:
			c := col("lineItem/UnblendedCost", "line_item_unblended_cost", "BilledCost", "CostInBillingCurrency",
				"PreTaxCost", "Cost", "amount_value", "spend", "cost_total", "Amount", "cost/myCost")
			if c < 0 {
				t.Fatalf("%s: test does not know the cost column", base)
			}
			cur := col("lineItem/CurrencyCode", "line_item_currency_code", "BillingCurrency", "BillingCurrencyCode",
				"Currency", "amount_currency", "Curr", "cost/currencyCode")
			add(cell(rec, cur), rat(t, cell(rec, c)))
		}
	}
	return totals, rows
}

func TestSampleTotalsMatchRawCostColumn(t *testing.T) {
	t.Parallel()
	for _, path := range sampleFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			rows, _, err := readFile(t, path, optsFor(path))
			if err != nil {
				t.Fatal(err)
			}
			want, wantRows := expectedTotals(t, path)
			if len(rows) != wantRows {
				t.Errorf("rows = %d, want %d", len(rows), wantRows)
			}
			got := map[string]*big.Rat{}
			for _, r := range rows {
				if got[r.BillingCurrency] == nil {
					got[r.BillingCurrency] = new(big.Rat)
				}
				got[r.BillingCurrency].Add(got[r.BillingCurrency], r.BilledCost.Rat())
			}
			if len(got) != len(want) {
				t.Fatalf("currencies = %v, want %v", keys(got), keys(want))
			}
			for cur, w := range want {
				if g := got[cur]; g == nil || g.Cmp(w) != 0 {
					t.Errorf("total %s = %v, want %v (exact)", cur, ratString(g), ratString(w))
				}
			}
		})
	}
}

func keys(m map[string]*big.Rat) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func ratString(r *big.Rat) string {
	if r == nil {
		return "<nil>"
	}
	return r.FloatString(30)
}

func TestGzipGivesSameRows(t *testing.T) {
	t.Parallel()
	for _, path := range sampleFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			plain, src, err := readFile(t, path, optsFor(path))
			if err != nil {
				t.Fatal(err)
			}
			var gz []byte
			if b, err := os.ReadFile(path + ".gz"); err == nil {
				gz = b // committed fixture
			} else {
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				gz = gzipBytes(t, b)
			}
			zipped, zsrc, err := readAll(t, bytes.NewReader(gz), optsFor(path))
			if err != nil {
				t.Fatal(err)
			}
			if src != zsrc {
				t.Errorf("source %s vs %s", src, zsrc)
			}
			a, _ := json.Marshal(plain)
			b, _ := json.Marshal(zipped)
			if !bytes.Equal(a, b) {
				t.Error("gzip rows differ from plain rows")
			}
		})
	}
}

func TestDetectsEverySample(t *testing.T) {
	t.Parallel()
	want := map[string]Source{
		"test_cur.csv":                                        SourceAWSCUR,
		"2022-07-01-alt-columns.csv":                          SourceAWSCUR2,
		"azure_camelCased.csv":                                SourceAzureCost,
		"azure_version_2.csv":                                 SourceAzureCost,
		"camel_azure_version_2.csv":                           SourceAzureCost,
		"costreport_a243c6f2-199f-4074-9a2c-40e671cf1584.csv": SourceAzureCost,
		"azure_de_portal.csv":                                 SourceAzureCost,
		"gcp_bq_flattened.csv":                                SourceGCPBilling,
		"oci_cost_report.csv":                                 SourceOCICost,
		"oci_focus_report.csv":                                SourceOCIFocus,
		"focus_sample_1.0.csv":                                SourceFOCUS,
		"202011_30c31bca571d9b7f3b2c8459dd8bc34a_2020-11-08_2020-11-11.csv": SourceGCPBilling,
		"completions_usage_2025-10-27_2025-10-29.csv":                       SourceOpenAIUsage,
		"openai_costs_2025-10.csv":                                          SourceOpenAICosts,
		"anthropic_usage_report.csv":                                        SourceAnthropicUsage,
		"anthropic_cost_report.csv":                                         SourceAnthropicCost,
		"claude_console_cost_2024-10.csv":                                   SourceConsoleCost,
		"claude_console_cost_2025-03.csv":                                   SourceConsoleCost,
		"claude_console_cost_2026-01.csv":                                   SourceConsoleCost,
		"claude_console_usage_2026-01.csv":                                  SourceConsoleUsage,
		"LiteLLM_SpendLogs.csv":                                             SourceLiteLLMSpend,
		"LiteLLM_DailyTeamSpend.csv":                                        SourceLiteLLMDaily,
		"openrouter_activity.csv":                                           SourceOpenRouter,
		"generic_costs.csv":                                                 SourceGeneric,
	}
	for _, path := range sampleFiles(t) {
		_, src, err := readFile(t, path, optsFor(path))
		if err != nil {
			t.Fatal(err)
		}
		if w, ok := want[filepath.Base(path)]; !ok || src != w {
			t.Errorf("%s: detected %q, want %q", filepath.Base(path), src, w)
		}
		// Forcing the right source gives the same result.
		if src != SourceGeneric {
			o := optsFor(path)
			o.Source = src
			if _, _, err := readFile(t, path, o); err != nil {
				t.Errorf("%s forced to %s: %v", filepath.Base(path), src, err)
			}
		}
	}
}

// TestGolden compares the first rows of every fixture with
// testdata/golden/<file>.golden.json; run with -update to rewrite them.
func TestGolden(t *testing.T) {
	t.Parallel()
	for _, path := range sampleFiles(t) {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rows, _, err := readFile(t, path, optsFor(path))
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.MarshalIndent(rows[:min(4, len(rows))], "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := filepath.Join("testdata", "golden", strings.TrimSuffix(name, ".csv")+".golden.json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGolden -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("rows differ from %s (run with -update after checking):\n%s", golden, got)
			}
		})
	}
}
