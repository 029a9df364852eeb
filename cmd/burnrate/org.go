package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/mail"

	"github.com/burnrate/burnrate/password"
	"github.com/burnrate/burnrate/store"
)

// runOrg is 'burnrate org create': an org, its owner (created when new) and
// an API token, for automation that sets Burnrate up without a browser.
func runOrg(ctx context.Context, cfg Config, log *slog.Logger, args []string, stdout io.Writer) error {
	if len(args) > 0 && args[0] == "plan" {
		return runOrgPlan(ctx, cfg, log, args[1:], stdout)
	}
	if len(args) == 0 || args[0] != "create" {
		return errors.New("org: want 'org create --name NAME --owner-email EMAIL [--password P] [--json]' or 'org plan --org SLUG [--set PLAN]'")
	}
	fs := flag.NewFlagSet("org create", flag.ContinueOnError)
	name := fs.String("name", "", "the org's name (required)")
	email := fs.String("owner-email", "", "the owner's email; the user is created if new (required)")
	passwordFlag := fs.String("password", "", "the new owner's password (default: a random one, printed)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *name == "" || *email == "" {
		return errors.New("org create: --name and --owner-email are required")
	}
	if a, err := mail.ParseAddress(*email); err != nil || a.Address != *email {
		return fmt.Errorf("org create: --owner-email %q is not an email address", *email)
	}
	if *passwordFlag != "" {
		if msg := password.Problem(*passwordFlag); msg != "" {
			return fmt.Errorf("org create: --password: %s", msg)
		}
	}
	db, err := openDatabase(ctx, cfg, log, cfg.RunMigrations)
	if err != nil {
		return err
	}
	defer db.close()
	st := db.store

	var (
		org         store.Org
		token       string
		newPassword string
		userCreated bool
	)
	err = st.InTx(ctx, func(tx *store.Store) error {
		user, err := tx.UserByEmail(ctx, *email)
		if errors.Is(err, store.ErrNotFound) {
			pw := *passwordFlag
			if pw == "" {
				pw = rand.Text()
				newPassword = pw
			}
			hash, err := password.Hash(pw)
			if err != nil {
				return err
			}
			if user, err = tx.CreateUser(ctx, *email, *email, hash); err != nil {
				return err
			}
			userCreated = true
		} else if err != nil {
			return err
		}
		if org, err = tx.CreateOrg(ctx, *name, user.ID); err != nil {
			return err
		}
		_, token, err = tx.CreateAPIToken(ctx, org.ID, "created by burnrate org create", user.ID)
		return err
	})
	if err != nil {
		return fmt.Errorf("org create: %w", err)
	}
	if *asJSON {
		out := map[string]any{"slug": org.Slug, "name": org.Name, "api_token": token, "owner_email": *email, "owner_created": userCreated}
		if newPassword != "" {
			out["owner_password"] = newPassword
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	fmt.Fprintf(stdout, "org:       %s (%s)\napi token: %s\n", org.Slug, org.Name, token)
	if newPassword != "" {
		fmt.Fprintf(stdout, "owner:     %s, password %s\n", *email, newPassword)
	}
	return nil
}
