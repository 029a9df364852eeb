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
	"strings"
	"time"

	"github.com/burnrate/burnrate/connect"
	"github.com/burnrate/burnrate/quantity"
	"github.com/burnrate/burnrate/store"
)

const connectionUsage = `usage:
  burnrate connection add --org SLUG --name NAME --kind openai|anthropic --api-key-file FILE|-
                          [--start-date YYYY-MM-DD] [--restate-days N] [--data costs|usage] [--json]
  burnrate connection add --org SLUG --name NAME --kind aws-s3 --bucket B [--prefix P] [--region R]
                          [--endpoint-url URL] [--access-key-id ID --secret-access-key-file FILE|-] [--json]
  burnrate connection add --org SLUG --name NAME --kind azure-blob --account A --container C [--prefix DIR]
                          (--account-key-file FILE|- | --sas-token-file FILE|-) [--endpoint-url URL] [--json]
  burnrate connection list --org SLUG [--json]
  burnrate connection sync --org SLUG [--json] NAME
  burnrate connection delete --org SLUG NAME`

// runConnection is 'burnrate connection': connections are added, listed
// and synced through the same service as the Connections page and the API.
// sync runs at once, in this process, rather than waiting for a worker.
func runConnection(ctx context.Context, cfg Config, log *slog.Logger, args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New("connection: " + connectionUsage)
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("connection "+sub, flag.ContinueOnError)
	slug := fs.String("org", "", "the org's slug (required)")
	asJSON := fs.Bool("json", false, "print JSON")
	var in connect.Input
	var keyFile, secretFile, accountKeyFile, sasFile string
	if sub == "add" {
		fs.StringVar(&in.Name, "name", "", "the connection's name, shown in the import history (required)")
		fs.StringVar(&in.Kind, "kind", "", "openai, anthropic, aws-s3 or azure-blob (required)")
		fs.StringVar(&keyFile, "api-key-file", "", "a file holding the admin API key, or - for standard input (required; never a flag's value, which other users can see)")
		fs.StringVar(&in.StartDate, "start-date", "", "the first day to backfill, YYYY-MM-DD (default: 30 days ago)")
		fs.Func("restate-days", "days pulled again on every run (default 3)", func(v string) error { in.RestateDays = quantity.Text(v); return nil })
		fs.StringVar(&in.Data, "data", "", "costs (the bill, default) or usage (tokens, priced with the org's prices)")
		fs.StringVar(&in.Bucket, "bucket", "", "aws-s3: the bucket the export is delivered to")
		fs.StringVar(&in.Prefix, "prefix", "", "aws-s3: the export's prefix and name (cur/my-export); azure-blob: the export's directory")
		fs.StringVar(&in.Region, "region", "", "aws-s3: the bucket's region (default us-east-1)")
		fs.StringVar(&in.EndpointURL, "endpoint-url", "", "aws-s3: an S3-compatible server instead of AWS; azure-blob: the blob service's URL (Azurite, another cloud)")
		fs.StringVar(&in.AccessKeyID, "access-key-id", "", "aws-s3: an access key id (default: the host's credential chain)")
		fs.StringVar(&secretFile, "secret-access-key-file", "", "aws-s3: a file holding the secret access key, or - for standard input")
		fs.StringVar(&in.Account, "account", "", "azure-blob: the storage account the export is delivered to")
		fs.StringVar(&in.Container, "container", "", "azure-blob: the container")
		fs.StringVar(&accountKeyFile, "account-key-file", "", "azure-blob: a file holding the storage account's key, or - for standard input")
		fs.StringVar(&sasFile, "sas-token-file", "", "azure-blob: a file holding a SAS token or SAS URL with Read and List, or - for standard input")
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *slug == "" {
		return errors.New("connection: --org is required\n" + connectionUsage)
	}
	db, err := openDatabase(ctx, cfg, log, cfg.RunMigrations)
	if err != nil {
		return err
	}
	defer db.close()
	org, err := db.store.OrgBySlug(ctx, *slug)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("connection: no org with slug %q", *slug)
	}
	if err != nil {
		return err
	}
	bg, err := newJobs(db.store, cfg, log)
	if err != nil {
		return err
	}
	svc := bg.connections
	enc := json.NewEncoder(stdout)
	named := func() (store.Connection, error) {
		if fs.NArg() != 1 {
			return store.Connection{}, errors.New("connection " + sub + ": name one connection\n" + connectionUsage)
		}
		c, err := db.store.ConnectionByName(ctx, org.ID, fs.Arg(0))
		if errors.Is(err, store.ErrNotFound) {
			return c, fmt.Errorf("connection %s: the org has no connection named %q", sub, fs.Arg(0))
		}
		return c, err
	}
	switch sub {
	case "add":
		read := func(flag, name string) (string, error) {
			var b []byte
			var err error
			if name == "-" {
				b, err = io.ReadAll(io.LimitReader(stdin, 4096))
			} else {
				b, err = os.ReadFile(name)
			}
			if err != nil {
				return "", fmt.Errorf("connection add: --%s: %w", flag, err)
			}
			return strings.TrimSpace(string(b)), nil
		}
		switch {
		case in.Kind == connect.KindS3 && secretFile != "":
			if in.SecretAccessKey, err = read("secret-access-key-file", secretFile); err != nil {
				return err
			}
		case in.Kind == connect.KindS3:
		case in.Kind == connect.KindAzure:
			if accountKeyFile != "" {
				if in.AccountKey, err = read("account-key-file", accountKeyFile); err != nil {
					return err
				}
			}
			if sasFile != "" {
				if in.SASToken, err = read("sas-token-file", sasFile); err != nil {
					return err
				}
			}
		case keyFile == "":
			return errors.New("connection add: --api-key-file is required (- reads the key from standard input)")
		default:
			if in.APIKey, err = read("api-key-file", keyFile); err != nil {
				return err
			}
		}
		var c store.Connection
		err = db.store.Fenced(ctx, org.ID, 0, func(st *store.Store) error {
			c, err = svc.Create(ctx, st, org.ID, 0, in)
			return err
		})
		if err != nil {
			return fmt.Errorf("connection add: %w", err)
		}
		if *asJSON {
			return enc.Encode(connect.ViewOf(c))
		}
		fmt.Fprintf(stdout, "connection %q added (key %s); a worker pulls it within %s, or run: burnrate connection sync --org %s %q\n",
			c.Name, c.SecretHint, connect.ScheduleEvery, org.Slug, c.Name)
		return nil
	case "list":
		cs, err := db.store.Connections(ctx, org.ID)
		if err != nil {
			return err
		}
		views := make([]connect.View, 0, len(cs))
		for _, c := range cs {
			views = append(views, connect.ViewOf(c))
		}
		if *asJSON {
			return enc.Encode(views)
		}
		for _, v := range views {
			last := "never run"
			if v.LastRunAt != nil {
				last = fmt.Sprintf("last run %s: %s, %d rows", v.LastRunAt.UTC().Format(time.DateTime), v.LastStatus, v.LastRows)
				if v.LastError != "" {
					last += ": " + v.LastError
				}
			}
			state := "paused"
			if v.NextRunAt != nil {
				state = "next run " + v.NextRunAt.UTC().Format(time.DateTime)
			}
			fmt.Fprintf(stdout, "%s\t%s\t%s\t%s\n", v.Name, v.Kind, state, last)
		}
		return nil
	case "sync":
		c, err := named()
		if err != nil {
			return err
		}
		res, err := svc.Sync(ctx, org.ID, c.ID)
		if *asJSON {
			_ = enc.Encode(res)
		} else {
			for _, ir := range res.Imports {
				if ir.Duplicate {
					fmt.Fprintf(stdout, "%s: nothing new (same as import %d)\n", ir.FileName, ir.ID)
					continue
				}
				fmt.Fprintf(stdout, "%s: %s, %d rows (replaced %d; import %d)\n", ir.FileName, ir.Source, ir.Rows, ir.ReplacedRows, ir.ID)
			}
			if err == nil && len(res.Imports) == 0 {
				fmt.Fprintln(stdout, "nothing new")
			}
		}
		if err != nil {
			return fmt.Errorf("connection sync %s: %w", c.Name, err)
		}
		return nil
	case "delete":
		c, err := named()
		if err != nil {
			return err
		}
		if err := db.store.DeleteConnection(ctx, org.ID, c.ID); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "connection %q deleted; what it imported stays\n", c.Name)
		return nil
	}
	return fmt.Errorf("connection: unknown subcommand %q\n%s", sub, connectionUsage)
}

// runSecrets is 'burnrate secrets rotate': every connection's credentials
// and every channel URL re-encrypted from SECRET_KEY_OLD to SECRET_KEY, in
// one transaction.
func runSecrets(ctx context.Context, cfg Config, log *slog.Logger, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) != 1 || args[0] != "rotate" {
		return errors.New("secrets: usage: SECRET_KEY_OLD=… SECRET_KEY=… burnrate secrets rotate (or the _FILE forms)")
	}
	if cfg.SecretKey == nil {
		return errors.New("secrets rotate: set SECRET_KEY (or SECRET_KEY_FILE) to the new key, and SECRET_KEY_OLD (or SECRET_KEY_OLD_FILE) to the key the credentials are under now")
	}
	old := getenv("SECRET_KEY_OLD")
	if f := getenv("SECRET_KEY_OLD_FILE"); f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("SECRET_KEY_OLD_FILE: %w", err)
		}
		old = string(b)
	}
	oldKey, err := connect.ParseKey("SECRET_KEY_OLD", old)
	if errors.Is(err, connect.ErrNoKey) {
		return errors.New("secrets rotate: set SECRET_KEY_OLD (or SECRET_KEY_OLD_FILE) to the key the credentials are under now")
	}
	if err != nil {
		return err
	}
	db, err := openDatabase(ctx, cfg, log, cfg.RunMigrations)
	if err != nil {
		return err
	}
	defer db.close()
	n, nch, err := connect.Rotate(ctx, db.store, oldKey, cfg.SecretKey)
	if err != nil {
		return fmt.Errorf("secrets rotate: nothing changed: %w", err)
	}
	fmt.Fprintf(stdout, "re-encrypted %d connections' credentials and %d Slack and webhook URLs from key %s to key %s; start the servers with the new SECRET_KEY\n",
		n, nch, oldKey.ID(), cfg.SecretKey.ID())
	return nil
}
