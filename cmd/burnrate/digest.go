package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/burnrate/burnrate/digest"
	"github.com/burnrate/burnrate/store"
)

// runDigest is 'burnrate digest': an org's digest of one day, printed (as
// text or JSON), or with --send delivered as the daily job delivers it.
func runDigest(ctx context.Context, cfg Config, log *slog.Logger, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("digest", flag.ContinueOnError)
	slug := fs.String("org", "", "the org's slug (required)")
	dateFlag := fs.String("date", "", "the day, YYYY-MM-DD in the org's time zone (default: yesterday there)")
	send := fs.Bool("send", false, "deliver it (email, Slack, webhook) instead of printing it; once per day however often it runs")
	when := fs.String("when", "", "with --send: over (only when a budget is over) or always (default: the org's setting)")
	asJSON := fs.Bool("json", false, "print the digest, or with --send what was delivered, as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *slug == "" || fs.NArg() > 0 {
		return errors.New("digest: usage: burnrate digest --org SLUG [--date YYYY-MM-DD] [--send [--when over|always]] [--json]")
	}
	if *when != "" && *when != store.DigestWhenOver && *when != store.DigestWhenAlways {
		return fmt.Errorf("digest: --when is over or always, not %q", *when)
	}
	db, org, err := openOrg(ctx, cfg, log, "digest", *slug)
	if err != nil {
		return err
	}
	defer db.close()
	now := time.Now()
	day := digest.Yesterday(now, org.Location())
	if *dateFlag != "" {
		if day, err = time.Parse(time.DateOnly, *dateFlag); err != nil {
			return fmt.Errorf("digest: --date: want YYYY-MM-DD, got %q", *dateFlag)
		}
	}
	if !*send {
		d, err := digest.Build(ctx, db.store, org, day, now)
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(stdout).Encode(struct {
				Date string `json:"date"`
				digest.Digest
				Over bool `json:"over"`
			}{d.Date(), d, d.Over()})
		}
		fmt.Fprintf(stdout, "Subject: %s\n\n%s", digest.Subject(d), digest.Text(d, cfg.BaseURL))
		return nil
	}
	if *when == "" {
		set, err := db.store.DigestSettings(ctx, org.ID)
		if err != nil {
			return err
		}
		*when = set.When
	}
	// The deliveries are recorded here and sent by the jobs of a running
	// serve or worker, like the scheduled digest's.
	a, err := newApp(db.store, cfg, log)
	if err != nil {
		return err
	}
	// A person asking now does not wait for the day's data: what is
	// missing is named.
	out, err := digest.Send(ctx, db.store, a.Notifier, org, day, now, digest.Plan{When: *when})
	if err != nil {
		return err
	}
	if *asJSON {
		type delivery struct {
			Channel string `json:"channel"`
			Target  string `json:"target"`
			Status  string `json:"status"`
			Error   string `json:"error,omitempty"`
		}
		ds := []delivery{}
		for _, d := range out.Deliveries {
			ds = append(ds, delivery{d.Channel, d.Target, d.Status, d.LastError})
		}
		return json.NewEncoder(stdout).Encode(map[string]any{"date": out.Digest.Date(), "sent": out.Sent, "reason": out.Reason,
			"deliveries": ds})
	}
	if !out.Sent {
		fmt.Fprintf(stdout, "not sent: %s\n", out.Reason)
		return nil
	}
	fmt.Fprintf(stdout, "digest of %s for %s:\n", out.Digest.Date(), org.Slug)
	for _, d := range out.Deliveries {
		line := fmt.Sprintf("  %-8s %-40s %s", d.Channel, d.Target, d.Status)
		if d.LastError != "" {
			line += " (" + d.LastError + ")"
		}
		fmt.Fprintln(stdout, line)
	}
	return nil
}
