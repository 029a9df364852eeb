package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/burnrate/burnrate/migrations"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

func TestMain(m *testing.M) {
	// The test binary doubles as a "burnrate serve" child, for tests that
	// kill the process (see startServeChild).
	if os.Getenv(childEnv) == "serve" {
		if err := run(context.Background(), []string{"serve"}, os.Getenv, io.Discard, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "serve:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	storetest.Main(m)
}

func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func TestConfigReportsEveryProblemAtOnce(t *testing.T) {
	t.Parallel()
	_, err := loadConfig(env(map[string]string{
		"DATABASE_URL":      "mysql://nope",
		"LOG_LEVEL":         "loud",
		"LOG_FORMAT":        "xml",
		"BASE_URL":          "localhost:8080",
		"MAX_UPLOAD_MB":     "-1",
		"STRIPE_SECRET_KEY": "sk_test_x",
	}))
	if err == nil {
		t.Fatal("bad config accepted")
	}
	for _, want := range []string{"DATABASE_URL", "LOG_LEVEL", "LOG_FORMAT", "BASE_URL", "MAX_UPLOAD_MB", "STRIPE_WEBHOOK_SECRET"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("config error does not mention %s:\n%v", want, err)
		}
	}
}

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != ":8080" || cfg.BaseURL != "http://localhost:8080" || cfg.DatabaseURL != "" || !cfg.RunMigrations || cfg.MaxUploadBytes != 512<<20 {
		t.Fatalf("defaults = %+v", cfg)
	}
}

func TestOrgCreate(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t)
	var out bytes.Buffer
	err := run(context.Background(), []string{"org", "create", "--name", "Script Co", "--owner-email", "ops@example.com", "--json"},
		env(map[string]string{"DATABASE_URL": url, "LOG_LEVEL": "error"}), &out, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Slug          string `json:"slug"`
		APIToken      string `json:"api_token"`
		OwnerPassword string `json:"owner_password"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if got.Slug != "script-co" || !strings.HasPrefix(got.APIToken, store.APITokenPrefix) || got.OwnerPassword == "" {
		t.Fatalf("org create printed %s", out.String())
	}
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tok, _, err := st.APITokenBySecret(context.Background(), got.APIToken)
	if err != nil {
		t.Fatalf("the printed token does not work: %v", err)
	}
	org, _ := st.OrgBySlug(context.Background(), "script-co")
	if tok.OrgID != org.ID {
		t.Fatal("token is for another org")
	}

	// A second org for the same owner reuses the user.
	out.Reset()
	if err := run(context.Background(), []string{"org", "create", "--name", "Script Co", "--owner-email", "ops@example.com"},
		env(map[string]string{"DATABASE_URL": url, "LOG_LEVEL": "error"}), &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "script-co-2") || strings.Contains(out.String(), "password") {
		t.Fatalf("second org create printed %q", out.String())
	}
}

func TestMigrateVersion(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t)
	var out bytes.Buffer
	if err := run(context.Background(), []string{"migrate", "version"}, env(map[string]string{"DATABASE_URL": url}), &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "version: ") || strings.Contains(out.String(), "dirty: true") {
		t.Fatalf("migrate version printed %q", out.String())
	}
}

func TestImportCommand(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t)
	e := env(map[string]string{"DATABASE_URL": url, "LOG_LEVEL": "error"})
	var out bytes.Buffer
	if err := run(context.Background(), []string{"org", "create", "--name", "Importers", "--owner-email", "imp@example.com"}, e, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	err := run(context.Background(), []string{"import", "--org", "importers", "--json",
		"../../ingest/testdata/exports/aws/test_cur.csv", "../../ingest/testdata/llm/LiteLLM_SpendLogs.csv.gz",
		"../../ingest/testdata/parquet/cur2_data_export.parquet"}, e, &out, &bytes.Buffer{})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	dec := json.NewDecoder(&out)
	for _, want := range []string{"aws-cur", "litellm-spend", "aws-cur2"} {
		var res struct {
			Source string `json:"source"`
			Rows   int    `json:"rows"`
		}
		if err := dec.Decode(&res); err != nil || res.Source != want || res.Rows == 0 {
			t.Fatalf("result = %+v, %v; want %s rows", res, err, want)
		}
	}
	out.Reset()
	err = run(context.Background(), []string{"import", "--org", "importers", "../../ingest/testdata/exports/azure/empty_frame.csv"}, e, &out, &bytes.Buffer{})
	if err == nil || !strings.Contains(out.String(), "FAILED") {
		t.Fatalf("empty file: err = %v, out = %q", err, out.String())
	}
	err = run(context.Background(), []string{"import", "--org", "nobody", "x.csv"}, e, &out, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), `no org with slug "nobody"`) {
		t.Fatalf("unknown org: %v", err)
	}
}

// TestMigrateDownAndUp runs every down migration and every up migration
// again, so that the down files stay true to the up files, and checks that
// River's tables go and come back with the app's: migrated all the way
// down, the database holds nothing of Burnrate.
func TestMigrateDownAndUp(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t)
	e := env(map[string]string{"DATABASE_URL": url})
	latest, err := migrations.Latest()
	if err != nil {
		t.Fatal(err)
	}
	ups, err := fs.Glob(migrations.FS, "*.up.sql")
	if err != nil {
		t.Fatal(err)
	}
	riverTables := func() []string {
		t.Helper()
		conn, err := pgx.Connect(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		rows, _ := conn.Query(context.Background(), `
			SELECT relname::text FROM pg_class
			WHERE relname LIKE 'river\_%' AND relkind = 'r' ORDER BY relname`)
		names, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return names
	}
	wantRiver := []string{"river_job", "river_leader", "river_migration", "river_notification", "river_queue"}
	if got := riverTables(); !slices.Equal(got, wantRiver) {
		t.Fatalf("River's tables after migrate up = %v, want %v", got, wantRiver)
	}

	var out bytes.Buffer
	if err := run(context.Background(), []string{"migrate", "down", "1"}, e, &out, &bytes.Buffer{}); err != nil {
		t.Fatalf("down 1: %v", err)
	}
	// The version before the latest: numbers may skip (reserved ones).
	slices.Sort(ups)
	prev, err := strconv.Atoi(strings.SplitN(ups[len(ups)-2], "_", 2)[0])
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("version: %d dirty: false\nriver: %d\n", prev, migrations.RiverLatest()); out.String() != want {
		t.Fatalf("after down 1: %q, want %q (River's tables stay while the app's schema does)", out.String(), want)
	}
	out.Reset()
	if err := run(context.Background(), []string{"migrate", "down", strconv.Itoa(len(ups) - 1)}, e, &out, &bytes.Buffer{}); err != nil {
		t.Fatalf("down: %v", err)
	}
	if want := "version: none (empty database)\nriver: none\n"; out.String() != want {
		t.Fatalf("after down all: %q, want %q", out.String(), want)
	}
	if got := riverTables(); len(got) != 0 {
		t.Fatalf("River's tables left after migrating all the way down: %v", got)
	}
	out.Reset()
	if err := run(context.Background(), []string{"migrate", "up"}, e, &out, &bytes.Buffer{}); err != nil {
		t.Fatalf("up: %v", err)
	}
	if want := fmt.Sprintf("version: %d dirty: false\nriver: %d\n", latest, migrations.RiverLatest()); out.String() != want {
		t.Fatalf("after up: %q, want %q", out.String(), want)
	}
	if got := riverTables(); !slices.Equal(got, wantRiver) {
		t.Fatalf("River's tables after down and up = %v, want %v", got, wantRiver)
	}
}

// TestCommandsShareThePrivatePostgres runs 'serve' on the embedded default
// and, while it runs, 'org create' without DATABASE_URL: the second command
// must use the cluster the first started, not fail on its locked data dir.
func TestCommandsShareThePrivatePostgres(t *testing.T) {
	t.Parallel()
	dir, err := os.MkdirTemp("", "burnrate-shared-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755) // Postgres runs as another user when tests run as root
	e := env(map[string]string{"BURNRATE_DATA_DIR": dir, "ADDR": "127.0.0.1:0", "LOG_LEVEL": "error"})

	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- run(ctx, []string{"serve"}, e, io.Discard, io.Discard) }()
	note := filepath.Join(dir, "running-url")
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(note); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("serve did not start its private Postgres: %v", <-served)
		}
		time.Sleep(100 * time.Millisecond)
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"org", "create", "--name", "Shared", "--owner-email", "s@example.com"}, e, &out, io.Discard); err != nil {
		t.Fatalf("org create beside a running serve: %v", err)
	}
	if !strings.Contains(out.String(), "shared") {
		t.Fatalf("org create printed %q", out.String())
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("serve: %v", err)
	}
	if _, err := os.Stat(note); !os.IsNotExist(err) {
		t.Fatalf("the note of the running cluster outlived it: %v", err)
	}
}

// TestServeRefusesAnOutdatedSchema: with RUN_MIGRATIONS=0, serve refuses a
// database whose River schema is behind the binary's, as it does one whose
// app schema is, and 'migrate up' brings it level.
func TestServeRefusesAnOutdatedSchema(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t)
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	// As if the database had been migrated by a binary with an older River.
	if _, err := conn.Exec(context.Background(), `DELETE FROM river_migration WHERE version = $1`, migrations.RiverLatest()); err != nil {
		t.Fatal(err)
	}
	e := env(map[string]string{"DATABASE_URL": url, "RUN_MIGRATIONS": "0", "ADDR": "127.0.0.1:0", "LOG_LEVEL": "error"})
	err = run(context.Background(), []string{"serve"}, e, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "run 'burnrate migrate up'") {
		t.Fatalf("serve on an outdated River schema: %v", err)
	}
	if err := run(context.Background(), []string{"migrate", "up"}, e, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := checkSchema(url); err != nil {
		t.Fatalf("after migrate up: %v", err)
	}
}
