package store_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/migrations"
	"github.com/burnrate/burnrate/store/storetest"
)

// TestMigrationCanonicalProviderNames writes rows the way imports did before
// 000012 ("openai" beside "OpenAI", "Microsoft", an AWS product code), with
// their rollups and a budget on "openai", then migrates: one provider per
// name in charges and daily_spend (rollup rows merged, sums intact), the raw
// spelling kept, and the budget's scope renamed so it keeps matching.
func TestMigrationCanonicalProviderNames(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.URL(t)
	// Back to 000011, before the names were made canonical: every migration
	// after it is undone (later ones included), then all are applied again.
	ups, err := fs.Glob(migrations.FS, "*.up.sql")
	if err != nil {
		t.Fatal(err)
	}
	after := 0
	for _, name := range ups {
		if name > "000011" && !strings.HasPrefix(name, "000011") {
			after++
		}
	}
	if err := migrations.Down(url, after); err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := pool.Exec(ctx, q, args...); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
	}
	var orgID int64
	if err := pool.QueryRow(ctx, `INSERT INTO orgs (slug, name) VALUES ('old', 'Old') RETURNING id`).Scan(&orgID); err != nil {
		t.Fatal(err)
	}
	exec(`INSERT INTO imports (org_id, file_name, sha256, size_bytes, source, status) VALUES ($1, 'f.csv', '\x01', 1, 'litellm-daily', 'succeeded')`, orgID)
	type old struct {
		line                       int
		source, provider, service  string
		cost                       string
		input                      int64
		wantProvider, wantService  string
		wantRawProvider, wantRawSv string
	}
	rows := []old{
		{2, "openai-usage", "OpenAI", "OpenAI API", "1.5", 100, "OpenAI", "OpenAI API", "", ""},
		{3, "openai-usage", "openai", "OpenAI API", "2.25", 200, "OpenAI", "OpenAI API", "openai", ""},
		{4, "litellm-daily", "vertex_ai", "LiteLLM proxy", "1", 0, "Google Cloud", "LiteLLM proxy", "vertex_ai", ""},
		{5, "focus", "Microsoft", "Virtual Machines", "7", 0, "Microsoft Azure", "Virtual Machines", "Microsoft", ""},
		{6, "aws-cur", "AWS", "AmazonEC2", "3", 0, "AWS", "Amazon Elastic Compute Cloud", "", "AmazonEC2"},
		{7, "aws-cur", "AWS", "Amazon Elastic Compute Cloud", "4", 0, "AWS", "Amazon Elastic Compute Cloud", "", ""},
		{8, "generic", "Acme GPUs", "Rental", "5", 0, "Acme GPUs", "Rental", "", ""},
	}
	for _, r := range rows {
		exec(`
			INSERT INTO charges (org_id, import_id, line, source, provider_name, service_name, service_category, sku,
				resource_id, region_id, sub_account_id, charge_category, charge_period_start, charge_period_end,
				billed_cost, effective_cost, list_cost, billing_currency, consumed_quantity, consumed_unit, team,
				x_instance_type, x_gpu_type, x_gpu_count, x_gpu_hours, x_model, x_input_tokens, x_output_tokens,
				x_cached_tokens, x_requests, x_priced_by_us, billing_account_id, dedupe_key)
			VALUES ($1, 1, $2, $3, $4, $5, 'Other', '', '', '', '', 'Usage', '2026-11-02', '2026-11-03',
				$6, $6, $6, 'USD', 0, '', '', '', '', 0, 0, '', $7, 0, 0, 0, false, '', '')`,
			orgID, r.line, r.source, r.provider, r.service, r.cost, r.input)
	}
	// The rollup as imports kept it.
	exec(`
		INSERT INTO daily_spend (org_id, day, source, provider, service, sub_account, team, model, charge_category,
			gpu_type, currency, billed, effective, gpu_hours, input_tokens, output_tokens, cached_tokens, requests, rows)
		SELECT org_id, charge_period_start::date, source, provider_name, service_name, sub_account_id, team, x_model,
			charge_category, x_gpu_type, billing_currency, sum(billed_cost), sum(effective_cost), sum(x_gpu_hours),
			sum(x_input_tokens), sum(x_output_tokens), sum(x_cached_tokens), sum(x_requests), count(*)
		FROM charges GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11`)
	exec(`INSERT INTO budgets (org_id, name, amount, currency, period, scope) VALUES
		($1, 'LLM', 100, 'USD', 'monthly', '{"provider": "openai"}'),
		($1, 'EC2', 100, 'USD', 'monthly', '{"provider": "AWS", "service": "AmazonEC2"}'),
		($1, 'Acme', 100, 'USD', 'monthly', '{"provider": "Acme GPUs"}')`, orgID)

	if err := migrations.Up(url); err != nil {
		t.Fatal(err)
	}

	for _, r := range rows {
		var provider, service, rawProvider, rawService string
		if err := pool.QueryRow(ctx, `SELECT provider_name, service_name, x_provider_raw, x_service_raw FROM charges WHERE org_id = $1 AND line = $2`,
			orgID, r.line).Scan(&provider, &service, &rawProvider, &rawService); err != nil {
			t.Fatal(err)
		}
		if provider != r.wantProvider || service != r.wantService || rawProvider != r.wantRawProvider || rawService != r.wantRawSv {
			t.Errorf("line %d: %q/%q (raw %q/%q), want %q/%q (raw %q/%q)", r.line, provider, service, rawProvider, rawService,
				r.wantProvider, r.wantService, r.wantRawProvider, r.wantRawSv)
		}
	}
	// daily_spend: one row per new key, sums intact, and equal to charges.
	var n int
	var billed decimal.Decimal
	var input, count int64
	if err := pool.QueryRow(ctx, `SELECT count(*), sum(billed), sum(input_tokens), sum(rows) FROM daily_spend WHERE org_id = $1 AND provider = 'OpenAI'`,
		orgID).Scan(&n, &billed, &input, &count); err != nil {
		t.Fatal(err)
	}
	if n != 1 || !billed.Equal(decimal.RequireFromString("3.75")) || input != 300 || count != 2 {
		t.Errorf("OpenAI rollup: %d rows, billed %s, input %d, charges %d; want 1, 3.75, 300, 2", n, billed, input, count)
	}
	var mismatches int
	if err := pool.QueryRow(ctx, `
		SELECT count(*) FROM (
			SELECT provider, service, sum(billed) AS b, sum(rows) AS r FROM daily_spend WHERE org_id = $1 GROUP BY 1, 2
		) d FULL JOIN (
			SELECT provider_name, service_name, sum(billed_cost) AS b, count(*) AS r FROM charges WHERE org_id = $1 GROUP BY 1, 2
		) c ON c.provider_name = d.provider AND c.service_name = d.service
		WHERE d.b IS DISTINCT FROM c.b OR d.r IS DISTINCT FROM c.r`, orgID).Scan(&mismatches); err != nil {
		t.Fatal(err)
	}
	if mismatches != 0 {
		t.Errorf("daily_spend and charges disagree on %d provider/service pairs", mismatches)
	}
	scopes := map[string]map[string]string{}
	rs, err := pool.Query(ctx, `SELECT name, scope FROM budgets WHERE org_id = $1`, orgID)
	if err != nil {
		t.Fatal(err)
	}
	for rs.Next() {
		var name string
		var raw []byte
		if err := rs.Scan(&name, &raw); err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		_ = json.Unmarshal(raw, &m)
		scopes[name] = m
	}
	if scopes["LLM"]["provider"] != "OpenAI" || scopes["EC2"]["service"] != "Amazon Elastic Compute Cloud" || scopes["Acme"]["provider"] != "Acme GPUs" {
		t.Errorf("budget scopes after migration: %v", scopes)
	}
}
