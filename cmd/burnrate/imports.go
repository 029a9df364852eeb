package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"

	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/quantity"
	"github.com/burnrate/burnrate/savings"
	"github.com/burnrate/burnrate/store"
)

const importsUsage = `usage: burnrate imports list --org SLUG [--json]
       burnrate imports delete --org SLUG [--json] ID`

// runImports is 'burnrate imports': the import history, and removing an
// import with its rows (docs/import-formats.md, "Removing an import").
func runImports(ctx context.Context, cfg Config, log *slog.Logger, args []string, stdout io.Writer) error {
	if len(args) == 0 || (args[0] != "list" && args[0] != "delete") {
		return errors.New("imports: " + importsUsage)
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("imports "+sub, flag.ContinueOnError)
	slug := fs.String("org", "", "the org's slug (required)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *slug == "" || (sub == "list") != (fs.NArg() == 0) || fs.NArg() > 1 {
		return errors.New("imports: " + importsUsage)
	}
	db, org, err := openOrg(ctx, cfg, log, "imports", *slug)
	if err != nil {
		return err
	}
	defer db.close()

	if sub == "delete" {
		id, err := strconv.ParseInt(fs.Arg(0), 10, 64)
		if err != nil || id <= 0 {
			return fmt.Errorf("imports delete: %q is not an import's id (burnrate imports list shows them)", fs.Arg(0))
		}
		a, err := newApp(db.store, cfg, log)
		if err != nil {
			return err
		}
		// The org's stored savings report is refreshed once the removal
		// commits, as after the web's.
		var imp store.Import
		err = db.store.InTx(ctx, func(tx *store.Store) error {
			if imp, err = tx.RemoveImport(ctx, org.ID, id, 0, "cli"); err != nil {
				return err
			}
			return savings.EnqueueRefresh(ctx, a.Queue, tx, org.ID)
		})
		if err != nil {
			return fmt.Errorf("imports delete %d: %w", id, err)
		}
		if *asJSON {
			return printJSON(stdout, ingest.HistoryEntryOf(imp))
		}
		fmt.Fprintf(stdout, "removed import %d (%s): %s rows\n", imp.ID, imp.FileName, quantity.FormatCount(imp.Rows))
		return nil
	}

	imps, err := db.store.Imports(ctx, org.ID, ingest.HistoryLength)
	if err != nil {
		return err
	}
	entries := make([]ingest.HistoryEntry, 0, len(imps))
	for _, imp := range imps {
		entries = append(entries, ingest.HistoryEntryOf(imp))
	}
	if *asJSON {
		return printJSON(stdout, map[string]any{"imports": entries})
	}
	for _, e := range entries {
		period := "no rows"
		if e.PeriodStart != nil && e.PeriodEnd != nil {
			period = *e.PeriodStart + " to " + *e.PeriodEnd
		}
		var totals []string
		for cur, v := range e.Totals {
			totals = append(totals, v+" "+cur)
		}
		slices.Sort(totals)
		what := e.Status
		if e.Error != "" {
			what += ": " + e.Error
		}
		fmt.Fprintf(stdout, "%d\t%s\t%s\t%s\t%s rows\t%s\t%s\t%s\n", e.ID, e.ImportedAt.UTC().Format("2006-01-02 15:04"),
			e.FileName, e.Source, quantity.FormatCount(e.Rows), period, strings.Join(totals, ", "), what)
	}
	return nil
}
