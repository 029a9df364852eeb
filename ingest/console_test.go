package ingest

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/burnrate/burnrate/pricing"
)

// The Claude Console's four download shapes, and what each adds up to.
var consoleFiles = []struct {
	name  string
	total string // USD: the sum of cost_usd; for usage, tokens × the shipped prices
	rows  int64
}{
	{"claude_console_cost_2024-10.csv", "173.12", 180},        // usage_date_utc,model,api_key,usage_type,token_type,cost_usd
	{"claude_console_cost_2025-03.csv", "246.95", 288},        // … with workspace
	{"claude_console_cost_2026-01.csv", "767.27", 252},        // … with context_window and cost_type
	{"claude_console_usage_2026-01.csv", "579.629754075", 72}, // tokens, priced
}

// TestImportClaudeConsoleDownloads imports each of the Console's four
// shapes at the shipped LLM prices: cost files add up to their cost_usd to
// the cent, the usage file to its tokens at each kind's rate (long context
// above 200k, batch at half, web searches at $10 per 1,000); the same file
// again changes nothing, and a later download of the same days replaces
// them with the same totals.
func TestImportClaudeConsoleDownloads(t *testing.T) {
	t.Parallel()
	for _, f := range consoleFiles {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			b := setupImport(t)
			b.im = NewImporter(b.st, PriceTable(pricing.DefaultLLMPrices()), testGPUs)
			body, err := os.ReadFile("testdata/llm/" + f.name)
			if err != nil {
				t.Fatal(err)
			}
			res, err := b.importFile(t, f.name, body)
			if err != nil {
				t.Fatal(err)
			}
			if res.Totals["USD"] != f.total || res.Rows != f.rows || len(res.Totals) != 1 {
				t.Fatalf("imported %d rows, totals %v; want %d, USD %s", res.Rows, res.Totals, f.rows, f.total)
			}
			charges, rollup := storedTotals(t, b.st, b.org.ID)
			if charges["USD"].FloatString(9) != rollup["USD"].FloatString(9) || !strings.HasPrefix(charges["USD"].FloatString(9), f.total) {
				t.Fatalf("stored %s, rolled up %s; want %s", charges["USD"].FloatString(9), rollup["USD"].FloatString(9), f.total)
			}
			again, err := b.importFile(t, f.name, body)
			if err != nil || !again.Duplicate || again.ID != res.ID {
				t.Fatalf("the same file again: %+v, %v", again, err)
			}
			// A later download of the same days: the rows in another
			// order, Windows line ends.
			lines := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
			slices.Reverse(lines[1:])
			later, err := b.importFile(t, "later-"+f.name, []byte(strings.Join(lines, "\r\n")+"\r\n"))
			if err != nil {
				t.Fatal(err)
			}
			if later.Duplicate || later.ReplacedRows != f.rows || later.Rows != f.rows || later.Totals["USD"] != f.total {
				t.Fatalf("later download: %+v", later)
			}
			if charges, _ := storedTotals(t, b.st, b.org.ID); !strings.HasPrefix(charges["USD"].FloatString(9), f.total) {
				t.Fatalf("after the later download: %s", charges["USD"].FloatString(9))
			}
		})
	}
}

// TestClaudeConsoleOneModelWhicheverFile: the cost download's display
// names and the usage download's ids are one model each in the org's
// usage by model (the by-model view and the break-even read it), and a
// display name that meant one model until a date names the model of its
// day.
func TestClaudeConsoleOneModelWhicheverFile(t *testing.T) {
	t.Parallel()
	b := setupImport(t)
	b.im = NewImporter(b.st, PriceTable(pricing.DefaultLLMPrices()), testGPUs)
	for _, name := range []string{"claude_console_cost_2026-01.csv", "claude_console_usage_2026-01.csv", "claude_console_cost_2024-10.csv"} {
		body, err := os.ReadFile("testdata/llm/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.importFile(t, name, body); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	usage, err := b.st.LLMUsageByModel(ctx, b.org.ID, time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	var models []string
	for _, u := range usage {
		models = append(models, u.Model)
	}
	slices.Sort(models)
	want := []string{"claude-3-5-sonnet-20240620", "claude-3-5-sonnet-20241022", "claude-3-haiku-20240307", "claude-3-opus-20240229",
		"claude-haiku-4-5-20251001", "claude-opus-4-6", "claude-sonnet-4-5-20250929"}
	if !slices.Equal(models, want) {
		t.Fatalf("models %v, want %v", models, want)
	}
	for _, u := range usage {
		if u.Model == "claude-haiku-4-5-20251001" && (u.InputTokens == 0 || u.Billed["USD"].IsZero()) {
			t.Fatalf("Haiku 4.5: tokens from the usage file and dollars from both: %+v", u)
		}
	}
	// The 2024 file names "Claude 3.5 Sonnet" on 20–24 October: the June
	// model before the 22nd, the October one from then on.
	rows, err := b.st.Pool().Query(ctx, `SELECT DISTINCT charge_period_start::date::text, x_model FROM charges
		WHERE org_id = $1 AND sku LIKE 'Claude 3.5 Sonnet %' ORDER BY 1`, b.org.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var day, model string
		if err := rows.Scan(&day, &model); err != nil {
			t.Fatal(err)
		}
		got = append(got, day+" "+model)
	}
	if want := []string{"2024-10-20 claude-3-5-sonnet-20240620", "2024-10-21 claude-3-5-sonnet-20240620", "2024-10-22 claude-3-5-sonnet-20241022",
		"2024-10-23 claude-3-5-sonnet-20241022", "2024-10-24 claude-3-5-sonnet-20241022"}; !slices.Equal(got, want) {
		t.Fatalf("Claude 3.5 Sonnet by day: %v", got)
	}
}

// TestClaudeConsoleUsagePricing prices one usage download by hand at
// Anthropic's published rates: Sonnet 4.5 at $3/$15 (cache reads $0.30)
// and, over 200k tokens of input, $6/$22.50 (reads $0.60); 5-minute
// cache writes at 1.25× and 1-hour at 2× the input rate; batch at half;
// web searches $0.01 each.
func TestClaudeConsoleUsagePricing(t *testing.T) {
	t.Parallel()
	const head = "usage_date_utc,model_version,api_key,workspace,usage_type,context_window,usage_input_tokens_no_cache," +
		"usage_input_tokens_cache_write_5m,usage_input_tokens_cache_write_1h,usage_input_tokens_cache_read,usage_output_tokens,web_search_count\n"
	tests := []struct {
		row, want string
	}{
		// 3 + 0.375 + 0.06 + 0.6 + 1.5 + 0.03
		{"2026-01-12,claude-sonnet-4-5-20250929,k,,standard,≤ 200k,1000000,100000,10000,2000000,100000,3", "5.565"},
		// 6 + 0.75 + 0.12 + 1.2 + 2.25 + 0.03
		{"2026-01-12,claude-sonnet-4-5-20250929,k,,standard,> 200k,1000000,100000,10000,2000000,100000,3", "10.35"},
		// (1 + 5) / 2
		{"2026-01-12,claude-haiku-4-5-20251001,k,,batch,≤ 200k,1000000,0,0,0,1000000,0", "3"},
		// Haiku 4.5 has no long-context rates: its own apply.
		{"2026-01-12,claude-haiku-4-5-20251001,k,,standard,> 200k,1000000,0,0,0,0,0", "1"},
		// Searches alone.
		{"2026-01-12,claude-haiku-4-5-20251001,k,,standard,≤ 200k,0,0,0,0,0,250", "2.5"},
	}
	for _, tt := range tests {
		rows, _, err := readAll(t, strings.NewReader(head+tt.row+"\n"), Options{FileName: "u.csv", Pricer: PriceTable(pricing.DefaultLLMPrices())})
		if err != nil {
			t.Fatal(err)
		}
		if got := rows[0].BilledCost.String(); got != tt.want || !rows[0].PricedByUs {
			t.Errorf("%s: cost %s, want %s", tt.row, got, tt.want)
		}
	}
	// A model the table cannot price fails at its line, naming it.
	_, _, err := readAll(t, strings.NewReader(head+"2026-01-12,claude-mystery-9,k,,standard,≤ 200k,10,0,0,0,1,0\n"),
		Options{FileName: "u.csv", Pricer: PriceTable(pricing.DefaultLLMPrices())})
	if err == nil || !strings.Contains(err.Error(), `line 2, column model_version: "claude-mystery-9" has no price in the LLM price table`) {
		t.Fatalf("unknown model: %v", err)
	}
}

// TestClaudeConsoleCostRows: what a cost row keeps besides its dollars.
func TestClaudeConsoleCostRows(t *testing.T) {
	t.Parallel()
	body := "usage_date_utc,model,workspace,api_key,usage_type,context_window,token_type,cost_usd,cost_type\n" +
		"2026-01-12,Claude Sonnet 4.5,research,notebook,message,> 200k,input_cache_write_1h,\"$1,234.50\",token\n" +
		"2026-01-12,Claude Opus 5,,,web_search,,,0.40,web_search\n"
	rows, src, err := readAll(t, bytes.NewReader([]byte(body)), Options{FileName: "c.csv"})
	if err != nil {
		t.Fatal(err)
	}
	if src != SourceConsoleCost || len(rows) != 2 {
		t.Fatalf("%s, %d rows", src, len(rows))
	}
	r := rows[0]
	if r.Model != "claude-sonnet-4-5-20250929" || r.SKU != "Claude Sonnet 4.5 input_cache_write_1h" || r.SubAccountID != "research" ||
		r.ResourceID != "notebook" || r.BilledCost.String() != "1234.5" || r.Tags["context_window"] != "> 200k" || r.PricedByUs {
		t.Fatalf("row %+v", r)
	}
	// A model newer than the table gets the id Anthropic gives such names.
	if rows[1].Model != "claude-opus-5" || rows[1].Tags["cost_type"] != "web_search" {
		t.Fatalf("row %+v", rows[1])
	}
}
