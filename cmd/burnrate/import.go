package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/advisor"
	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/quantity"
)

// runImport is 'burnrate import': each file in its own transaction, like an
// upload. It exits non-zero when any file fails, after trying them all.
func runImport(ctx context.Context, cfg Config, log *slog.Logger, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	slug := fs.String("org", "", "the org's slug (required)")
	source := fs.String("source", "", "force a format instead of detecting it: "+strings.Join(ingest.SourceNames(), ", "))
	asJSON := fs.Bool("json", false, "print one JSON result per file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *slug == "" || fs.NArg() == 0 {
		return errors.New("import: usage: burnrate import --org SLUG [--source NAME] [--json] FILE [FILE …]")
	}
	db, org, err := openOrg(ctx, cfg, log, "import", *slug)
	if noOrg := errNoOrg(""); errors.As(err, &noOrg) {
		return fmt.Errorf("%w (burnrate org create makes one)", err)
	}
	if err != nil {
		return err
	}
	defer db.close()
	var mapping *ingest.Mapping
	if ingest.Source(*source) == ingest.SourceGeneric {
		m, err := db.store.ColumnMapping(ctx, org.ID)
		if err != nil {
			return fmt.Errorf("import: the generic format needs the org's column mapping (set it up under Imports): %w", err)
		}
		mapping = ingest.MappingFrom(m)
	}
	a, err := newApp(db.store, cfg, log)
	if err != nil {
		return err
	}
	// The App's importer: the plan's monthly rows and the work after each
	// import, as for uploads.
	im := a.Importer
	// Usage logs without costs are priced at the org's negotiated prices
	// where it has them, as uploads in the browser are.
	prices, err := advisor.LoadOrgPrices(ctx, db.store, org.ID, advisor.PriceOverrides, time.Now())
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	failed := 0
	for _, path := range fs.Args() {
		res, err := importFile(ctx, im, ingest.ImportRequest{
			Org: org, FileName: filepath.Base(path), Source: ingest.Source(*source), Mapping: mapping, Via: "cli",
			Pricer: ingest.PriceTable(prices.LLM),
		}, path)
		if err != nil {
			failed++
			if *asJSON {
				out := map[string]any{"file_name": filepath.Base(path), "error": err.Error()}
				var ierr *ingest.ImportError
				if errors.As(err, &ierr) {
					if line, col := ierr.Position(); line > 0 {
						out["line"], out["column"] = line, col
					}
				}
				_ = enc.Encode(out)
			} else {
				fmt.Fprintf(stdout, "%s: FAILED: %v\n", path, err)
			}
			continue
		}
		if *asJSON {
			_ = enc.Encode(res)
			continue
		}
		switch {
		case res.Duplicate:
			fmt.Fprintf(stdout, "%s: already imported on %s (import %d); nothing changed\n", path, res.ImportedAt.Format("2006-01-02 15:04"), res.ID)
		default:
			var totals []string
			for cur, v := range res.Totals {
				if d, err := decimal.NewFromString(v); err == nil {
					v = quantity.FormatAmount(d) // --json keeps the exact decimal
				}
				totals = append(totals, v+" "+cur)
			}
			basis := ""
			if res.CostBasis != "" {
				basis = " " + res.CostBasis
			}
			short := ""
			if res.ShortRows > 0 {
				short = fmt.Sprintf(", %d short rows read with their last (optional) columns empty", res.ShortRows)
			}
			fmt.Fprintf(stdout, "%s: %s, %d rows, %s to %s, total%s %s (replaced %d, skipped %d, merged %d%s; import %d)\n",
				path, res.Source, res.Rows, deref(res.PeriodStart), deref(res.PeriodEnd), basis, strings.Join(totals, ", "),
				res.ReplacedRows, res.SkippedRows, res.MergedRows, short, res.ID)
		}
	}
	if failed > 0 {
		return fmt.Errorf("import: %d of %d files failed; nothing of those was written", failed, fs.NArg())
	}
	return nil
}

func importFile(ctx context.Context, im *ingest.Importer, req ingest.ImportRequest, path string) (ingest.ImportResult, error) {
	f, err := os.Open(path)
	if err != nil {
		return ingest.ImportResult{}, err
	}
	defer f.Close()
	return im.Import(ctx, req, f)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
