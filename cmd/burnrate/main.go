// Command burnrate is the whole of Burnrate in one binary: the web app and
// its subcommands for scripts (see usage).
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
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/burnrate/burnrate/jobs"
	"github.com/burnrate/burnrate/migrations"
	"github.com/burnrate/burnrate/pgcluster"
	"github.com/burnrate/burnrate/store"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

const usage = `Burnrate: what your team spends on GPUs and LLM APIs, against budgets.

Usage: burnrate <command> [flags]

Commands:
  serve                      run the web app on ADDR (default :8080), and background jobs
  worker                     run background jobs only (digests, alerts, mail, cleanup)
  migrate up|down N|version  manage the database schema
  org create --name NAME --owner-email EMAIL [--password P] [--json]
                             create an org and print its slug and an API token
  org plan --org SLUG [--set free|team|business] [--json]
                             show an org's plan and its use, or set the plan
  org delete --org SLUG --yes
                             delete an org and all of its data
  import --org SLUG [--source NAME] [--json] FILE...
                             import billing exports / LLM usage logs (CSV, .csv.gz or Parquet)
  imports list|delete --org SLUG [--json] [ID]
                             the import history, or remove an import and its rows
  advise --job JOB (--model NAME | --params N) [--precision bf16] [--tokens N]
         [--seq-len N] [--spot] [--gpu NAME] [--provider NAME] [--mfu F] [--json]
                             the cheapest GPU configuration for a job
  breakeven --model NAME --input-tokens N --output-tokens N [--cached-tokens N]
         [--gpu NAME] [--gpu-price USD] [--throughput N] [--utilization F] [--json]
                             LLM API vs self-hosted GPUs for a monthly volume
  digest --org SLUG [--date YYYY-MM-DD] [--send [--when over|always]] [--json]
                             an org's daily digest of one day (default yesterday),
                             printed, or delivered once with --send
  savings --org SLUG [--share PERCENT] [--commit-discount PERCENT] [--json]
                             savings found in an org's bills, with the evidence
  connection add|list|sync|delete --org SLUG …
                             pull spend from provider APIs on a schedule
                             ('burnrate connection' for its usage)
  secrets rotate             re-encrypt connections' credentials from
                             SECRET_KEY_OLD to SECRET_KEY
  citus distribute           distribute the tables by org on a Citus cluster
                             (DATABASE_URL: the coordinator's database)
  demo [--email E] [--password P]
                             create a demo org with 90 days of generated spend and budgets

advise and breakeven use the shipped prices and need no database unless given
--org SLUG (the org's own prices). Every other command reads DATABASE_URL; without it, Burnrate starts its own private
Postgres under ./.burnrate (BURNRATE_DATA_DIR). Run 'burnrate <command> -h'
for a command's flags.
`

// gcPercent is the garbage collector's GOGC when the environment sets
// none. A cold dashboard view allocates a few megabytes and keeps almost
// none of it, while the caches keep tens; at Go's default of 100 the
// collector marks them every few views, a fifth of the server's CPU, and
// four views at once on two cores wait on it. 200 halves that for a
// third more memory (docs/operations.md, "Configuration", has the figures).
const gcPercent = 200

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "burnrate:", err)
		}
		os.Exit(1)
	}
}

// run is main without the process: tests call it with their own arguments,
// environment and output.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, usage)
		return nil
	}
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	log := newLogger(cfg, stderr)
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		return runServe(ctx, cfg, log, rest)
	case "worker":
		return runWorker(ctx, cfg, log, rest)
	case "migrate":
		return runMigrate(ctx, cfg, log, rest, stdout)
	case "org":
		return runOrg(ctx, cfg, log, rest, stdout)
	case "import":
		return runImport(ctx, cfg, log, rest, stdout)
	case "imports":
		return runImports(ctx, cfg, log, rest, stdout)
	case "advise":
		return runAdvise(ctx, cfg, log, rest, stdout)
	case "breakeven":
		return runBreakEven(ctx, cfg, log, rest, stdout)
	case "digest":
		return runDigest(ctx, cfg, log, rest, stdout)
	case "savings":
		return runSavings(ctx, cfg, log, rest, stdout)
	case "demo":
		return runDemo(ctx, cfg, log, rest, stdout)
	case "connection":
		return runConnection(ctx, cfg, log, rest, os.Stdin, stdout)
	case "secrets":
		return runSecrets(ctx, cfg, log, rest, getenv, stdout)
	case "citus":
		return runCitus(ctx, cfg, log, rest, stdout)
	case "version":
		fmt.Fprintln(stdout, version)
		return nil
	}
	return fmt.Errorf("unknown command %q\n\n%s", cmd, usage)
}

// database is an open store and what it takes to close it: with
// DATABASE_URL unset, that includes stopping the private cluster.
type database struct {
	url   string
	store *store.Store
	stop  func() // stops the private cluster this process started, if any
}

// openDatabase connects to DATABASE_URL, or starts the private cluster, and
// applies migrations when allowed (always for the private cluster, which
// nobody else manages).
func openDatabase(ctx context.Context, cfg Config, log *slog.Logger, migrate bool) (*database, error) {
	return openDatabaseWith(ctx, cfg, log, migrate, store.Options{})
}

// openDatabaseWith is openDatabase with the pool's options (a long-running
// process's).
func openDatabaseWith(ctx context.Context, cfg Config, log *slog.Logger, migrate bool, opts store.Options) (*database, error) {
	db := &database{url: cfg.DatabaseURL}
	if db.url == "" {
		url, stop, err := privatePostgres(ctx, cfg, log)
		if err != nil {
			return nil, err
		}
		db.url, db.stop = url, stop
		migrate = true
	}
	if migrate {
		if err := migrations.Up(db.url); err != nil {
			db.close()
			return nil, err
		}
	} else if err := checkSchema(db.url); err != nil {
		db.close()
		return nil, err
	}
	st, err := store.OpenWith(ctx, db.url, opts)
	if err != nil {
		db.close()
		return nil, err
	}
	db.store = st
	// Imports a crashed process left processing are failed by whichever
	// process starts next; those another live process runs are left alone.
	// A failure to sweep is logged, not fatal: the sweep job tries again.
	if err := jobs.SweepInterruptedImports(ctx, st, log); err != nil && ctx.Err() == nil {
		log.Warn("cannot look for interrupted imports", slog.Any("error", err))
	}
	return db, nil
}

// openOrg opens the database, as openDatabase does, and finds the org slug
// names, for the subcommands that work on one org. A missing org is an
// errNoOrg prefixed by cmd ("digest: no org with slug …"); on any error the
// database is closed again.
func openOrg(ctx context.Context, cfg Config, log *slog.Logger, cmd, slug string) (*database, store.Org, error) {
	db, err := openDatabase(ctx, cfg, log, cfg.RunMigrations)
	if err != nil {
		return nil, store.Org{}, err
	}
	org, err := db.store.OrgBySlug(ctx, slug)
	if errors.Is(err, store.ErrNotFound) {
		err = fmt.Errorf("%s: %w", cmd, errNoOrg(slug))
	}
	if err != nil {
		db.close()
		return nil, store.Org{}, err
	}
	return db, org, nil
}

// errNoOrg is the slug of an org that does not exist.
type errNoOrg string

func (e errNoOrg) Error() string { return fmt.Sprintf("no org with slug %q", string(e)) }

// printJSON writes v as indented JSON, the --json output of the commands
// whose answer is one document.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// privatePostgres is the embedded default: a Postgres cluster of Burnrate's
// own under DataDir, from the machine's server binaries. When another live
// burnrate process runs it ('make run' in one terminal, 'burnrate demo' in
// another), this one connects to that cluster instead; otherwise it starts
// the cluster, supervised (restarted if it dies), and notes its URL in
// DataDir for the others. stop stops what this process started.
//
// The data directory's lock tells a live owner from a dead one (the kernel
// drops it with its process): a cluster left running by a burnrate process
// that was killed is taken over by the next one, which stops it on exit,
// rather than shared with an owner that is gone.
func privatePostgres(ctx context.Context, cfg Config, log *slog.Logger) (url string, stop func(), err error) {
	note := filepath.Join(cfg.DataDir, "running-url")
	dir := filepath.Join(cfg.DataDir, "pg")
	log.Info("DATABASE_URL is not set: using a private Postgres", slog.String("data_dir", dir))
	c, err := pgcluster.Start(ctx, pgcluster.Options{DataDir: dir, Log: log, Supervise: true})
	if errors.Is(err, pgcluster.ErrInUse) {
		url, err := sharedPostgres(ctx, note)
		if err != nil {
			return "", nil, err
		}
		log.Info("using the private Postgres another burnrate process runs", slog.String("data_dir", dir))
		return url, func() {}, nil
	}
	if err != nil {
		return "", nil, fmt.Errorf("start the private Postgres (or set DATABASE_URL): %w", err)
	}
	if err := os.WriteFile(note, []byte(c.URL()+"\n"), 0o600); err != nil {
		log.Warn("cannot note the private Postgres's address for other burnrate commands", slog.Any("error", err))
	}
	return c.URL(), func() {
		os.Remove(note)
		// The signal context is done by now; stopping needs a fresh one.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = c.Stop(ctx)
	}, nil
}

// sharedPostgresWait is how long a command waits for the private Postgres
// that another burnrate process owns to answer: that process may be
// starting it, or starting it again after it died.
const sharedPostgresWait = 30 * time.Second

// sharedPostgres returns the URL, noted by its owner, of the private Postgres
// another live burnrate process runs, once it answers.
func sharedPostgres(ctx context.Context, note string) (string, error) {
	deadline := time.Now().Add(sharedPostgresWait)
	for {
		b, err := os.ReadFile(note)
		if u := strings.TrimSpace(string(b)); err == nil && store.Answers(ctx, u) {
			return u, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return "", fmt.Errorf("the private Postgres in %s is run by another burnrate process, but does not answer at the address it noted in %s (waited %s)",
				filepath.Dir(note), note, sharedPostgresWait)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// checkSchema refuses to run against a database whose schema is not this
// binary's (RUN_MIGRATIONS=0 and nobody ran 'burnrate migrate up', or a
// newer binary migrated it), River's tables included.
func checkSchema(url string) error {
	st, err := migrations.StatusOf(url)
	if err != nil {
		return err
	}
	if st.Current() {
		return nil
	}
	want, err := migrations.Latest()
	if err != nil {
		return err
	}
	return fmt.Errorf("database schema is at version %d (dirty=%v), River's at %d; this binary needs %d and River's %d: run 'burnrate migrate up'",
		st.Version, st.Dirty, st.River, want, migrations.RiverLatest())
}

func (db *database) close() {
	if db.store != nil {
		db.store.Close()
	}
	if db.stop != nil {
		db.stop()
	}
}
