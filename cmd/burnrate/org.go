package main

import (
	"context"
	"crypto/rand"
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
	if len(args) > 0 && args[0] == "delete" {
		return runOrgDelete(ctx, cfg, log, args[1:], stdout)
	}
	if len(args) == 0 || args[0] != "create" {
		return errors.New("org: want 'org create --name NAME --owner-email EMAIL [--password P] [--json]', " +
			"'org plan --org SLUG [--set PLAN]' or 'org delete --org SLUG --yes'")
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
	if err := checkOwnerFlags("org create", "owner-email", *email, *passwordFlag); err != nil {
		return err
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
		user, created, generated, err := ownerByEmail(ctx, tx, *email, *email, *passwordFlag)
		if err != nil {
			return err
		}
		userCreated, newPassword = created, generated
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
		return printJSON(stdout, out)
	}
	fmt.Fprintf(stdout, "org:       %s (%s)\napi token: %s\n", org.Slug, org.Name, token)
	if newPassword != "" {
		fmt.Fprintf(stdout, "owner:     %s, password %s\n", *email, newPassword)
	}
	return nil
}

// checkOwnerFlags checks the owner's email and password that 'org create'
// and 'demo' take (emailFlag names the email's flag), as sign-up checks
// them, before anything is opened.
func checkOwnerFlags(cmd, emailFlag, email, pw string) error {
	if a, err := mail.ParseAddress(email); err != nil || a.Address != email {
		return fmt.Errorf("%s: --%s %q is not an email address", cmd, emailFlag, email)
	}
	if pw != "" {
		if msg := password.Problem(pw); msg != "" {
			return fmt.Errorf("%s: --password: %s", cmd, msg)
		}
	}
	return nil
}

// ownerByEmail returns the user with email, creating them (as name, with
// password pw) when there is none. An empty pw gives the new user a random
// password, returned as generated so that it can be printed once.
func ownerByEmail(ctx context.Context, tx *store.Store, email, name, pw string) (user store.User, created bool, generated string, err error) {
	user, err = tx.UserByEmail(ctx, email)
	if !errors.Is(err, store.ErrNotFound) {
		return user, false, "", err
	}
	if pw == "" {
		pw = rand.Text()
		generated = pw
	}
	hash, err := password.Hash(pw)
	if err != nil {
		return user, false, "", err
	}
	if user, err = tx.CreateUser(ctx, email, name, hash); err != nil {
		return user, false, "", err
	}
	return user, true, generated, nil
}

// runOrgDelete is 'burnrate org delete': an org and everything of it (its
// imports, charges and rollups, budgets, members' memberships, tokens,
// settings) in one transaction; its users stay, as they may belong to
// other orgs. Deleting rows of an org by hand in SQL leaves its charges and
// GPU usage rollup behind, which have no foreign key to orgs.
func runOrgDelete(ctx context.Context, cfg Config, log *slog.Logger, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("org delete", flag.ContinueOnError)
	slug := fs.String("org", "", "the org's slug (required)")
	yes := fs.Bool("yes", false, "really delete it: nothing of the org can be brought back")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *slug == "" || fs.NArg() > 0 {
		return errors.New("org delete: want 'org delete --org SLUG --yes'")
	}
	if !*yes {
		return fmt.Errorf("org delete: deleting org %q deletes all of its data for good; add --yes to do it", *slug)
	}
	db, org, err := openOrg(ctx, cfg, log, "org delete", *slug)
	if err != nil {
		return err
	}
	defer db.close()
	if err := db.store.DeleteOrg(ctx, org.ID); err != nil {
		return fmt.Errorf("org delete: %w", err)
	}
	fmt.Fprintf(stdout, "deleted org %s (%s)\n", org.Slug, org.Name)
	return nil
}
