package ingest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/store"
)

// stored is what an org's charges and daily_spend hold, summed.
type stored struct {
	rows                                         int64
	billed, effective, rollBilled, rollEffective decimal.Decimal
	input, output, requests                      int64
	rollInput, rollOutput, rollRequests          int64
}

func storedSums(t *testing.T, st *store.Store, orgID int64) stored {
	t.Helper()
	var s stored
	ctx := context.Background()
	if err := st.Pool().QueryRow(ctx, `
		SELECT count(*), coalesce(sum(billed_cost), 0), coalesce(sum(effective_cost), 0),
			coalesce(sum(x_input_tokens), 0), coalesce(sum(x_output_tokens), 0), coalesce(sum(x_requests), 0)
		FROM charges WHERE org_id = $1`, orgID).Scan(&s.rows, &s.billed, &s.effective, &s.input, &s.output, &s.requests); err != nil {
		t.Fatal(err)
	}
	if err := st.Pool().QueryRow(ctx, `
		SELECT coalesce(sum(billed), 0), coalesce(sum(effective), 0), coalesce(sum(input_tokens), 0),
			coalesce(sum(output_tokens), 0), coalesce(sum(requests), 0)
		FROM daily_spend WHERE org_id = $1`, orgID).Scan(&s.rollBilled, &s.rollEffective, &s.rollInput, &s.rollOutput, &s.rollRequests); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestImportAddsRowsSharingAKey: rows of one file under one bucket key are
// parts of the bucket, added together, in charges, daily_spend and the
// import's totals alike, for every source whose rows are keyed by bucket.
// A later file restating the bucket still replaces it.
func TestImportAddsRowsSharingAKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		source                  Source
		file                    string
		total                   string
		input, output, requests int64
	}{
		{SourceOpenAIUsage, "start_time,end_time,start_time_iso,end_time_iso,project_id,num_model_requests,user_id,api_key_id,model,batch,service_tier,input_tokens,output_tokens,input_cached_tokens\n" +
			"1761523200,1761609600,2025-10-27T00:00:00+00:00,2025-10-28T00:00:00+00:00,proj_1,3.0,user_1,key_1,gpt-4o,False,default,1000,500,0\n" +
			"1761523200,1761609600,2025-10-27T00:00:00+00:00,2025-10-28T00:00:00+00:00,proj_1,5.0,user_1,key_1,gpt-4o,False,default,2000,1000,0\n",
			"0.0225", 3000, 1500, 8}, // (1000×2.5 + 500×10 + 2000×2.5 + 1000×10) / 1M
		{SourceOpenAICosts, "start_time,end_time,amount_value,amount_currency,line_item,project_id,organization_id\n" +
			"1761523200,1761609600,1.25,usd,\"gpt-4o-2024-08-06, input\",proj_1,org_1\n" +
			"1761523200,1761609600,2.5,usd,\"gpt-4o-2024-08-06, input\",proj_1,org_1\n",
			"3.75", 0, 0, 0},
		{SourceAnthropicUsage, "starting_at,ending_at,workspace_id,api_key_id,model,service_tier,context_window,uncached_input_tokens,cache_read_input_tokens,output_tokens\n" +
			"2025-10-27T00:00:00Z,2025-10-28T00:00:00Z,wrk_1,key_1,claude-sonnet-4-5-20250929,standard,0-200k,1000,0,100\n" +
			"2025-10-27T00:00:00Z,2025-10-28T00:00:00Z,wrk_1,key_1,claude-sonnet-4-5-20250929,standard,0-200k,2000,0,200\n",
			"0.0135", 3000, 300, 0}, // (3000×3 + 300×15) / 1M
		{SourceAnthropicCost, "starting_at,ending_at,workspace_id,description,model,token_type,cost_type,amount,currency\n" +
			"2025-10-27T00:00:00Z,2025-10-28T00:00:00Z,wrk_1,Claude Sonnet 4.5 Usage - Input Tokens,claude-sonnet-4-5-20250929,uncached_input_tokens,tokens,150,USD\n" +
			"2025-10-27T00:00:00Z,2025-10-28T00:00:00Z,wrk_1,Claude Sonnet 4.5 Usage - Input Tokens,claude-sonnet-4-5-20250929,uncached_input_tokens,tokens,250,USD\n",
			"4", 0, 0, 0}, // cents
		{SourceLiteLLMDaily, "date,team_id,api_key,model,custom_llm_provider,prompt_tokens,completion_tokens,spend,api_requests\n" +
			"2025-10-27,team_1,hash_1,gpt-4o,openai,100,50,0.5,2\n" +
			"2025-10-27,team_1,hash_1,gpt-4o,openai,200,70,0.75,3\n",
			"1.25", 300, 120, 5},
	} {
		t.Run(string(tc.source), func(t *testing.T) {
			t.Parallel()
			b := setupImport(t)
			res, err := b.importFile(t, string(tc.source)+".csv", []byte(tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if res.Source != tc.source {
				t.Fatalf("detected %s, want %s", res.Source, tc.source)
			}
			want := decimal.RequireFromString(tc.total)
			s := storedSums(t, b.st, b.org.ID)
			if s.rows != 1 || !s.billed.Equal(want) || !s.rollBilled.Equal(want) || !s.effective.Equal(want) || !s.rollEffective.Equal(want) {
				t.Fatalf("stored %d rows, billed %s (rollup %s), effective %s (rollup %s); want 1 row of %s",
					s.rows, s.billed, s.rollBilled, s.effective, s.rollEffective, want)
			}
			if s.input != tc.input || s.output != tc.output || s.requests != tc.requests ||
				s.rollInput != tc.input || s.rollOutput != tc.output || s.rollRequests != tc.requests {
				t.Fatalf("tokens in/out/requests %d/%d/%d (rollup %d/%d/%d), want %d/%d/%d", s.input, s.output, s.requests,
					s.rollInput, s.rollOutput, s.rollRequests, tc.input, tc.output, tc.requests)
			}
			if res.Rows != 1 || res.MergedRows != 1 || res.ReplacedRows != 0 || res.SkippedRows != 0 {
				t.Fatalf("result rows %d, merged %d, replaced %d, skipped %d; want 1, 1, 0, 0", res.Rows, res.MergedRows, res.ReplacedRows, res.SkippedRows)
			}
			if got := decimal.RequireFromString(res.Totals["USD"]); !got.Equal(want) {
				t.Fatalf("result total %s, want %s", got, want)
			}
			imp, err := b.st.Import(context.Background(), b.org.ID, res.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !imp.Totals["USD"].Equal(want) || imp.MergedRows != 1 {
				t.Fatalf("import history total %s, merged %d; want %s, 1", imp.Totals["USD"], imp.MergedRows, want)
			}

			// A later export restating the bucket (its first row only)
			// replaces the bucket: what it says is the bucket now.
			lines := strings.SplitAfter(tc.file, "\n")
			res, err = b.importFile(t, "restated.csv", []byte(lines[0]+lines[1]))
			if err != nil {
				t.Fatal(err)
			}
			if res.Rows != 1 || res.ReplacedRows != 1 || res.MergedRows != 0 {
				t.Fatalf("restated: rows %d, replaced %d, merged %d; want 1, 1, 0", res.Rows, res.ReplacedRows, res.MergedRows)
			}
			s = storedSums(t, b.st, b.org.ID)
			if got := decimal.RequireFromString(res.Totals["USD"]); s.rows != 1 || !s.billed.Equal(got) || !s.rollBilled.Equal(got) || !got.LessThan(want) {
				t.Fatalf("restated: %d rows, billed %s, rollup %s, result %s", s.rows, s.billed, s.rollBilled, got)
			}
		})
	}
}

// TestImportRepeatedRequestIDs: a request id names one request. Written
// twice alike, the second is skipped (and said so); written twice with
// other values, the file is refused at the second line, nothing written.
func TestImportRepeatedRequestIDs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, header, row, other string
		cost                     string
	}{
		{"litellm-spend", "request_id,startTime,model,custom_llm_provider,spend,prompt_tokens,completion_tokens\n",
			"req-1,2025-10-27T10:00:00Z,gpt-4o,openai,0.5,100,50\n", "req-1,2025-10-27T10:00:00Z,gpt-4o,openai,0.7,100,50\n", "0.5"},
		{"openrouter-activity", "generation_id,created_at,cost_total,model_permaslug,provider_name,tokens_prompt,tokens_completion\n",
			"gen-1,2025-10-27 10:00:00,0.25,openai/gpt-4o,OpenAI,100,50\n", "gen-1,2025-10-27 10:00:00,0.25,openai/gpt-4o,OpenAI,100,60\n", "0.25"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setupImport(t)
			_, err := b.importFile(t, "differ.csv", []byte(tc.header+tc.row+tc.other))
			var ierr *ImportError
			if !errors.As(err, &ierr) || !errors.Is(err, ErrRepeatedID) {
				t.Fatalf("err = %v, want a repeated request id", err)
			}
			if line, _ := ierr.Position(); line != 3 || !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), "differ.csv") {
				t.Fatalf("err = %q (line %d), want line 3 naming line 2 and the file", err, line)
			}
			if s := storedSums(t, b.st, b.org.ID); s.rows != 0 || !s.rollBilled.IsZero() {
				t.Fatalf("a refused file wrote %d rows, %s", s.rows, s.rollBilled)
			}

			res, err := b.importFile(t, "twice.csv", []byte(tc.header+tc.row+tc.row))
			if err != nil {
				t.Fatal(err)
			}
			want := decimal.RequireFromString(tc.cost)
			s := storedSums(t, b.st, b.org.ID)
			if res.Rows != 1 || res.SkippedRows != 1 || s.rows != 1 || !s.billed.Equal(want) || !s.rollBilled.Equal(want) ||
				!decimal.RequireFromString(res.Totals["USD"]).Equal(want) {
				t.Fatalf("rows %d, skipped %d, stored %d rows of %s (rollup %s), totals %v; want 1 row of %s",
					res.Rows, res.SkippedRows, s.rows, s.billed, s.rollBilled, res.Totals, want)
			}
		})
	}
}

// TestImportFileWithoutCharges: a file whose records carry no charge (an
// OpenAI export of days without use) or only zero costs is a fine file; a
// file with a header and no record still fails, saying so.
func TestImportFileWithoutCharges(t *testing.T) {
	t.Parallel()
	b := setupImport(t)
	empty := "start_time,end_time,start_time_iso,end_time_iso,project_id,num_model_requests,model,input_tokens,output_tokens\n" +
		"1761523200,1761609600,2025-10-27T00:00:00+00:00,2025-10-28T00:00:00+00:00\n" +
		"1761609600,1761696000,2025-10-28T00:00:00+00:00,2025-10-29T00:00:00+00:00\n"
	res, err := b.importFile(t, "completions_usage_quiet.csv", []byte(empty))
	if err != nil {
		t.Fatalf("a file of empty days: %v", err)
	}
	if res.Rows != 0 || len(res.Totals) != 0 {
		t.Fatalf("empty days = %+v", res)
	}
	zero := "BilledCost,EffectiveCost,ChargePeriodStart,ChargePeriodEnd,BillingCurrency,ProviderName,ServiceName\n" +
		"0,0,2025-10-01,2025-10-02,USD,AWS,Amazon Simple Storage Service\n" +
		"0.00,0,2025-10-02,2025-10-03,USD,AWS,Amazon Simple Storage Service\n"
	res, err = b.importFile(t, "focus_free_tier.csv", []byte(zero))
	if err != nil {
		t.Fatalf("a file of zero costs: %v", err)
	}
	if res.Rows != 2 || res.Totals["USD"] != "0" || res.PeriodStart == nil || *res.PeriodStart != "2025-10-01" {
		t.Fatalf("zero costs = %+v", res)
	}

	for name, body := range map[string]string{
		"header_only.csv":        "BilledCost,ChargePeriodStart,ChargePeriodEnd,BillingCurrency\n",
		"header_blank_lines.csv": "BilledCost,ChargePeriodStart,ChargePeriodEnd,BillingCurrency\n\n\n",
	} {
		_, err := b.importFile(t, name, []byte(body))
		if !errors.Is(err, ErrHeaderOnly) || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "header but no data rows") {
			t.Errorf("%s: err = %v, want header-only naming the file", name, err)
		}
	}
}

// TestCanonicalProvider covers the spellings the sources write.
func TestCanonicalProvider(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		"openai": "OpenAI", "OpenAI": "OpenAI", " OPENAI ": "OpenAI", "anthropic": "Anthropic", "Anthropic": "Anthropic",
		"azure": "Microsoft Azure", "Microsoft": "Microsoft Azure", "azure_ai": "Microsoft Azure",
		"bedrock": "AWS", "Amazon Web Services": "AWS", "AWS": "AWS", "sagemaker": "AWS",
		"vertex_ai": "Google Cloud", "vertex-ai": "Google Cloud", "gemini": "Google Cloud", "GCP": "Google Cloud", "Google Cloud": "Google Cloud",
		"OCI": "Oracle Cloud", "Oracle Cloud Infrastructure": "Oracle Cloud", "openrouter": "OpenRouter", "together_ai": "Together AI",
		"Acme GPU Co": "Acme GPU Co", "  Acme  ": "Acme", "": "",
	} {
		if got := CanonicalProvider(raw); got != want {
			t.Errorf("CanonicalProvider(%q) = %q, want %q", raw, got, want)
		}
	}
	if got := CanonicalService("AWS", "AmazonEC2"); got != "Amazon Elastic Compute Cloud" {
		t.Errorf("AWS AmazonEC2 = %q", got)
	}
	if got := CanonicalService("Google Cloud", "AmazonEC2"); got != "AmazonEC2" {
		t.Errorf("another provider's service changed: %q", got)
	}
}

// TestImportKeepsRawProvider: rows carry the canonical name and keep the
// file's spelling beside it when it differs.
func TestImportKeepsRawProvider(t *testing.T) {
	t.Parallel()
	b := setupImport(t)
	file := "date,team_id,api_key,model,custom_llm_provider,prompt_tokens,completion_tokens,spend,api_requests\n" +
		"2025-10-27,team_1,hash_1,gpt-4o,openai,100,50,0.5,2\n" +
		"2025-10-27,team_1,hash_1,claude-sonnet-4-5-20250929,anthropic,100,50,0.5,2\n" +
		"2025-10-27,team_1,hash_1,gpt-4o,OpenAI,100,50,0.5,2\n"
	if _, err := b.importFile(t, "daily.csv", []byte(file)); err != nil {
		t.Fatal(err)
	}
	rows, err := b.st.Pool().Query(context.Background(),
		`SELECT provider_name, x_provider_raw FROM charges WHERE org_id = $1 ORDER BY line`, b.org.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var name, raw string
		if err := rows.Scan(&name, &raw); err != nil {
			t.Fatal(err)
		}
		got = append(got, name+"/"+raw)
	}
	if strings.Join(got, " ") != "OpenAI/openai Anthropic/anthropic OpenAI/" {
		t.Fatalf("provider/raw = %v", got)
	}
}

// azureFile is an Azure EA cost details export of November 2025 for one
// billing account, with the given rows (ChargeType, PricingModel, cost).
func azureFile(rows ...[3]string) []byte {
	var b strings.Builder
	b.WriteString("\ufeffBillingAccountId,BillingPeriodStartDate,SubscriptionId,Date,MeterCategory,MeterName,ChargeType,PricingModel,Quantity,UnitOfMeasure,CostInBillingCurrency,BillingCurrencyCode\n")
	for i, r := range rows {
		day := 1 + i%28
		b.WriteString("8611537," + "11/01/2025,sub-1," + time.Date(2025, 11, day, 0, 0, 0, 0, time.UTC).Format("01/02/2006") +
			",Virtual Machines,NC24ads A100 v4," + r[0] + "," + r[1] + ",24,1 Hour," + r[2] + ",USD\n")
	}
	return []byte(b.String())
}

func spendTotal(t *testing.T, st *store.Store, orgID int64, basis store.CostBasis) decimal.Decimal {
	t.Helper()
	f := store.SpendFilter{From: time.Date(2025, 11, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2025, 11, 30, 0, 0, 0, 0, time.UTC), Cost: basis}
	tot, err := st.SpendTotals(context.Background(), orgID, f)
	if err != nil {
		t.Fatal(err)
	}
	return tot["USD"]
}

// TestImportAzureActualAndAmortized: the actual-cost and the amortized
// export of one month are two views of one bill. Both are kept; the billed
// view is the actual file, the amortized view the amortized file, neither
// adds the two; each file restates only its own view.
func TestImportAzureActualAndAmortized(t *testing.T) {
	t.Parallel()
	b := setupImport(t)
	actual := azureFile(
		[3]string{"Usage", "OnDemand", "10.00"},
		[3]string{"Usage", "Reservation", "0"}, // covered by the reservation: nothing this month
		[3]string{"Purchase", "Reservation", "300.00"},
	)
	amortized := azureFile(
		[3]string{"Usage", "OnDemand", "10.00"},
		[3]string{"Usage", "Reservation", "8.00"}, // the purchase spread over the usage
		[3]string{"UnusedReservation", "Reservation", "2.00"},
	)
	gpuRows := 2 // the actual file's usage rows
	check := func(when string, billed, amortized string) {
		t.Helper()
		// GPU-hours are the same usage in both files: counted once, from
		// the actual-cost rows (24 a usage row of an NC24ads A100 v4).
		var hours, rollHours decimal.Decimal
		if err := b.st.Pool().QueryRow(context.Background(), `
			SELECT (SELECT coalesce(sum(x_gpu_hours), 0) FROM charges WHERE org_id = $1),
				(SELECT coalesce(sum(gpu_hours), 0) FROM daily_spend WHERE org_id = $1)`, b.org.ID).Scan(&hours, &rollHours); err != nil {
			t.Fatal(err)
		}
		if wantHours := decimal.NewFromInt(24 * int64(gpuRows)); !hours.Equal(wantHours) || !rollHours.Equal(wantHours) {
			t.Errorf("%s: GPU-hours %s (rollup %s), want %s", when, hours, rollHours, wantHours)
		}
		if got := spendTotal(t, b.st, b.org.ID, store.CostBilled); !got.Equal(decimal.RequireFromString(billed)) {
			t.Errorf("%s: billed view %s, want %s", when, got, billed)
		}
		if got := spendTotal(t, b.st, b.org.ID, store.CostAmortized); !got.Equal(decimal.RequireFromString(amortized)) {
			t.Errorf("%s: amortized view %s, want %s", when, got, amortized)
		}
		// daily_spend agrees with charges in both views.
		s := storedSums(t, b.st, b.org.ID)
		if !s.billed.Equal(s.rollBilled) || !s.effective.Equal(s.rollEffective) {
			t.Errorf("%s: charges %s/%s, rollup %s/%s", when, s.billed, s.effective, s.rollBilled, s.rollEffective)
		}
	}

	res, err := b.importFile(t, "part_0_0001.csv", actual)
	if err != nil {
		t.Fatal(err)
	}
	if res.CostBasis != "billed" || res.Totals["USD"] != "310" {
		t.Fatalf("actual: basis %q, totals %v", res.CostBasis, res.Totals)
	}
	check("actual alone", "310", "310") // one view stands for both until the other comes

	res, err = b.importFile(t, "part_0_0002.csv", amortized)
	if err != nil {
		t.Fatal(err)
	}
	if res.CostBasis != "amortized" || res.ReplacedRows != 0 || res.Rows != 3 || res.Totals["USD"] != "20" {
		t.Fatalf("amortized: basis %q, rows %d, replaced %d, totals %v; want amortized, 3, 0, 20", res.CostBasis, res.Rows, res.ReplacedRows, res.Totals)
	}
	check("actual then amortized", "310", "20")
	imp, err := b.st.Import(context.Background(), b.org.ID, res.ID)
	if err != nil || imp.CostBasis != store.CostAmortized || !imp.Totals["USD"].Equal(decimal.NewFromInt(20)) {
		t.Fatalf("history: %+v, %v", imp, err)
	}

	// The amortized export restated (a day later, one more row) replaces
	// the amortized rows only.
	restated := azureFile(
		[3]string{"Usage", "OnDemand", "10.00"},
		[3]string{"Usage", "Reservation", "8.00"},
		[3]string{"UnusedReservation", "Reservation", "2.00"},
		[3]string{"Usage", "OnDemand", "1.50"},
	)
	res, err = b.importFile(t, "part_0_0003.csv", restated)
	if err != nil {
		t.Fatal(err)
	}
	if res.ReplacedRows != 3 || res.Rows != 4 {
		t.Fatalf("restated amortized: rows %d, replaced %d; want 4, 3", res.Rows, res.ReplacedRows)
	}
	check("amortized restated", "310", "21.5")

	// And the actual export restated replaces the actual rows only.
	res, err = b.importFile(t, "part_0_0004.csv", azureFile(
		[3]string{"Usage", "OnDemand", "10.00"},
		[3]string{"Usage", "Reservation", "0"},
		[3]string{"Purchase", "Reservation", "300.00"},
		[3]string{"Usage", "OnDemand", "1.50"},
	))
	if err != nil {
		t.Fatal(err)
	}
	if res.CostBasis != "billed" || res.ReplacedRows != 3 {
		t.Fatalf("restated actual: basis %q, replaced %d; want billed, 3", res.CostBasis, res.ReplacedRows)
	}
	gpuRows = 3
	check("actual restated", "311.5", "21.5")
}

// TestAzureCostBasisByName: without commitments the two exports have the
// same rows, and the file's name tells them apart.
func TestAzureCostBasisByName(t *testing.T) {
	t.Parallel()
	b := setupImport(t)
	file := azureFile([3]string{"Usage", "OnDemand", "10.00"})
	res, err := b.importFile(t, "AmortizedCost_2025-11.csv", file)
	if err != nil || res.CostBasis != "amortized" {
		t.Fatalf("amortized by name: %+v, %v", res, err)
	}
	res, err = b.importFile(t, "ActualCost_2025-11.csv", append(file, "\n"...))
	if err != nil || res.CostBasis != "billed" || res.ReplacedRows != 0 {
		t.Fatalf("actual by name: %+v, %v", res, err)
	}
	if got := spendTotal(t, b.st, b.org.ID, store.CostBilled); !got.Equal(decimal.NewFromInt(10)) {
		t.Fatalf("billed view %s, want 10", got)
	}
	if got := spendTotal(t, b.st, b.org.ID, store.CostAmortized); !got.Equal(decimal.NewFromInt(10)) {
		t.Fatalf("amortized view %s, want 10", got)
	}
}
