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
	"github.com/burnrate/burnrate/seal"
	"github.com/burnrate/burnrate/store"
)

const connectionUsage = `usage:
  burnrate connection add --org SLUG --name NAME --kind openai|anthropic --api-key-file FILE|-
                          [--start-date YYYY-MM-DD] [--restate-days N] [--data costs|usage] [--json]
  burnrate connection add --org SLUG --name NAME --kind aws-s3 --bucket B [--prefix P] [--region R]
                          [--endpoint-url URL] [--access-key-id ID --secret-access-key-file FILE|-] [--json]
  burnrate connection add --org SLUG --name NAME --kind azure-blob --account A --container C [--prefix DIR]
                          (--account-key-file FILE|- | --sas-token-file FILE|-) [--endpoint-url URL] [--json]
  burnrate connection add --org SLUG --name NAME --kind gcp-bigquery --table PROJECT.DATASET.TABLE
                          --service-account-file KEY.json|- [--start-date YYYY-MM-DD] [--restate-days N] [--json]
  burnrate connection key --org SLUG NAME (--api-key-file FILE|- | [--access-key-id ID] --secret-access-key-file FILE|-
                          | --account-key-file FILE|- | --sas-token-file FILE|-) [--json]
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
	var add connectionAdd
	if sub == "add" || sub == "key" {
		add.flags(fs)
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *slug == "" {
		return errors.New("connection: --org is required\n" + connectionUsage)
	}
	db, org, err := openOrg(ctx, cfg, log, "connection", *slug)
	if err != nil {
		return err
	}
	defer db.close()
	a, err := newApp(db.store, cfg, log)
	if err != nil {
		return err
	}
	cc := connectionCommand{st: db.store, svc: a.Connections, org: org, sub: sub, fs: fs,
		asJSON: *asJSON, stdout: stdout}
	switch sub {
	case "add":
		return cc.add(ctx, add, stdin)
	case "key":
		return cc.key(ctx, add, stdin)
	case "list":
		return cc.list(ctx)
	case "sync":
		return cc.sync(ctx)
	case "delete":
		return cc.delete(ctx)
	}
	return fmt.Errorf("connection: unknown subcommand %q\n%s", sub, connectionUsage)
}

// connectionAdd is the flags of 'connection add': the connection, and the
// files its secrets are read from.
type connectionAdd struct {
	in             connect.Input
	keyFile        string
	secretFile     string
	accountKeyFile string
	sasFile        string
	gcpKeyFile     string
}

func (a *connectionAdd) flags(fs *flag.FlagSet) {
	in := &a.in
	fs.StringVar(&in.Name, "name", "", "the connection's name, shown in the import history (required)")
	fs.StringVar(&in.Kind, "kind", "", "openai, anthropic, aws-s3, azure-blob or gcp-bigquery (required)")
	fs.StringVar(&a.keyFile, "api-key-file", "", "a file holding the admin API key, or - for standard input (required; never a flag's value, which other users can see)")
	fs.StringVar(&in.StartDate, "start-date", "", "the first day to backfill, YYYY-MM-DD (default: 30 days ago)")
	fs.Func("restate-days", "days pulled again on every run (default 3)", func(v string) error { in.RestateDays = quantity.Text(v); return nil })
	fs.StringVar(&in.Data, "data", "", "costs (the bill, default) or usage (tokens, priced with the org's prices)")
	fs.StringVar(&in.Bucket, "bucket", "", "aws-s3: the bucket the export is delivered to")
	fs.StringVar(&in.Prefix, "prefix", "", "aws-s3: the export's prefix and name (cur/my-export); azure-blob: the export's directory")
	fs.StringVar(&in.Region, "region", "", "aws-s3: the bucket's region (default us-east-1)")
	fs.StringVar(&in.EndpointURL, "endpoint-url", "", "aws-s3: an S3-compatible server instead of AWS; azure-blob: the blob service's URL (Azurite, another cloud)")
	fs.StringVar(&in.AccessKeyID, "access-key-id", "", "aws-s3: an access key id (required unless CONNECTIONS_ALLOW_HOST_CREDENTIALS=1 lends the host's credential chain)")
	fs.StringVar(&a.secretFile, "secret-access-key-file", "", "aws-s3: a file holding the secret access key, or - for standard input")
	fs.StringVar(&in.Account, "account", "", "azure-blob: the storage account the export is delivered to")
	fs.StringVar(&in.Container, "container", "", "azure-blob: the container")
	fs.StringVar(&a.accountKeyFile, "account-key-file", "", "azure-blob: a file holding the storage account's key, or - for standard input")
	fs.StringVar(&a.sasFile, "sas-token-file", "", "azure-blob: a file holding a SAS token or SAS URL with Read and List, or - for standard input")
	fs.StringVar(&in.Table, "table", "", "gcp-bigquery: the billing export's table, project.dataset.gcp_billing_export_v1_…")
	fs.StringVar(&a.gcpKeyFile, "service-account-file", "", "gcp-bigquery: the service account's key file (JSON), or - for standard input")
}

// input returns the connection to add with its secret read from its file
// (or standard input): the API key, or for S3 the secret access key when
// one is given.
func (a connectionAdd) input(stdin io.Reader) (connect.Input, error) {
	in := a.in
	var err error
	switch {
	case in.Kind == connect.KindS3 && a.secretFile != "":
		in.SecretAccessKey, err = readSecret(stdin, "secret-access-key-file", a.secretFile)
	case in.Kind == connect.KindS3:
	case in.Kind == connect.KindGCP && a.gcpKeyFile == "":
		err = errors.New("connection add: --service-account-file is required (- reads the key from standard input)")
	case in.Kind == connect.KindGCP:
		in.ServiceAccountJSON, err = readSecret(stdin, "service-account-file", a.gcpKeyFile)
	case in.Kind == connect.KindAzure:
		if a.accountKeyFile != "" {
			if in.AccountKey, err = readSecret(stdin, "account-key-file", a.accountKeyFile); err != nil {
				return in, err
			}
		}
		if a.sasFile != "" {
			in.SASToken, err = readSecret(stdin, "sas-token-file", a.sasFile)
		}
	case a.keyFile == "":
		err = errors.New("connection add: --api-key-file is required (- reads the key from standard input)")
	default:
		in.APIKey, err = readSecret(stdin, "api-key-file", a.keyFile)
	}
	return in, err
}

// readSecret returns the secret in file name (- for standard input), which
// flag named.
func readSecret(stdin io.Reader, flag, name string) (string, error) {
	var b []byte
	var err error
	if name == "-" {
		b, err = io.ReadAll(io.LimitReader(stdin, 16<<10)) // a service account's key is a few KB of JSON
	} else {
		b, err = os.ReadFile(name)
	}
	if err != nil {
		return "", fmt.Errorf("connection: --%s: %w", flag, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// connectionCommand is one 'burnrate connection' subcommand on one org.
type connectionCommand struct {
	st     *store.Store
	svc    *connect.Service
	org    store.Org
	sub    string
	fs     *flag.FlagSet
	asJSON bool
	stdout io.Writer
}

func (cc connectionCommand) add(ctx context.Context, a connectionAdd, stdin io.Reader) error {
	in, err := a.input(stdin)
	if err != nil {
		return err
	}
	var c store.Connection
	err = cc.st.Fenced(ctx, cc.org.ID, 0, func(st *store.Store) error {
		c, err = cc.svc.Create(ctx, st, cc.org.ID, 0, in)
		return err
	})
	if err != nil {
		return fmt.Errorf("connection add: %w", err)
	}
	return cc.saved(c, "added")
}

// saved says c was saved with its key (done: "added", "has a new key") and
// when it is pulled, or prints it as JSON.
func (cc connectionCommand) saved(c store.Connection, done string) error {
	if cc.asJSON {
		return json.NewEncoder(cc.stdout).Encode(connect.ViewOf(c))
	}
	fmt.Fprintf(cc.stdout, "connection %q %s (key %s); a worker pulls it within %s, or run: burnrate connection sync --org %s %q\n",
		c.Name, done, c.SecretHint, connect.ScheduleEvery, cc.org.Slug, c.Name)
	return nil
}

// key replaces the named connection's credentials (a revoked key's fix)
// with those read from the files given, and says when it is pulled.
func (cc connectionCommand) key(ctx context.Context, a connectionAdd, stdin io.Reader) error {
	c, err := cc.named(ctx)
	if err != nil {
		return err
	}
	a.in.Kind = c.Kind
	in, err := a.input(stdin)
	if err != nil {
		return err
	}
	err = cc.st.Fenced(ctx, cc.org.ID, 0, func(st *store.Store) error {
		c, err = cc.svc.ReplaceKey(ctx, st, cc.org.ID, c.ID, in)
		return err
	})
	if err != nil {
		return fmt.Errorf("connection key: %w", err)
	}
	return cc.saved(c, "has a new key")
}

func (cc connectionCommand) list(ctx context.Context) error {
	cs, err := cc.st.Connections(ctx, cc.org.ID)
	if err != nil {
		return err
	}
	views := make([]connect.View, 0, len(cs))
	for _, c := range cs {
		views = append(views, connect.ViewOf(c))
	}
	if cc.asJSON {
		return json.NewEncoder(cc.stdout).Encode(views)
	}
	for _, v := range views {
		last := "never run"
		if v.LastRunAt != nil {
			last = fmt.Sprintf("last run %s: %s, %d rows", v.LastRunAt.UTC().Format(time.DateTime), v.LastStatus, v.LastRows)
			if v.LastBytesBilled != nil {
				last += ", " + quantity.FormatBytes(*v.LastBytesBilled) + " billed by BigQuery"
			}
			if v.LastError != "" {
				last += ": " + v.LastError
			}
			if v.LastFix != "" {
				last += " — " + v.LastFix
			}
		}
		state := "paused"
		if v.NextRunAt != nil {
			state = "next run " + v.NextRunAt.UTC().Format(time.DateTime)
		}
		fmt.Fprintf(cc.stdout, "%s\t%s\t%s\t%s\n", v.Name, v.Kind, state, last)
	}
	return nil
}

func (cc connectionCommand) sync(ctx context.Context) error {
	c, err := cc.named(ctx)
	if err != nil {
		return err
	}
	res, err := cc.svc.Sync(ctx, cc.org.ID, c.ID)
	if cc.asJSON {
		_ = json.NewEncoder(cc.stdout).Encode(res)
	} else {
		for _, ir := range res.Imports {
			if ir.Duplicate {
				fmt.Fprintf(cc.stdout, "%s: nothing new (same as import %d)\n", ir.FileName, ir.ID)
				continue
			}
			fmt.Fprintf(cc.stdout, "%s: %s, %d rows (replaced %d; import %d)\n", ir.FileName, ir.Source, ir.Rows, ir.ReplacedRows, ir.ID)
		}
		if err == nil && len(res.Imports) == 0 {
			fmt.Fprintln(cc.stdout, "nothing new")
		}
	}
	if err != nil {
		return fmt.Errorf("connection sync %s: %w", c.Name, err)
	}
	return nil
}

func (cc connectionCommand) delete(ctx context.Context) error {
	c, err := cc.named(ctx)
	if err != nil {
		return err
	}
	if err := cc.st.DeleteConnection(ctx, cc.org.ID, c.ID); err != nil {
		return err
	}
	fmt.Fprintf(cc.stdout, "connection %q deleted; what it imported stays\n", c.Name)
	return nil
}

// named returns the one connection the subcommand's argument names.
func (cc connectionCommand) named(ctx context.Context) (store.Connection, error) {
	if cc.fs.NArg() != 1 {
		return store.Connection{}, errors.New("connection " + cc.sub + ": name one connection\n" + connectionUsage)
	}
	c, err := cc.st.ConnectionByName(ctx, cc.org.ID, cc.fs.Arg(0))
	if errors.Is(err, store.ErrNotFound) {
		return c, fmt.Errorf("connection %s: the org has no connection named %q", cc.sub, cc.fs.Arg(0))
	}
	return c, err
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
	oldKey, err := seal.ParseKey("SECRET_KEY_OLD", old)
	if errors.Is(err, seal.ErrNoKey) {
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
