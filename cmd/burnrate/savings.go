package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"time"

	"github.com/burnrate/burnrate/quantity"
	"github.com/burnrate/burnrate/savings"
)

// runSavings is 'burnrate savings': the Savings page's findings for an org
// (package savings, as GET /api/v1/savings computes them), as text or the
// API's JSON.
func runSavings(ctx context.Context, cfg Config, log *slog.Logger, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("savings", flag.ContinueOnError)
	fs.SetOutput(stdout)
	slug := fs.String("org", "", "the org's slug (required)")
	share := fs.String("share", "40", "share of a model's requests moved to its smaller sibling, in percent")
	discount := fs.String("commit-discount", "", "the 1-year commitment discount your provider quotes, in percent (default: commitments are not priced)")
	asJSON := fs.Bool("json", false, "print the API's JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *slug == "" || fs.NArg() > 0 {
		return errors.New("savings: usage: burnrate savings --org SLUG [--share PERCENT] [--commit-discount PERCENT] [--json]")
	}
	opts := savings.DefaultOptions()
	var err error
	if opts.RoutingShare, err = savings.ParsePercent("--share", *share); err != nil {
		return fmt.Errorf("savings: %w", err)
	}
	if *discount != "" {
		if opts.CommitDiscount, err = savings.ParsePercent("--commit-discount", *discount); err != nil {
			return fmt.Errorf("savings: %w", err)
		}
	}
	db, org, err := openOrg(ctx, cfg, log, "savings", *slug)
	if err != nil {
		return err
	}
	defer db.close()
	opts.Now = time.Now()
	rep, err := savings.Load(ctx, db.store, org, opts)
	if err != nil {
		return fmt.Errorf("savings: %w", err)
	}
	if *asJSON {
		return printJSON(stdout, rep)
	}
	if rep.To.IsZero() {
		fmt.Fprintln(stdout, "No bills imported yet.")
		return nil
	}
	fmt.Fprintf(stdout, "Bills of %s to %s (%s with charges), per month of 730 hours.\n",
		rep.From.Format(time.DateOnly), rep.Through, savings.Days(rep.CoveredDays.IntPart()))
	if len(rep.Totals) == 0 {
		fmt.Fprintln(stdout, "Savings found: none.")
	}
	for _, t := range rep.Totals {
		fmt.Fprintf(stdout, "Savings found: %s/month\n", quantity.FormatMoney(t.Amount, t.Currency))
	}
	for _, f := range rep.Findings {
		amount := "not priced"
		if o := f.Observed; o != nil {
			amount = fmt.Sprintf("%s (too few days to scale to a month: at least %d needed; counted in no total)",
				o.Label(f.Currency), savings.MonthlyMinDays)
		} else if f.Priced {
			amount = quantity.FormatMoney(f.Monthly, f.Currency) + "/month"
		}
		fmt.Fprintf(stdout, "\n[%s] %s\n  %s\n  %s\n", f.Kind, f.Title, amount, f.Detail)
		if w := f.Window; w != nil {
			fmt.Fprintf(stdout, "  evidence window: %s to %s (%s of GPU bills, used on %d)\n", w.From, w.To, savings.Days(w.Days), w.UsageDays)
		}
		for _, e := range f.Evidence {
			if e.Model != "" {
				// LLM usage is kept as requests and tokens, not charge rows.
				fmt.Fprintf(stdout, "  - %s: %s to %s, %s requests, %s tokens, %s\n", e.Model, e.From, e.To,
					quantity.Group(strconv.FormatInt(e.Requests, 10)), quantity.Group(strconv.FormatInt(e.Tokens, 10)),
					quantity.FormatMoney(e.Amount, f.Currency))
				continue
			}
			fmt.Fprintf(stdout, "  - %s %s %s: %s to %s, %s instance-hours, %s, %s\n", e.Provider, e.InstanceType, e.Resource,
				e.From, e.To, e.Hours, countWord(e.Charges, "charge"), quantity.FormatMoney(e.Amount, f.Currency))
		}
	}
	return nil
}

// countWord writes n and a noun, singular or plural: "1 charge", "9 charges".
func countWord(n int64, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return quantity.Group(strconv.FormatInt(n, 10)) + " " + word + "s"
}
