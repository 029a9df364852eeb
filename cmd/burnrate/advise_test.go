package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

func TestAdviseJSON(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	// No DATABASE_URL and no --org: the shipped catalog, no database.
	err := run(context.Background(), []string{"advise", "--job", "lora", "--model", "llama-3.1-8b", "--tokens", "1B",
		"--provider", "aws", "--spot", "--mfu", "0.35", "--json"}, env(nil), &out, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Options []struct {
			Provider     string          `json:"provider"`
			InstanceType string          `json:"instance_type"`
			Pricing      string          `json:"pricing"`
			CostUSD      decimal.Decimal `json:"cost_usd"`
			Reason       string          `json:"reason"`
		} `json:"options"`
		Excluded    []map[string]string `json:"excluded"`
		Assumptions struct {
			MFU float64 `json:"mfu"`
		} `json:"assumptions"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %.500s", err, out.String())
	}
	if len(got.Options) < 2 || len(got.Excluded) == 0 || got.Assumptions.MFU != 0.35 {
		t.Fatalf("advise --json = %.1000s", out.String())
	}
	for i, o := range got.Options {
		if o.Provider != "aws" {
			t.Fatalf("option %d from %s", i, o.Provider)
		}
		if i > 0 && o.CostUSD.LessThan(got.Options[i-1].CostUSD) {
			t.Fatalf("option %d ($%s) cheaper than option %d ($%s): not cheapest first", i, o.CostUSD, i-1, got.Options[i-1].CostUSD)
		}
	}

	// The same request as the API's: plain output states the winner.
	out.Reset()
	if err := run(context.Background(), []string{"advise", "--job", "qlora", "--params", "65B", "--tokens", "100M", "--gpu", "RTXA6000"},
		env(nil), &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "is cheapest at ") || !strings.Contains(out.String(), "RTXA6000") {
		t.Fatalf("advise printed:\n%s", out.String())
	}

	for name, args := range map[string][]string{
		"UnknownJob":  {"advise", "--job", "juggling", "--model", "llama-3.1-8b", "--tokens", "1B"},
		"NoModel":     {"advise", "--job", "lora", "--tokens", "1B"},
		"BadCount":    {"advise", "--job", "lora", "--model", "llama-3.1-8b", "--tokens", "lots"},
		"SourceNoOrg": {"advise", "--job", "lora", "--model", "llama-3.1-8b", "--tokens", "1B", "--price-source", "paid"},
	} {
		if err := run(context.Background(), args, env(nil), &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// Without tokens a training job gets the configurations that hold it, as on the page and in
	// the API: `burnrate advise --job qlora --params 65B` lists a single 48 GB GPU.
	out.Reset()
	if err := run(context.Background(), []string{"advise", "--job", "qlora", "--params", "65B"}, env(nil), &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "No tokens given") || !strings.Contains(out.String(), "1× L40S") {
		t.Errorf("qlora 65B without tokens printed:\n%s", out.String())
	}
}

func TestBreakEvenJSON(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	// The worked case: one H100 at 2.99 USD/h (~$2,183/month) against
	// gpt-4.1-mini at 3:1 input:output breaks even near 3.1B tokens/month.
	err := run(context.Background(), []string{"breakeven", "--model", "gpt-4.1-mini", "--open-model", "llama-3.1-8b", "--input-tokens", "300M", "--output-tokens", "100M",
		"--gpu", "H100", "--gpu-price", "2.99", "--throughput", "5000", "--utilization", "1", "--peak-factor", "1", "--json"},
		env(nil), &out, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		API       decimal.Decimal `json:"api_cost_month_usd"`
		SelfHost  decimal.Decimal `json:"self_host_cost_month_usd"`
		GPUs      int             `json:"gpus_needed"`
		BreakEven *int64          `json:"break_even_tokens_per_month"`
		Util      *float64        `json:"utilization_at_break_even"`
		Verdict   string          `json:"verdict"`
		Curve     []struct {
			Tokens   int64           `json:"tokens_per_month"`
			API      decimal.Decimal `json:"api_usd"`
			SelfHost decimal.Decimal `json:"self_host_usd"`
		} `json:"curve"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %.500s", err, out.String())
	}
	if got.API.String() != "280" || got.SelfHost.String() != "2182.7" || got.GPUs != 1 || len(got.Curve) == 0 || got.Verdict == "" {
		t.Fatalf("breakeven --json = %.800s", out.String())
	}
	// 2,182.70 USD / 0.70 USD per 1M blended = 3.118B tokens.
	if got.BreakEven == nil || *got.BreakEven < 3.1e9 || *got.BreakEven > 3.13e9 {
		t.Fatalf("break-even = %v", got.BreakEven)
	}

	for name, args := range map[string][]string{
		"NoModel":      {"breakeven", "--input-tokens", "1M", "--output-tokens", "1M"},
		"UnknownModel": {"breakeven", "--model", "gpt-17", "--input-tokens", "1M", "--output-tokens", "1M"},
		"BadPrice":     {"breakeven", "--model", "gpt-4.1-mini", "--input-tokens", "1M", "--gpu", "H100", "--gpu-price", "cheap"},
	} {
		if err := run(context.Background(), args, env(nil), &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestAdviseWithOrgPrices(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t)
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	org, owner := storetest.Org(t, st, storetest.OrgOpts{Name: "Priced"})
	price := decimal.RequireFromString("8")
	if _, err := st.UpsertGPUPriceOverrides(context.Background(), org.ID, owner.ID, []store.GPUPriceOverrideInput{
		{Provider: "aws", InstanceType: "p5.48xlarge", OnDemand: &price},
	}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = run(context.Background(), []string{"advise", "--job", "full-finetune", "--model", "llama-3.1-8b", "--tokens", "1B",
		"--gpu", "H100", "--provider", "aws", "--org", org.Slug, "--json"},
		env(map[string]string{"DATABASE_URL": url, "LOG_LEVEL": "error"}), &out, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	// 6.2769 h on one p5.48xlarge at the org's 8.00 USD/h (see the web test).
	if !strings.Contains(out.String(), `"cost_usd": "50.21"`) {
		t.Fatalf("advise --org printed %.1500s", out.String())
	}
}

// TestAdviseRefusesHugeNumbers: numbers out of range are clear errors naming
// the flag and the bound, not an infinity that panics deep in the model.
func TestAdviseRefusesHugeNumbers(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"advise", "--job", "full-finetune", "--model", "llama-3.1-8b", "--tokens", "1e308"},
		{"breakeven", "--model", "gpt-4.1-mini", "--input-tokens", "1e6", "--overhead", "1e10000000"},
	} {
		done := make(chan error, 1)
		go func() { done <- run(context.Background(), args, env(nil), &bytes.Buffer{}, &bytes.Buffer{}) }()
		var err error
		select {
		case err = <-done:
		case <-time.After(5 * time.Second):
			// A stuck computation cannot be stopped: end the test binary
			// rather than let CI wait minutes for it.
			fmt.Fprintf(os.Stderr, "--- FAIL: %s: %v took more than 5s\n", t.Name(), args)
			os.Exit(1)
		}
		want := `--tokens: "1e308" is out of range: token counts must be at most 1,000,000,000,000,000,000`
		if args[0] == "breakeven" {
			want = `--overhead: "1e10000000" is out of range: money must be below 1,000,000,000,000,000`
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%v: err = %v, want it to contain %s", args, err, want)
		}
	}
}

// TestBreakEvenMixCLI: the fair break-even from the command line, the same
// figures as the API's (docs/advisor.md, "Fair break-even").
func TestBreakEvenMixCLI(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	err := run(context.Background(), []string{"breakeven", "--usage", "gpt-4o-mini=2B/500M,gpt-4o=1B/200M", "--json"}, env(nil), &out, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		API    decimal.Decimal `json:"api_cost_month_usd"`
		Source string          `json:"open_model_source"`
		Mix    struct {
			API    decimal.Decimal `json:"api_cost_month_usd"`
			Models []struct {
				Model     string          `json:"model"`
				OpenModel string          `json:"open_model"`
				API       decimal.Decimal `json:"api_cost_month_usd"`
			} `json:"models"`
		} `json:"mix"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %.500s", err, out.String())
	}
	// gpt-4o at its own 2.50 USD/$10: $4,500; gpt-4o-mini at 0.15 USD/0.60 USD: $600.
	m := got.Mix.Models
	if got.API.String() != "4500" || got.Mix.API.String() != "5100" || len(m) != 2 || m[0].Model != "gpt-4o" || m[0].OpenModel != "deepseek-v3" ||
		m[1].OpenModel != "qwen3-32b" || m[1].API.String() != "600" || got.Source != "tier table (frontier open)" {
		t.Fatalf("breakeven --usage --json = %.1500s", out.String())
	}
	out.Reset()
	err = run(context.Background(), []string{"breakeven", "--usage", "gpt-4o=1B/200M", "--substitute", "gpt-4o=none", "--model", "gpt-4o"}, env(nil), &out, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "gpt-4o has no credible open substitute") || !strings.Contains(out.String(), "The whole usage, model by model") {
		t.Fatalf("breakeven text = %s", out.String())
	}
	for name, args := range map[string][]string{
		"BadUsage":      {"breakeven", "--usage", "gpt-4o=1B"},
		"BadSubstitute": {"breakeven", "--usage", "gpt-4o=1B/1M", "--substitute", "gpt-4o"},
		"OrgUsageNoOrg": {"breakeven", "--org-usage"},
	} {
		if err := run(context.Background(), args, env(nil), &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestAdviseCLIShowsInstancesAndBadges: several machines read as
// instances × GPUs, and consumer cards carry their caveat.
func TestAdviseCLIShowsInstancesAndBadges(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	err := run(context.Background(), []string{"advise", "--job", "serving", "--model", "llama-3.1-8b", "--concurrency", "600", "--tpot-ms", "200",
		"--gpu", "RTX3090", "--datacenter-only", "false"}, env(nil), &out, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "instances × 4 RTX3090") || !strings.Contains(out.String(), "no ECC") {
		t.Fatalf("advise printed %s", out.String())
	}
	out.Reset()
	err = run(context.Background(), []string{"advise", "--job", "serving", "--model", "llama-3.1-8b", "--concurrency", "1", "--gpu", "H100",
		"--provider", "aws", "--memory-fraction", "0.95", "--json"}, env(nil), &out, &bytes.Buffer{})
	if err != nil || !strings.Contains(out.String(), `"memory_available_gb": 75,`) {
		t.Fatalf("--memory-fraction 0.95 (75 GB usable of 80): %v %.800s", err, out.String())
	}
	if err := run(context.Background(), []string{"advise", "--job", "serving", "--model", "llama-3.1-8b", "--concurrency", "4", "--datacenter-only", "maybe"},
		env(nil), &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
		t.Error("--datacenter-only maybe accepted")
	}
}

// TestBreakEvenUsesOrgTierTable: with --org, the break-even compares each
// model with the open model the org's saved tier table names.
func TestBreakEvenUsesOrgTierTable(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t)
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	org, owner := storetest.Org(t, st, storetest.OrgOpts{Name: "Tiered"})
	if err := st.SetModelSubstitutes(context.Background(), org.ID, owner.ID, map[string]string{"gpt-4o": "llama-3.3-70b"}); err != nil {
		t.Fatal(err)
	}
	for slug, want := range map[string]string{org.Slug: "open model from yours", "": "deepseek-v3 (frontier open, tier table)"} {
		args := []string{"breakeven", "--usage", "gpt-4o=1B/200M", "--model", "gpt-4o"}
		if slug != "" {
			args = append(args, "--org", slug)
		}
		var out bytes.Buffer
		if err := run(context.Background(), args, env(map[string]string{"DATABASE_URL": url, "LOG_LEVEL": "error"}), &out, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), want) {
			t.Errorf("--org %q: output lacks %q:\n%s", slug, want, out.String())
		}
	}
}
