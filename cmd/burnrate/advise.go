package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/advisor"
	"github.com/burnrate/burnrate/pricing"
	"github.com/burnrate/burnrate/quantity"
	"github.com/burnrate/burnrate/store"
)

// runAdvise is 'burnrate advise': the GPU advisor for one job, from flags
// that build the same request as POST /api/v1/advise (advisor.AdviseBody). It
// needs no database unless --org asks for the org's prices.
func runAdvise(ctx context.Context, cfg Config, log *slog.Logger, args []string, stdout io.Writer) error {
	var b advisor.AdviseBody
	pc := newPricingCommand("advise", stdout, &b.PriceSource)
	fs := pc.fs
	var params, tokens, inputTokens, target, deadline, mfu, eta, seqLen, concurrency, maxGPUs, memFraction, datacenter string
	var rps, promptTokens, outputTokens, ttft, tpot, percentile string
	fs.StringVar(&b.Job, "job", "", "job type: "+jobList()+" (required)")
	fs.StringVar(&b.Model, "model", "", "a known open model: "+strings.Join(pricing.ModelNames(), ", "))
	fs.StringVar(&params, "params", "", "parameter count of a custom model instead of --model (e.g. 13e9 or 13B)")
	fs.StringVar(&b.Precision, "precision", "bf16", "weights: fp32, bf16, fp16, fp8, int8, int4")
	fs.StringVar(&tokens, "tokens", "", "training tokens, or tokens to generate (batch inference); 1e9, 1B, 500M …")
	fs.StringVar(&inputTokens, "input-tokens", "", "prompt tokens to read (batch inference)")
	fs.StringVar(&seqLen, "seq-len", "", "sequence length / context per sequence (default 4096)")
	fs.StringVar(&concurrency, "concurrency", "", "requests in flight (serving), or a batch cap (batch inference)")
	fs.StringVar(&target, "target-tokens-per-s", "", "generated tokens per second to sustain (serving)")
	fs.StringVar(&rps, "requests-per-s", "", "requests arriving per second (serving; instead of --concurrency)")
	fs.StringVar(&promptTokens, "prompt-tokens", "", "prompt tokens per request (serving, default 1024)")
	fs.StringVar(&outputTokens, "output-tokens", "", "generated tokens per request (serving, default 256)")
	fs.StringVar(&ttft, "ttft-ms", "", "time-to-first-token target in ms (serving, default 2000)")
	fs.StringVar(&tpot, "tpot-ms", "", "time-per-output-token target in ms (serving, default 50)")
	fs.StringVar(&percentile, "latency-percentile", "", "percentile the latency targets hold at (serving, default 90)")
	fs.StringVar(&deadline, "deadline-hours", "", "finish within this many hours (training default 1440, 60 days)")
	fs.BoolVar(&b.Spot, "spot", false, "allow spot/preemptible prices (with the interruption overhead)")
	fs.StringVar(&b.GPU, "gpu", "", "only this GPU type, e.g. H100, A100-80GB, L4")
	fs.StringVar(&b.Provider, "provider", "", "only these providers, comma-separated (aws, gcp, azure, lambda, runpod, …)")
	fs.StringVar(&maxGPUs, "max-gpus", "", "most GPUs in one configuration (default 64; training: derived from the job)")
	fs.StringVar(&memFraction, "memory-fraction", "", "share of each GPU's memory to plan on (default 0.9)")
	fs.StringVar(&datacenter, "datacenter-only", "", "true: leave out consumer GPUs and marketplace hosts; false: include them (default: true for serving, training, full-finetune)")
	fs.StringVar(&mfu, "mfu", "", "model-FLOPs utilisation (default 0.4)")
	fs.StringVar(&eta, "eta", "", "achievable fraction of memory bandwidth in decode (default 0.7)")
	fs.BoolVar(&b.IncludeSuspicious, "include-suspicious", false, "use prices flagged as suspicious (GCP a2/a3/a4)")
	fs.IntVar(&b.MaxOptions, "max-options", 0, "options to list (default 20; -1: all)")
	if err := pc.parse(args); err != nil {
		return err
	}
	var f flagNumbers
	b.Params = f.float(quantity.Params, "params", params)
	b.Tokens = f.float(quantity.Tokens, "tokens", tokens)
	b.InputTokens = f.float(quantity.Tokens, "input-tokens", inputTokens)
	b.TargetTokensPerSec = f.float(quantity.Rate, "target-tokens-per-s", target)
	b.DeadlineHours = f.float(quantity.Hours, "deadline-hours", deadline)
	b.RequestsPerSec = f.float(quantity.Rate, "requests-per-s", rps)
	b.PromptTokens = f.int(quantity.Count, "prompt-tokens", promptTokens)
	b.OutputTokens = f.int(quantity.Count, "output-tokens", outputTokens)
	b.TTFTMs = f.float(quantity.Factor, "ttft-ms", ttft)
	b.TPOTMs = f.float(quantity.Factor, "tpot-ms", tpot)
	b.LatencyPercentile = f.float(quantity.Factor, "latency-percentile", percentile)
	b.SeqLen = f.int(quantity.Count, "seq-len", seqLen)
	b.Concurrency = f.int(quantity.Count, "concurrency", concurrency)
	b.MaxGPUs = f.int(quantity.Count, "max-gpus", maxGPUs)
	b.MFU = f.optionalFloat(quantity.Fraction, "mfu", mfu)
	b.Eta = f.optionalFloat(quantity.Fraction, "eta", eta)
	b.MemoryFraction = f.optionalFloat(quantity.Fraction, "memory-fraction", memFraction)
	switch strings.ToLower(strings.TrimSpace(datacenter)) {
	case "":
	case "true", "on", "yes":
		on := true
		b.DatacenterOnly = &on
	case "false", "off", "no":
		off := false
		b.DatacenterOnly = &off
	default:
		return fmt.Errorf("advise: --datacenter-only must be true or false, got %q", datacenter)
	}
	if f.err != nil {
		return fmt.Errorf("advise: %w", f.err)
	}

	return runPriced(ctx, cfg, log, pc, stdout, func(st *store.Store, orgID int64) (pricing.Advice, error) {
		adv, _, err := advisor.Advise(ctx, st, orgID, b, time.Now())
		return adv, err
	}, printAdvice)
}

// printAdvice is advise's text output: the summary, the options as a
// table, their caveats and notes.
func printAdvice(stdout io.Writer, adv pricing.Advice) {
	fmt.Fprintln(stdout, adv.Summary)
	if len(adv.Options) > 0 {
		fmt.Fprintln(stdout)
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		serving := adv.Assumptions.Serving != nil
		if serving {
			fmt.Fprintln(tw, "provider\tinstance\tGPUs\tpricing\tTTFT ms\tTPOT ms\tout tok/s\tcost USD/month\tUSD/h\tUSD/1M out tok\tmem GB need/usable\tprecision\tbadge\t")
		} else {
			fmt.Fprintln(tw, "provider\tinstance\tGPUs\tpricing\thours\tGPU-hours\tcost USD\tUSD/h\tUSD/1M tok\tmem GB need/usable\tprecision\tbadge\t")
		}
		for _, o := range adv.Options {
			perM := "-"
			if o.USDPerMTok != nil {
				perM = quantity.FormatAmount(*o.USDPerMTok)
			}
			gpus := fmt.Sprintf("%d× %s", o.GPUs, o.GPU)
			if o.Instances > 1 {
				gpus = fmt.Sprintf("%d×%d=%d %s", o.Instances, o.GPUsPerInstance, o.GPUs, o.GPU)
			}
			badge := o.Badge
			if badge == "" {
				badge = "-"
			}
			hours, gpuHours, cost := fmt.Sprintf("%.2f", o.Hours), fmt.Sprintf("%.1f", o.GPUHours), quantity.FormatAmount(o.CostUSD)
			if serving {
				hours, gpuHours = fmt.Sprintf("%.0f\t%.1f", o.TTFTMs, o.TPOTMs), fmt.Sprintf("%.0f", o.OutputTokensPerSec)
			}
			if adv.Assumptions.FitOnly {
				hours, gpuHours, cost = "-", "-", "-"
			}
			mem := fmt.Sprintf("%.1f/%.1f", o.MemoryNeededGB, o.MemoryAvailableGB)
			if o.Tight {
				mem += " tight"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", o.Provider, o.InstanceType, gpus,
				o.Pricing, hours, gpuHours, cost, quantity.FormatAmount(o.USDPerHour), perM, mem, o.Precision, badge)
		}
		tw.Flush()
	}
	if len(adv.MissedTarget) > 0 {
		fmt.Fprintf(stdout, "\n--- below the line: %d configuration(s) that hold the load but miss the target ---\n", len(adv.MissedTarget))
		for _, o := range adv.MissedTarget {
			fmt.Fprintf(stdout, "%s %s (%s): %s per %g h; %s\n", o.Provider, o.InstanceType, o.Config(), quantity.FormatAmount(o.CostUSD), adv.Assumptions.ServingHours, o.Miss)
		}
	}
	for _, o := range adv.Options {
		if o.Caveat != "" {
			fmt.Fprintf(stdout, "\n%s %s: %s", o.Provider, o.InstanceType, o.Caveat)
		}
		for _, n := range o.Notes {
			fmt.Fprintf(stdout, "\n%s %s: %s", o.Provider, o.InstanceType, n)
		}
	}
	fmt.Fprintf(stdout, "\n%d configuration(s) excluded (--json lists them with why). Prices: %s, as of %s.\n",
		len(adv.Excluded), adv.Assumptions.PriceSource, adv.Assumptions.PriceAsOf)
}

func jobList() string {
	names := make([]string, len(pricing.JobTypes))
	for i, j := range pricing.JobTypes {
		names[i] = string(j)
	}
	return strings.Join(names, "|")
}

// pricingCommand is what advise and breakeven share around their own
// flags: the flag set, whose prices (--org, --price-source), --json, and the
// database, opened only for an org's prices.
type pricingCommand struct {
	name   string
	fs     *flag.FlagSet
	org    string
	source *string // the request's price source, which --price-source sets
	asJSON bool
}

// newPricingCommand starts the flag set of command name with the shared
// flags; the command adds its own before parse.
func newPricingCommand(name string, stdout io.Writer, source *string) *pricingCommand {
	c := &pricingCommand{name: name, fs: flag.NewFlagSet(name, flag.ContinueOnError), source: source}
	c.fs.SetOutput(stdout)
	c.fs.StringVar(&c.org, "org", "", "use this org's prices (needs the database)")
	c.fs.StringVar(source, "price-source", "", "with --org: catalog, overrides (default) or paid")
	c.fs.BoolVar(&c.asJSON, "json", false, "print the API's JSON")
	return c
}

// parse parses args, which are all flags: the request is in them.
func (c *pricingCommand) parse(args []string) error {
	if err := c.fs.Parse(args); err != nil {
		return err
	}
	if c.fs.NArg() > 0 {
		return fmt.Errorf("%s: unexpected argument %q", c.name, c.fs.Arg(0))
	}
	return nil
}

// orgStore opens the database and finds the org when --org is set, for its
// prices; without one, the shipped catalog is the only source (and an
// explicit other source is an error). done closes what was opened.
func (c *pricingCommand) orgStore(ctx context.Context, cfg Config, log *slog.Logger) (st *store.Store, orgID int64, done func(), err error) {
	if c.org == "" {
		if *c.source != "" && *c.source != advisor.PriceCatalog {
			return nil, 0, func() {}, fmt.Errorf("%s: --price-source %s needs --org", c.name, *c.source)
		}
		*c.source = advisor.PriceCatalog
		return nil, 0, func() {}, nil
	}
	db, org, err := openOrg(ctx, cfg, log, c.name, c.org)
	if err != nil {
		return nil, 0, func() {}, err
	}
	return db.store, org.ID, db.close, nil
}

// runPriced is the rest of advise and breakeven once the request is
// parsed: open the org's prices (with --org), compute the answer with
// them, and print it as the API's JSON (--json) or as text.
func runPriced[T any](ctx context.Context, cfg Config, log *slog.Logger, pc *pricingCommand, stdout io.Writer,
	compute func(st *store.Store, orgID int64) (T, error), printText func(io.Writer, T)) error {
	st, orgID, done, err := pc.orgStore(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer done()
	res, err := compute(st, orgID)
	if err != nil {
		return err
	}
	if pc.asJSON {
		return printJSON(stdout, res)
	}
	printText(stdout, res)
	return nil
}

// flagNumbers reads number flags through quantity's bounds, the way the
// browser's forms read the same fields; errors name the flag. A flag left
// empty is zero (or nil).
type flagNumbers struct{ err error }

func (f *flagNumbers) parse(k quantity.Kind, name, s string) (decimal.Decimal, bool) {
	if strings.TrimSpace(s) == "" {
		return decimal.Zero, false
	}
	d, err := k.ParseHuman("--"+name, s)
	if err != nil {
		f.err = errors.Join(f.err, err)
		return decimal.Zero, false
	}
	return d, true
}

func (f *flagNumbers) float(k quantity.Kind, name, s string) float64 {
	d, _ := f.parse(k, name, s)
	return d.InexactFloat64()
}

// int is a whole-number flag (k is a whole kind, so it fits).
func (f *flagNumbers) int(k quantity.Kind, name, s string) int {
	d, _ := f.parse(k, name, s)
	return int(d.IntPart())
}

// optionalFloat is a number flag whose absence (or zero) leaves the
// request's default: nil.
func (f *flagNumbers) optionalFloat(k quantity.Kind, name, s string) *float64 {
	if v := f.float(k, name, s); v != 0 {
		return &v
	}
	return nil
}

func (f *flagNumbers) money(name, s string) *decimal.Decimal {
	d, ok := f.parse(quantity.Price, name, s)
	if !ok {
		return nil
	}
	return &d
}
