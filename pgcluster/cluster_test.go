package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// requireBinaries skips the test when the machine has no PostgreSQL server
// binaries; TestFindBinaries* cover that case.
func requireBinaries(t *testing.T) {
	t.Helper()
	if _, err := FindBinaries(); err != nil {
		t.Skip(err)
	}
}

// testDataDir returns a not yet existing data directory under t.TempDir().
// As root the server runs as an unprivileged user, which must be able to
// traverse every parent directory. The testing package makes the per-test
// directory that holds all of a test's TempDirs (/tmp/TestName123) 0700 with
// os.MkdirTemp (each TempDir inside it is 0755), so open that one up to 0755.
func testDataDir(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	if os.Geteuid() == 0 {
		if err := os.Chmod(filepath.Dir(base), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(base, "pg")
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// start starts a cluster and registers its Stop as a cleanup.
func start(t *testing.T, opts Options) *Cluster {
	t.Helper()
	if opts.Log == nil {
		opts.Log = testLogger(t)
	}
	c, err := Start(testCtx(t), opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Stop(context.Background()); err != nil {
			t.Errorf("Stop in cleanup: %v", err)
		}
	})
	return c
}

func connect(t *testing.T, ctx context.Context, connString string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(ctx, connString)
	if err != nil {
		t.Fatalf("connect %s: %v", connString, err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func show(t *testing.T, ctx context.Context, conn *pgx.Conn, setting string) string {
	t.Helper()
	var v string
	if err := conn.QueryRow(ctx, "SHOW "+setting).Scan(&v); err != nil {
		t.Fatalf("SHOW %s: %v", setting, err)
	}
	return v
}

// waitGone waits for a process to exit.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for processState(pid) != procGone {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still running", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func postmasterPID(t *testing.T, dataDir string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func TestStartConnectStopRestartReusesData(t *testing.T) {
	requireBinaries(t)
	ctx := testCtx(t)
	dir := testDataDir(t)

	c := start(t, Options{DataDir: dir})
	if c.Port() <= 0 {
		t.Fatalf("Port() = %d", c.Port())
	}
	if want := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/burnrate?sslmode=disable", c.Port()); c.URL() != want {
		t.Errorf("URL() = %q, want %q", c.URL(), want)
	}
	if want := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.Port()); c.AdminURL() != want {
		t.Errorf("AdminURL() = %q, want %q", c.AdminURL(), want)
	}
	if c.DataDir() != dir {
		t.Errorf("DataDir() = %q, want %q", c.DataDir(), dir)
	}

	conn := connect(t, ctx, c.URL())
	var db, user, enc string
	if err := conn.QueryRow(ctx, "SELECT current_database(), current_user, pg_encoding_to_char(encoding) FROM pg_database WHERE datname = current_database()").Scan(&db, &user, &enc); err != nil {
		t.Fatal(err)
	}
	if db != "burnrate" || user != "postgres" || enc != "UTF8" {
		t.Errorf("got database %q user %q encoding %q, want burnrate postgres UTF8", db, user, enc)
	}
	if got := show(t, ctx, conn, "listen_addresses"); got != "127.0.0.1" {
		t.Errorf("listen_addresses = %q", got)
	}
	if got := show(t, ctx, conn, "fsync"); got != "on" {
		t.Errorf("fsync = %q for a non-ephemeral cluster", got)
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('survives restart')"); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	if os.Geteuid() == 0 {
		fi, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if uid := fi.Sys().(*syscall.Stat_t).Uid; uid == 0 {
			t.Errorf("data dir owned by root; want the unprivileged server user")
		}
	}

	pid := postmasterPID(t, dir)
	if err := c.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	waitGone(t, pid)
	if _, err := os.Stat(filepath.Join(dir, "postmaster.pid")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("postmaster.pid after Stop: %v", err)
	}
	if _, err := pgx.Connect(ctx, c.URL()); err == nil {
		t.Errorf("connect after Stop succeeded")
	}
	if err := c.Stop(ctx); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("persistent data dir gone after Stop: %v", err)
	}

	// Same data dir again: no initdb, the table is still there.
	c2 := start(t, Options{DataDir: dir})
	conn2 := connect(t, ctx, c2.URL())
	var v string
	if err := conn2.QueryRow(ctx, "SELECT v FROM kept").Scan(&v); err != nil {
		t.Fatalf("reading data written before restart: %v", err)
	}
	if v != "survives restart" {
		t.Errorf("got %q", v)
	}
	if _, err := os.Stat(filepath.Join(dir, logFileName+".1")); err != nil {
		t.Errorf("previous run's log not kept: %v", err)
	}
}

func TestEphemeralTempDirAndCustomDatabase(t *testing.T) {
	requireBinaries(t)
	ctx := testCtx(t)
	c := start(t, Options{Ephemeral: true, Database: "Odd-Name db"})
	dir := c.DataDir()
	if !filepath.IsAbs(dir) {
		t.Fatalf("DataDir() = %q", dir)
	}
	conn := connect(t, ctx, c.URL())
	for setting, want := range map[string]string{
		"fsync":              "off",
		"synchronous_commit": "off",
		"full_page_writes":   "off",
		"listen_addresses":   "127.0.0.1",
	} {
		if got := show(t, ctx, conn, setting); got != want {
			t.Errorf("%s = %q, want %q", setting, got, want)
		}
	}
	var db string
	if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&db); err != nil {
		t.Fatal(err)
	}
	if db != "Odd-Name db" {
		t.Errorf("current_database() = %q", db)
	}
	// The unix socket is in the data dir (short path).
	if got := show(t, ctx, conn, "unix_socket_directories"); got != dir {
		t.Errorf("unix_socket_directories = %q, want %q", got, dir)
	}
	sock := connect(t, ctx, fmt.Sprintf("host=%s port=%d user=postgres dbname=postgres", dir, c.Port()))
	if err := sock.Ping(ctx); err != nil {
		t.Errorf("ping over unix socket: %v", err)
	}
	conn.Close(ctx)
	sock.Close(ctx)

	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("temporary data dir still there after Stop: %v", err)
	}
}

func TestLongDataDirUsesTemporarySocketDir(t *testing.T) {
	requireBinaries(t)
	ctx := testCtx(t)
	dir := filepath.Join(testDataDir(t), strings.Repeat("d", 100))
	if socketPathFits(dir) {
		t.Fatalf("test data dir %q is not long enough", dir)
	}
	c := start(t, Options{DataDir: dir, Ephemeral: true})
	if c.sockDir == "" || c.sockDir == dir || !c.tmpSock {
		t.Fatalf("sockDir = %q (tmp %v)", c.sockDir, c.tmpSock)
	}
	connect(t, ctx, c.URL())
	conn := connect(t, ctx, fmt.Sprintf("host=%s port=%d user=postgres dbname=burnrate", c.sockDir, c.Port()))
	if err := conn.Ping(ctx); err != nil {
		t.Errorf("ping over unix socket: %v", err)
	}
	conn.Close(ctx)
	sockDir := c.sockDir
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sockDir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("temporary socket dir still there after Stop: %v", err)
	}
}

// A process that died without Stop leaves its postmaster running; the next
// Start on the data dir must stop it and start afresh, keeping the data.
func TestLeftoverPostmasterFromCrashedRunIsReplaced(t *testing.T) {
	requireBinaries(t)
	ctx := testCtx(t)
	dir := testDataDir(t)

	c, err := Start(ctx, Options{DataDir: dir, Ephemeral: true, Log: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	conn := connect(t, ctx, c.URL())
	if _, err := conn.Exec(ctx, "CREATE TABLE t AS SELECT 42 AS v"); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	oldPID, oldURL := postmasterPID(t, dir), c.URL()
	c.lock.Close() // what the kernel does when the process dies

	c2 := start(t, Options{DataDir: dir, Ephemeral: true})
	waitGone(t, oldPID)
	if newPID := postmasterPID(t, dir); newPID == oldPID {
		t.Errorf("postmaster PID unchanged (%d): the leftover was reused, not replaced", oldPID)
	}
	if _, err := pgx.Connect(ctx, oldURL); err == nil && oldURL != c2.URL() {
		t.Errorf("old server still answers at %s", oldURL)
	}
	conn2 := connect(t, ctx, c2.URL())
	var v int
	if err := conn2.QueryRow(ctx, "SELECT v FROM t").Scan(&v); err != nil || v != 42 {
		t.Errorf("data after replacing leftover: v=%d err=%v", v, err)
	}
}

func TestSecondStartOnRunningDataDirFails(t *testing.T) {
	requireBinaries(t)
	dir := testDataDir(t)
	c := start(t, Options{DataDir: dir, Ephemeral: true})
	_, err := Start(testCtx(t), Options{DataDir: dir, Ephemeral: true})
	if err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("second Start on %s: err = %v, want 'in use'", dir, err)
	}
	// And the first one was left alone.
	conn := connect(t, testCtx(t), c.URL())
	if err := conn.Ping(testCtx(t)); err != nil {
		t.Errorf("first cluster broken by the second Start: %v", err)
	}
}

func TestStartFailureIncludesLogTail(t *testing.T) {
	requireBinaries(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port

	dir := testDataDir(t)
	_, err = Start(testCtx(t), Options{DataDir: dir, Port: port, Ephemeral: true, Log: testLogger(t)})
	if err == nil {
		t.Fatal("Start on a taken port succeeded")
	}
	msg := err.Error()
	for _, want := range []string{"could not bind", logFileName, strconv.Itoa(port)} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	// The lock was released: the dir can be started once the port is free.
	l.Close()
	start(t, Options{DataDir: dir, Port: port, Ephemeral: true})
}

func TestRootUnreachableDataDirHasClearError(t *testing.T) {
	requireBinaries(t)
	if os.Geteuid() != 0 {
		t.Skip("only root runs the server as another user")
	}
	// t.TempDir()'s parent is 0700 root: the server user cannot traverse it.
	base := t.TempDir()
	dir := filepath.Join(base, "pg")
	_, err := Start(testCtx(t), Options{DataDir: dir, Log: testLogger(t)})
	if err == nil {
		t.Fatal("Start succeeded in an untraversable directory")
	}
	msg := err.Error()
	for _, want := range []string{"not traversable", "directory " + filepath.Dir(base) + " ", "chmod o+x", dir} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q: %s", want, msg)
		}
	}
	t.Log(msg)
}

func TestFindBinariesMissing(t *testing.T) {
	setSearch(t, t.TempDir(), nil)
	dir, err := FindBinaries()
	if !errors.Is(err, ErrBinariesNotFound) {
		t.Fatalf("FindBinaries() = %q, %v; want ErrBinariesNotFound", dir, err)
	}
	const want = "PostgreSQL server binaries (initdb, pg_ctl) not found on PATH or in /usr/lib/postgresql/*/bin: install them (Debian/Ubuntu: apt-get install postgresql; macOS: brew install postgresql@16) or set DATABASE_URL to an existing database"
	if err.Error() != want {
		t.Errorf("message:\n got %s\nwant %s", err, want)
	}
	_, err = Start(testCtx(t), Options{DataDir: filepath.Join(t.TempDir(), "pg")})
	if !errors.Is(err, ErrBinariesNotFound) {
		t.Errorf("Start without binaries: %v", err)
	}
}

func TestFindBinariesSearchOrder(t *testing.T) {
	root := t.TempDir()
	mk := func(dir string, names ...string) string {
		d := filepath.Join(root, dir)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if err := os.WriteFile(filepath.Join(d, n), []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	all := []string{"initdb", "pg_ctl", "postgres"}
	lib := filepath.Join(root, "lib", "postgresql", "*", "bin")
	mk("lib/postgresql/9.6/bin", all...)
	v10 := mk("lib/postgresql/10/bin", all...)
	mk("lib/postgresql/17/bin", "initdb", "pg_ctl") // incomplete: no postgres
	local := mk("local/pgsql/bin", all...)
	incompletePath := mk("path1", "initdb")
	fullPath := mk("path2", all...)
	if err := os.WriteFile(filepath.Join(root, "path3"), nil, 0o644); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name  string
		path  string
		globs []string
		want  string
	}{
		{"PATH first", incompletePath + ":" + fullPath, []string{lib}, fullPath},
		{"newest complete version", incompletePath, []string{lib, local}, v10},
		{"later glob", "", []string{filepath.Join(root, "none", "*"), local}, local},
		{"relative PATH entries ignored", "path2", []string{local}, local},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			setSearch(t, tc.path, tc.globs)
			got, err := FindBinaries()
			if err != nil || got != tc.want {
				t.Errorf("FindBinaries() = %q, %v; want %q", got, err, tc.want)
			}
		})
	}

	// A PATH entry holding only a symlinked initdb leads to its real dir.
	linkDir := mk("links")
	if err := os.Symlink(filepath.Join(local, "initdb"), filepath.Join(linkDir, "initdb")); err != nil {
		t.Fatal(err)
	}
	setSearch(t, linkDir, nil)
	if got, err := FindBinaries(); err != nil || got != local {
		t.Errorf("via symlink: FindBinaries() = %q, %v; want %q", got, err, local)
	}
}

func TestSortNewestFirst(t *testing.T) {
	dirs := []string{"/usr/lib/postgresql/9.6/bin", "/usr/lib/postgresql/16/bin", "/x/latest/bin", "/usr/lib/postgresql/10/bin", "/usr/pgsql-16.2/bin"}
	sortNewestFirst(dirs)
	want := []string{"/usr/pgsql-16.2/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/10/bin", "/usr/lib/postgresql/9.6/bin", "/x/latest/bin"}
	if !slices.Equal(dirs, want) {
		t.Errorf("got %v\nwant %v", dirs, want)
	}
}

func setSearch(t *testing.T, path string, globs []string) {
	t.Helper()
	oldPath, oldGlobs := pathEnv, searchGlobs
	pathEnv = func() string { return path }
	searchGlobs = globs
	t.Cleanup(func() { pathEnv, searchGlobs = oldPath, oldGlobs })
}

// A supervised cluster whose postmaster is killed comes back by itself, on
// the same port, with its data; after Stop it stays stopped.
func TestSupervisedClusterRestartsAfterKill(t *testing.T) {
	requireBinaries(t)
	ctx := testCtx(t)
	dir := testDataDir(t)
	c := start(t, Options{DataDir: dir, Ephemeral: true, Supervise: true})
	conn := connect(t, ctx, c.URL())
	// Committed to the WAL before the kill: an ephemeral cluster commits
	// asynchronously, and a crash may lose what it has not written yet.
	if _, err := conn.Exec(ctx, "SET synchronous_commit = on; CREATE TABLE t AS SELECT 7 AS v"); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)

	for round := range 2 {
		oldPID := postmasterPID(t, dir)
		if err := syscall.Kill(oldPID, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		killed := time.Now()
		deadline := killed.Add(60 * time.Second)
		for {
			var v int
			conn, err := pgx.Connect(ctx, c.URL())
			if err == nil {
				err = conn.QueryRow(ctx, "SELECT v FROM t").Scan(&v)
				conn.Close(ctx)
			}
			if err == nil && v == 7 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: no server at %s 60 s after its postmaster was killed: %v\n%s", round, c.URL(), err, readTail(filepath.Join(dir, logFileName), 20))
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("round %d: answering again %s after kill -9", round, time.Since(killed).Round(time.Millisecond))
		if newPID := postmasterPID(t, dir); newPID == oldPID || processState(newPID) != procPostgres {
			t.Fatalf("round %d: postmaster %d after killing %d", round, newPID, oldPID)
		}
	}

	pid := postmasterPID(t, dir)
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
	time.Sleep(3 * superviseEvery)
	if _, err := os.Stat(filepath.Join(dir, "postmaster.pid")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a server runs in %s after Stop: %v", dir, err)
	}
}
