package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"text/tabwriter"
	"time"

	"github.com/burnrate/burnrate/advisor"
	"github.com/burnrate/burnrate/pricing"
	"github.com/burnrate/burnrate/quantity"
	"github.com/burnrate/burnrate/store"
)

// runBreakEven is 'burnrate breakeven': API vs self-hosted for a monthly
// volume, from flags that build the same request as POST /api/v1/breakeven
// (advisor.BreakEvenBody). It needs no database unless --org asks for the org's
// prices.
func runBreakEven(ctx context.Context, cfg Config, log *slog.Logger, args []string, stdout io.Writer) error {
	var b advisor.BreakEvenBody
	pc := newPricingCommand("breakeven", stdout, &b.PriceSource)
	fs := pc.fs
	var input, output, cached, throughput, gpuPrice, overhead, openParams, utilization, peak, seqLen, subs, usage string
	fs.StringVar(&b.Model, "model", "", "API model(s) to compare, comma-separated; the first is primary (default with a mix: its largest-spend model)")
	fs.StringVar(&input, "input-tokens", "", "uncached input tokens per month (1e9, 1B, 300M …)")
	fs.StringVar(&output, "output-tokens", "", "output tokens per month")
	fs.StringVar(&cached, "cached-tokens", "", "cache-read input tokens per month")
	fs.StringVar(&b.OpenModel, "open-model", "", "self-hosted open model (default: one of comparable quality, from the tier table)")
	fs.StringVar(&subs, "substitute", "", "override the tier table: api-model=open-model (or =none), comma-separated")
	fs.StringVar(&usage, "usage", "", "monthly tokens per API model for the mix: model=input/output[/cached], comma-separated (e.g. gpt-4o=1B/200M,gpt-4o-mini=2B/500M)")
	fs.BoolVar(&b.OrgUsage, "org-usage", false, "with --org: the mix from the org's last 30 days of LLM usage")
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
	if err := pc.parse(args); err != nil {
		return err
	}
	var f flagNumbers
	var err error
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
	if b.Usage, err = advisor.ParseUsage("--usage", usage); err != nil {
		return fmt.Errorf("breakeven: %w", err)
	}
	if f.err != nil {
		return fmt.Errorf("breakeven: %w", f.err)
	}
	if s, err := advisor.ParseSubstitutes(subs); err != nil {
		return fmt.Errorf("breakeven: --%w", err)
	} else if len(s) > 0 {
		b.Substitutes = s
	}

	return runPriced(ctx, cfg, log, pc, stdout, func(st *store.Store, orgID int64) (pricing.BreakEvenResult, error) {
		res, _, err := advisor.BreakEven(ctx, st, orgID, b, time.Now())
		return res, err
	}, printBreakEven)
}

// printBreakEven is breakeven's text output: the verdict, both monthly
// costs, the break-even volume, and with a usage mix its table.
func printBreakEven(stdout io.Writer, res pricing.BreakEvenResult) {
	fmt.Fprintln(stdout, res.Verdict)
	fmt.Fprintf(stdout, "\nAPI:         %s/month (%s at its own rates)\n", quantity.FormatMoney(res.APICostMonthUSD, "USD"), res.Models[0].Model)
	gpus := fmt.Sprintf("%d× %s", res.GPUsNeeded, res.SelfHost.GPU)
	if res.Replicas > 1 {
		gpus = fmt.Sprintf("%d replicas × %d = %d× %s", res.Replicas, res.SelfHost.GPUsPerReplica, res.GPUsNeeded, res.SelfHost.GPU)
	}
	fmt.Fprintf(stdout, "self-hosted: %s/month (%s on %s, %s, %s/GPU-hour, %.0f tokens/s per GPU %s; open model from %s)\n",
		quantity.FormatMoney(res.SelfHostCostMonthUSD, "USD"), res.SelfHost.OpenModel, gpus, res.SelfHost.Pricing,
		quantity.FormatMoney(res.SelfHost.USDPerGPUHour, "USD"), res.SelfHost.TokensPerSecPerGPU, res.SelfHost.ThroughputSource, res.OpenModelSource)
	if res.BreakEvenTokensPerMonth != nil {
		fmt.Fprintf(stdout, "break-even:  %s tokens/month at %.0f%% average GPU utilisation\n", quantity.FormatCount(*res.BreakEvenTokensPerMonth), *res.UtilizationAtBreakEven*100)
	} else {
		fmt.Fprintln(stdout, "break-even:  never")
	}
	for _, m := range res.Models[1:] {
		fmt.Fprintf(stdout, "  %s: %s\n", m.Model, m.Verdict)
	}
	if m := res.Mix; m != nil {
		fmt.Fprintf(stdout, "\nThe whole usage, model by model:\n%s\n\n", m.Verdict)
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "API model\tAPI USD/month\tUSD/1M\topen substitute\tself-hosted USD/month\tbreak-even tokens/month\t")
		for _, r := range m.Models {
			open, self, be := "none: "+r.NoSubstituteReason, "-", "-"
			if r.OpenModel != "" {
				open = fmt.Sprintf("%s (%s, %s)", r.OpenModel, r.Tier, r.SubstituteSource)
				be = "never"
			}
			if r.SelfHostCostMonthUSD != nil {
				self = quantity.FormatAmount(*r.SelfHostCostMonthUSD)
			}
			if r.BreakEvenTokensPerMonth != nil {
				be = quantity.FormatCount(*r.BreakEvenTokensPerMonth)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Model, quantity.FormatAmount(r.APICostMonthUSD), quantity.FormatAmount(r.APIUSDPerMTok), open, self, be)
		}
		fmt.Fprintf(tw, "all models\t%s\t\t\t%s\t\t\n", quantity.FormatAmount(m.APICostMonthUSD), quantity.FormatAmount(m.SelfHostCostMonthUSD))
		tw.Flush()
	}
}
