package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/burnrate/burnrate/advisor"
	"github.com/burnrate/burnrate/quantity"
)

// runBreakEven is 'burnrate breakeven': API vs self-hosted for a monthly
// volume, from flags that build the same request as POST /api/v1/breakeven
// (advisor.BreakEvenBody). It needs no database unless --org asks for the org's
// prices.
func runBreakEven(ctx context.Context, cfg Config, log *slog.Logger, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("breakeven", flag.ContinueOnError)
	fs.SetOutput(stdout)
	var b advisor.BreakEvenBody
	var input, output, cached, throughput, gpuPrice, overhead, openParams, utilization, peak, seqLen string
	fs.StringVar(&b.Model, "model", "", "API model(s) to compare, comma-separated; the first is primary (required)")
	fs.StringVar(&input, "input-tokens", "", "uncached input tokens per month (1e9, 1B, 300M …)")
	fs.StringVar(&output, "output-tokens", "", "output tokens per month")
	fs.StringVar(&cached, "cached-tokens", "", "cache-read input tokens per month")
	fs.StringVar(&b.OpenModel, "open-model", "", "self-hosted open model (default llama-3.1-8b)")
	fs.StringVar(&openParams, "open-params", "", "parameter count of a custom self-hosted model instead of --open-model")
	fs.StringVar(&b.Precision, "precision", "", "self-hosted weights: fp32, bf16 (default), fp16, fp8, int8, int4")
	fs.StringVar(&b.GPU, "gpu", "", "GPU type to self-host on (default: the advisor picks)")
	fs.StringVar(&gpuPrice, "gpu-price", "", "your USD per GPU-hour instead of the catalog's")
	fs.StringVar(&throughput, "throughput", "", "measured tokens/s per GPU instead of the modelled figure")
	fs.StringVar(&utilization, "utilization", "", "target GPU utilisation at the peak hour, 0–1 or a percentage (default 0.7)")
	fs.StringVar(&peak, "peak-factor", "", "peak-hour rate over the average (default 2)")
	fs.StringVar(&overhead, "overhead", "", "fixed monthly self-hosting overhead in USD (ops, storage, egress)")
	fs.BoolVar(&b.Spot, "spot", false, "price GPUs at spot rates")
	fs.StringVar(&b.Provider, "provider", "", "only these GPU providers, comma-separated")
	fs.StringVar(&seqLen, "seq-len", "", "context per sequence for the throughput model (default 4096)")
	org := fs.String("org", "", "use this org's prices (needs the database)")
	fs.StringVar(&b.PriceSource, "price-source", "", "with --org: catalog, overrides (default) or paid")
	asJSON := fs.Bool("json", false, "print the API's JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("breakeven: unexpected argument %q", fs.Arg(0))
	}
	var f flagNumbers
	b.InputTokens = f.float(quantity.Tokens, "input-tokens", input)
	b.OutputTokens = f.float(quantity.Tokens, "output-tokens", output)
	b.CachedTokens = f.float(quantity.Tokens, "cached-tokens", cached)
	b.Throughput = f.float(quantity.Rate, "throughput", throughput)
	b.OpenParams = f.float(quantity.Params, "open-params", openParams)
	b.Utilization = f.float(quantity.Fraction, "utilization", utilization)
	b.PeakFactor = f.float(quantity.Factor, "peak-factor", peak)
	b.SeqLen = f.int(quantity.Count, "seq-len", seqLen)
	b.GPUPrice = f.money("gpu-price", gpuPrice)
	b.OverheadMonthUSD = f.money("overhead", overhead)
	if f.err != nil {
		return fmt.Errorf("breakeven: %w", f.err)
	}

	st, orgID, done, err := orgStore(ctx, cfg, log, *org, &b.PriceSource)
	if err != nil {
		return fmt.Errorf("breakeven: %w", err)
	}
	defer done()
	res, _, err := advisor.BreakEven(ctx, st, orgID, b, time.Now())
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	fmt.Fprintln(stdout, res.Verdict)
	fmt.Fprintf(stdout, "\nAPI:         $%s/month\n", res.APICostMonthUSD.StringFixed(2))
	fmt.Fprintf(stdout, "self-hosted: $%s/month (%d× %s, %s, $%s/GPU-hour, %.0f tokens/s per GPU %s)\n",
		res.SelfHostCostMonthUSD.StringFixed(2), res.GPUsNeeded, res.SelfHost.GPU, res.SelfHost.Pricing,
		res.SelfHost.USDPerGPUHour.StringFixed(2), res.SelfHost.TokensPerSecPerGPU, res.SelfHost.ThroughputSource)
	if res.BreakEvenTokensPerMonth != nil {
		fmt.Fprintf(stdout, "break-even:  %d tokens/month at %.0f%% average GPU utilisation\n", *res.BreakEvenTokensPerMonth, *res.UtilizationAtBreakEven*100)
	} else {
		fmt.Fprintln(stdout, "break-even:  never")
	}
	for _, m := range res.Models[1:] {
		fmt.Fprintf(stdout, "  %s: %s\n", m.Model, m.Verdict)
	}
	return nil
}
