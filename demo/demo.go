// Package demo fills an org with about 90 days of realistic, generated
// spend for a first look: cloud GPU bills as a FOCUS export, LLM usage as a
// LiteLLM daily team spend export and an OpenAI usage export (priced by
// Burnrate from token counts), all imported through the real import path,
// plus budgets. The data has a visible overspend (a support bot whose LLM
// spend keeps growing) and an anomaly (a one-day burst of H100 training).
package demo

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/budget"
	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/spend"
	"github.com/burnrate/burnrate/store"
)

// Days is how many days of history the demo generates, today included.
const Days = 90

// AnomalyDaysAgo is how many days before today the burst happens.
const AnomalyDaysAgo = 12

// File is a generated export.
type File struct {
	Name string
	Data []byte
}

// Result is what Seed did.
type Result struct {
	Files   []ingest.ImportResult
	Budgets []store.Budget
	Anomaly time.Time // the day of the burst
}

// Seed generates the demo files for the Days days up to now (in the org's
// time zone), imports them into org with im, and creates the budgets.
func Seed(ctx context.Context, st *store.Store, im *ingest.Importer, org store.Org, now time.Time) (Result, error) {
	var res Result
	loc := org.Location()
	t := now.In(loc)
	today := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	res.Anomaly = today.AddDate(0, 0, -AnomalyDaysAgo)
	for _, f := range Files(today, uint64(today.Unix())) {
		r, err := im.Import(ctx, ingest.ImportRequest{Org: org, FileName: f.Name, Via: "cli"}, bytes.NewReader(f.Data))
		if err != nil {
			return res, fmt.Errorf("demo: import %s: %w", f.Name, err)
		}
		res.Files = append(res.Files, r)
	}
	// The budgets tell the demo's story on any day of the month: the
	// support bot's daily budget is over, its monthly one runs out before
	// the month ends, and the rest are on track. The support bot's two are
	// sized from what was just imported, through the budgets' own status
	// (its spend and forecast), so that the story does not depend on how
	// far into the month today is.
	for _, in := range budgets(org.Currency) {
		if size := sizes[in.Name]; size != nil {
			amount, err := size(ctx, st, org, in, today)
			if err != nil {
				return res, fmt.Errorf("demo: budget %s: %w", in.Name, err)
			}
			in.Amount = amount
		}
		b, err := st.CreateBudget(ctx, org.ID, 0, in)
		if err != nil {
			return res, fmt.Errorf("demo: budget %s: %w", in.Name, err)
		}
		res.Budgets = append(res.Budgets, b)
	}
	return res, nil
}

// The budgets whose amounts come from the data (sizes), by name.
const (
	supportBotDaily   = "Support bot"
	supportBotMonthly = "Support bot LLM"
)

func budgets(currency string) []store.BudgetInput {
	amount := decimal.RequireFromString
	return []store.BudgetInput{
		{Name: "All cloud and LLM spend", Amount: amount("95000"), Currency: currency, Period: "monthly",
			Thresholds: []int{50, 80, 100}, Recipients: []string{"lead@demo.example"}},
		{Name: "GPU training (ml-research)", Amount: amount("75000"), Currency: currency, Period: "monthly",
			Scope: store.BudgetScope{Team: "ml-research"}, Thresholds: []int{50, 80, 100}},
		{Name: supportBotMonthly, Currency: currency, Period: "monthly",
			Scope: store.BudgetScope{Team: "support-bot"}, Thresholds: []int{50, 80, 100}, Recipients: []string{"support-lead@demo.example"}},
		{Name: supportBotDaily, Currency: currency, Period: "daily",
			Scope: store.BudgetScope{Team: "support-bot"}},
		{Name: "Inference", Amount: amount("900"), Currency: currency, Period: "daily",
			Scope: store.BudgetScope{Team: "inference"}, Thresholds: []int{80, 100}},
		{Name: "Production (tag env=prod)", Amount: amount("60000"), Currency: currency, Period: "monthly",
			Scope: store.BudgetScope{Tags: map[string]string{"env": "prod"}}, Thresholds: []int{50, 80, 100}},
	}
}

// sizes are the amounts of the budgets sized from the data, by name.
var sizes = map[string]func(ctx context.Context, st *store.Store, org store.Org, in store.BudgetInput, today time.Time) (decimal.Decimal, error){
	// Over on any day: below what the support bot spent yesterday (the
	// digest's day) and today (the dashboard's).
	supportBotDaily: func(ctx context.Context, st *store.Store, org store.Org, in store.BudgetInput, today time.Time) (decimal.Decimal, error) {
		low := decimal.Zero
		for i, day := range []time.Time{today, budget.AddDays(today, -1)} {
			s, err := spend.BudgetStatus(ctx, st, org, draft(in), budget.Today(day), 0)
			if err != nil {
				return decimal.Zero, err
			}
			if i == 0 || s.Spent.LessThan(low) {
				low = s.Spent
			}
		}
		return roundDown(low.Mul(decimal.RequireFromString("0.8")), 2), nil
	},
	// Runs out before the month ends: halfway between what is spent so far
	// and the month's forecast (over on the month's last day, when the two
	// meet).
	supportBotMonthly: func(ctx context.Context, st *store.Store, org store.Org, in store.BudgetInput, today time.Time) (decimal.Decimal, error) {
		s, err := spend.BudgetStatus(ctx, st, org, draft(in), budget.Today(today), 0)
		if err != nil {
			return decimal.Zero, err
		}
		return roundDown(s.Spent.Add(s.Forecast).Div(decimal.NewFromInt(2)), 3), nil
	},
}

// draft is the budget in would create, for reading its status before it
// exists.
func draft(in store.BudgetInput) store.Budget {
	return store.Budget{Amount: decimal.NewFromInt(1), Currency: in.Currency, Period: in.Period, Scope: in.Scope}
}

// roundDown is x rounded down to digits significant digits (1,234.5 to 2:
// 1,200), so that a budget sized from the data reads like one a person set.
func roundDown(x decimal.Decimal, digits int) decimal.Decimal {
	if !x.IsPositive() {
		return decimal.NewFromInt(1)
	}
	exp := int32(len(x.Truncate(0).String())) - int32(digits)
	if exp < 0 {
		return x.Truncate(-exp)
	}
	unit := decimal.New(1, exp)
	return x.Div(unit).Floor().Mul(unit)
}

// Files generates the demo exports for the Days days ending today (a
// date, midnight UTC), deterministically for a seed.
func Files(today time.Time, seed uint64) []File {
	r := rand.New(rand.NewPCG(seed, 0xb0b))
	first := today.AddDate(0, 0, 1-Days)
	return []File{
		{Name: "demo-focus-cloud.csv", Data: focusFile(r, first, today)},
		{Name: "demo-litellm-daily-team-spend.csv", Data: litellmFile(r, first, today)},
		{Name: "demo-openai-completions-usage.csv", Data: openaiFile(r, first, today)},
	}
}

func writeCSV(rows [][]string) []byte {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.WriteAll(rows) // a bytes.Buffer does not fail
	return buf.Bytes()
}

// jitter is x scaled by a random factor in [1-f, 1+f].
func jitter(r *rand.Rand, x, f float64) float64 { return x * (1 - f + 2*f*r.Float64()) }

func money(x float64) string { return strconv.FormatFloat(x, 'f', 4, 64) }

func isWeekend(d time.Time) bool { return d.Weekday() == time.Saturday || d.Weekday() == time.Sunday }

// focusFile is the cloud bill: GPU instances on AWS (by usage type) and
// GCP (by accelerator SKU), storage, a credit, and a small bill in EUR.
func focusFile(r *rand.Rand, first, today time.Time) []byte {
	rows := [][]string{{"BilledCost", "EffectiveCost", "ListCost", "BillingCurrency", "ChargePeriodStart", "ChargePeriodEnd",
		"BillingPeriodStart", "BillingAccountId", "ChargeCategory", "ProviderName", "ServiceName", "ServiceCategory",
		"SkuMeter", "ChargeDescription", "ResourceId", "RegionId", "SubAccountId", "ConsumedQuantity", "ConsumedUnit", "Tags"}}
	add := func(day time.Time, cur string, billed, effective float64, category, provider, service, svcCat, sku, desc, resource,
		region, account string, qty float64, unit, tags string) {
		end := day.AddDate(0, 0, 1)
		period := time.Date(day.Year(), day.Month(), 1, 0, 0, 0, 0, time.UTC)
		rows = append(rows, []string{money(billed), money(effective), money(billed), cur, day.Format("2006-01-02 15:04:05"),
			end.Format("2006-01-02 15:04:05"), period.Format("2006-01-02 15:04:05"), "demo-payer-1", category, provider, service, svcCat,
			sku, desc, resource, region, account, strconv.FormatFloat(qty, 'f', 2, 64), unit, tags})
	}
	const (
		p4dRate = 32.7726
		p5Rate  = 98.32
		g5Rate  = 5.672
		a100GCP = 2.934
	)
	for d := first; !d.After(today); d = d.AddDate(0, 0, 1) {
		progress := float64(d.Sub(first).Hours()/24) / Days
		// Training: two p4d.24xlarge most days, fewer at weekends; a
		// Savings Plan makes effective cost 28% lower.
		hours := jitter(r, 40, 0.15)
		if isWeekend(d) {
			hours = jitter(r, 20, 0.2)
		}
		add(d, "USD", hours*p4dRate, hours*p4dRate*0.72, "Usage", "AWS", "Amazon Elastic Compute Cloud", "Compute",
			"USE1-BoxUsage:p4d.24xlarge", "$32.77 per On Demand Linux p4d.24xlarge Instance Hour", "i-0train01", "us-east-1",
			"ml-research-prod", hours, "Hours", `{"team": "ml-research", "project": "llm-pretrain", "env": "prod"}`)
		// Inference: g5.12xlarge around the clock, growing with traffic.
		ih := jitter(r, 72+48*progress, 0.08)
		add(d, "USD", ih*g5Rate, ih*g5Rate, "Usage", "AWS", "Amazon Elastic Compute Cloud", "Compute",
			"USE1-BoxUsage:g5.12xlarge", "$5.672 per On Demand Linux g5.12xlarge Instance Hour", "i-0serve01", "us-east-1",
			"inference-prod", ih, "Hours", `{"team": "inference", "project": "ranker", "env": "prod"}`)
		// Storage for datasets and checkpoints.
		add(d, "USD", jitter(r, 38+20*progress, 0.03), 0, "Usage", "AWS", "Amazon Simple Storage Service", "Storage",
			"USE1-TimedStorage-ByteHrs", "$0.023 per GB-Month of storage", "s3-datasets", "us-east-1", "data-prod",
			jitter(r, 55000, 0.02), "GB-Hours", `{"team": "data", "env": "prod"}`)
		// Fine-tuning experiments on GCP A100s, weekdays only.
		if !isWeekend(d) {
			gh := jitter(r, 64, 0.3)
			add(d, "USD", gh*a100GCP, gh*a100GCP, "Usage", "Google Cloud", "Compute Engine", "Compute",
				"A100 GPU", "Nvidia Tesla A100 GPU running in Americas", "a2-highgpu-8g-ft", "us-central1",
				"ml-experiments", gh, "Hours", `{"team": "ml-research", "project": "finetune", "env": "dev"}`)
		}
		// A European storage bill, in euros: shown beside dollars, never added to them.
		add(d, "EUR", jitter(r, 14, 0.05), 0, "Usage", "Hetzner", "Storage Box", "Storage", "BX41", "Storage box BX41",
			"bx-eu-1", "fsn1", "eu-archive", 1, "Days", `{"team": "data", "env": "prod"}`)
		// A monthly support credit on the 1st.
		if d.Day() == 1 {
			add(d, "USD", -250, -250, "Credit", "AWS", "AWS Support (Business)", "Other", "", "Promotional credit", "",
				"", "ml-research-prod", 0, "", "")
		}
		// The anomaly: a one-day burst of eight p5.48xlarge (H100) for a
		// training run someone forgot to stop.
		if d.Equal(today.AddDate(0, 0, -AnomalyDaysAgo)) {
			bh := 8 * 11.0
			add(d, "USD", bh*p5Rate, bh*p5Rate, "Usage", "AWS", "Amazon Elastic Compute Cloud", "Compute",
				"USE1-BoxUsage:p5.48xlarge", "$98.32 per On Demand Linux p5.48xlarge Instance Hour", "i-0burst01", "us-east-1",
				"ml-research-prod", bh, "Hours", `{"team": "ml-research", "project": "llm-pretrain", "env": "prod"}`)
		}
	}
	return writeCSV(rows)
}

// litellmFile is a LiteLLM proxy's daily spend per team and model. The
// support bot's traffic grows steadily: it overspends its budget.
func litellmFile(r *rand.Rand, first, today time.Time) []byte {
	rows := [][]string{{"id", "date", "team_id", "api_key", "model", "model_group", "custom_llm_provider",
		"mcp_namespaced_tool_name", "endpoint", "prompt_tokens", "completion_tokens", "cache_read_input_tokens",
		"cache_creation_input_tokens", "spend", "api_requests", "successful_requests", "failed_requests", "created_at", "updated_at"}}
	type use struct {
		team, model, provider string
		in, out               float64 // $ per 1M tokens
		tokens                float64 // input tokens per day at the start
		growth                float64 // factor by the last day
	}
	uses := []use{
		{"support-bot", "gpt-4o", "openai", 2.5, 10, 28e6, 3.0},
		{"support-bot", "gpt-4o-mini", "openai", 0.15, 0.6, 60e6, 2.0},
		{"ml-research", "claude-sonnet-4-5", "anthropic", 3, 15, 9e6, 1.2},
		{"inference", "claude-haiku-4-5", "anthropic", 1, 5, 20e6, 1.5},
	}
	n := 0
	for d := first; !d.After(today); d = d.AddDate(0, 0, 1) {
		progress := float64(d.Sub(first).Hours()/24) / Days
		for _, u := range uses {
			in := jitter(r, u.tokens*(1+(u.growth-1)*progress), 0.1)
			if isWeekend(d) {
				in *= 0.6
			}
			out := in * 0.18
			cached := in * 0.25
			spend := (in-cached)*u.in/1e6 + cached*u.in/10/1e6 + out*u.out/1e6
			reqs := int64(in / 2500)
			n++
			stamp := d.AddDate(0, 0, 1).Format("2006-01-02") + " 00:05:00"
			rows = append(rows, []string{"demo-" + strconv.Itoa(n), d.Format(time.DateOnly), u.team, "sk-demo-" + u.team,
				u.model, u.model, u.provider, "", "/chat/completions", strconv.FormatInt(int64(in), 10),
				strconv.FormatInt(int64(out), 10), strconv.FormatInt(int64(cached), 10), "0", money(spend),
				strconv.FormatInt(reqs, 10), strconv.FormatInt(reqs, 10), "0", stamp, stamp})
		}
	}
	return writeCSV(rows)
}

// openaiFile is OpenAI's completions usage export: tokens only, priced by
// Burnrate's price table on import.
func openaiFile(r *rand.Rand, first, today time.Time) []byte {
	rows := [][]string{{"start_time", "end_time", "start_time_iso", "end_time_iso", "project_id", "num_model_requests",
		"user_id", "api_key_id", "model", "batch", "service_tier", "input_tokens", "output_tokens", "input_cached_tokens",
		"input_audio_tokens", "output_audio_tokens"}}
	for d := first; !d.After(today); d = d.AddDate(0, 0, 1) {
		for _, m := range []struct {
			model  string
			tokens float64
		}{{"gpt-4.1", 6e6}, {"gpt-4.1-mini", 40e6}} {
			in := jitter(r, m.tokens, 0.2)
			end := d.AddDate(0, 0, 1)
			rows = append(rows, []string{strconv.FormatInt(d.Unix(), 10), strconv.FormatInt(end.Unix(), 10),
				d.Format("2006-01-02T15:04:05+00:00"), end.Format("2006-01-02T15:04:05+00:00"), "proj_search",
				strconv.FormatFloat(float64(int64(in/3000)), 'f', 1, 64), "", "key_demo", m.model, "False", "default",
				strconv.FormatInt(int64(in), 10), strconv.FormatInt(int64(in*0.1), 10), strconv.FormatInt(int64(in*0.3), 10), "0", "0"})
		}
	}
	return writeCSV(rows)
}
