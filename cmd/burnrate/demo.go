package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/burnrate/burnrate/demo"
	"github.com/burnrate/burnrate/store"
)

// runDemo is 'burnrate demo': a demo org with about 90 days of generated
// spend, imported through the real import path, and budgets; it prints how
// to log in.
func runDemo(ctx context.Context, cfg Config, log *slog.Logger, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	name := fs.String("name", "Demo: Acme ML", "the demo org's name")
	email := fs.String("email", "demo@burnrate.local", "the owner's email; the user is created if new")
	passwordFlag := fs.String("password", "", "the new owner's password (default: a random one, printed)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := checkOwnerFlags("demo", "email", *email, *passwordFlag); err != nil {
		return err
	}
	db, err := openDatabase(ctx, cfg, log, cfg.RunMigrations)
	if err != nil {
		return err
	}
	defer db.close()
	st := db.store

	var org store.Org
	newPassword := ""
	err = st.InTx(ctx, func(tx *store.Store) error {
		user, created, generated, err := ownerByEmail(ctx, tx, *email, "Demo owner", *passwordFlag)
		if err != nil {
			return err
		}
		if created {
			// The demo prints the new owner's password, given or generated.
			newPassword = cmp.Or(generated, *passwordFlag)
		}
		org, err = tx.CreateOrg(ctx, *name, user.ID)
		return err
	})
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	a, err := newApp(st, cfg, log)
	if err != nil {
		return err
	}
	res, err := demo.Seed(ctx, st, a.Importer, org, time.Now())
	if err != nil {
		return err
	}
	for _, f := range res.Files {
		fmt.Fprintf(stdout, "imported %s: %d rows (%s)\n", f.FileName, f.Rows, f.Source)
	}
	fmt.Fprintf(stdout, "budgets:  %d, anomaly on %s\n", len(res.Budgets), res.Anomaly.Format(time.DateOnly))
	fmt.Fprintf(stdout, "org:      %s (%s)\n", org.Slug, org.Name)
	if newPassword != "" {
		fmt.Fprintf(stdout, "log in:   %s / %s\n", *email, newPassword)
	} else {
		fmt.Fprintf(stdout, "log in:   %s (existing user, password unchanged)\n", *email)
	}
	fmt.Fprintf(stdout, "open:     %s/dashboard\n", cfg.BaseURL)
	return nil
}
