// Package pgcluster starts and stops a private PostgreSQL cluster from the
// machine's PostgreSQL server binaries (initdb, pg_ctl, postgres).
//
// It has two users: `burnrate serve` without DATABASE_URL (the "embedded
// default": a persistent cluster under ./.burnrate/pg, reused across runs, on
// a free port, stopped on exit) and the test harness (a throwaway cluster
// with durability turned off, see Options.Ephemeral).
//
// # Network exposure
//
// The cluster listens only on 127.0.0.1 (TCP) and on a unix socket in the
// data directory (or a private temporary directory when the data directory's
// path is too long for a socket path). Authentication is "trust" for every
// local connection, as user postgres: any local user of the machine can
// connect to it. That is the usual trade-off for a development database; do
// not use this package for a database that holds data other local users must
// not see.
//
// # Running as root
//
// initdb, pg_ctl and postgres refuse to run as root. When the process runs as
// root, the cluster is run as an unprivileged user instead: the owner of an
// existing, initialized data directory if that is not root, else the system
// user "postgres", else "nobody". The data directory is chowned to that user,
// directories that Start creates are made 0755, and every ancestor directory
// of the data directory must be traversable (search permission) by that
// user, or Start fails saying which directory to fix. Start does not change
// the permissions of directories it did not create. Note that os.MkdirTemp
// creates 0700 directories: pass such a directory itself as DataDir (it is
// chowned), not a subdirectory of it, or chmod it 0755; testing.T.TempDir
// returns 0755 directories inside a 0700 one, which needs chmod 0755 too.
// Leaving DataDir empty lets Start make a suitable temporary directory.
//
// # One owner per data directory; crashed runs
//
// While a Cluster is running, it holds an exclusive flock(2) on its data
// directory, so a second Start on the same directory, from this process or
// another, fails instead of fighting over it. The kernel releases the lock
// when the process dies. If Start finds a postmaster still running in the
// data directory (postmaster.pid of a live postgres process) while it could
// take the lock, that postmaster was left behind by a previous run that
// exited without calling Stop (crash, SIGKILL): Start stops it (pg_ctl stop
// -m fast, then -m immediate) and starts a fresh one with the current
// options, rather than reusing it, because the old one may listen on another
// port or on a socket directory that no longer exists. A postmaster.pid whose
// process is gone, or whose PID now belongs to a process that is not
// postgres, is stale and is removed or left for postgres to clean up.
//
// The lock is how a live owner is told from a dead one: a process whose
// Start finds the directory locked (ErrInUse) may share the running
// cluster with its live owner; one that gets the lock takes the cluster
// over from a dead one, replacing its leftover postmaster as above, and
// stops it with Stop.
//
// # Supervision
//
// With Options.Supervise, the Cluster watches its postmaster and, if it
// dies (killed, or crashed), starts it again on the same port, so that the
// owner's connection pool recovers by itself; failed attempts are retried
// with backoff, and each is logged. Stop ends the supervision before it
// stops the server.
package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// DefaultDatabase is the database Start creates when Options.Database is
// empty.
const DefaultDatabase = "burnrate"

// Superuser is the name of the cluster's superuser, as given to initdb -U.
// URL and AdminURL connect as this user, without a password.
const Superuser = "postgres"

// logFileName is pg_ctl's -l log file, kept inside the data directory. The
// previous run's log is kept as logFileName + ".1".
const logFileName = "pgcluster.log"

// startTimeout is pg_ctl's -t: how long `pg_ctl start -w` waits for the
// server to accept connections (crash recovery of a big cluster can be slow).
const startTimeout = 120 * time.Second

// Options configure Start.
type Options struct {
	// DataDir is the cluster's data directory. It is created if missing,
	// and initialized with initdb when it has no PG_VERSION file; an
	// initialized one is reused as it is. Relative paths are relative to
	// the working directory. If empty, Start creates a temporary directory,
	// which Stop removes.
	DataDir string

	// Port is the TCP port to listen on at 127.0.0.1. 0 picks a free port
	// (and retries with another one if it is taken before the server
	// binds it).
	Port int

	// Ephemeral tunes the cluster for tests, trading crash safety for
	// speed: fsync=off, synchronous_commit=off, full_page_writes=off, and
	// initdb --no-sync. Data survive a clean Stop but may be lost or
	// corrupted by an OS crash.
	Ephemeral bool

	// Log receives progress and warnings. nil discards them.
	Log *slog.Logger

	// Database is created, if missing, once the server is up. Empty means
	// DefaultDatabase.
	Database string

	// Supervise restarts the server if it dies before Stop (see the
	// package documentation). For a long-running owner such as a web
	// server.
	Supervise bool
}

// ErrInUse is returned (wrapped) by Start when another live Cluster, in this
// process or another, holds the data directory.
var ErrInUse = errors.New("in use by another cluster (another burnrate process, or another Start in this one)")

// superviseEvery is how often a supervised cluster checks its postmaster.
const superviseEvery = 500 * time.Millisecond

// Restart attempts of a supervised cluster are spaced from the first
// backoff, doubling up to the last.
const (
	firstRestartBackoff = time.Second
	maxRestartBackoff   = 30 * time.Second
)

// Cluster is a running PostgreSQL cluster started by Start. Its methods are
// safe for concurrent use.
type Cluster struct {
	binDir    string
	dataDir   string
	sockDir   string // "" when unix sockets are disabled
	tmpSock   bool   // sockDir is a temporary directory that Stop removes
	tmpData   bool   // dataDir was created by Start and Stop removes it
	port      int
	database  string
	runAs     *runAs // nil: run the binaries as this process's user
	log       *slog.Logger
	lock      io.Closer
	ephemeral bool

	pid atomic.Int64 // the postmaster's, as it last started

	// endSupervision stops the supervisor, which closes supervised on
	// its way out; both nil when the cluster is not supervised.
	endSupervision context.CancelFunc
	supervised     chan struct{}

	mu      sync.Mutex
	stopped bool
}

// Start starts a PostgreSQL cluster as described by opts and returns once it
// accepts connections and opts.Database exists. The caller must call Stop;
// a cluster left running by a process that died without it is stopped by
// the next Start on the same data directory (see the package documentation).
//
// If the server fails to start, the error includes the tail of its log.
func Start(ctx context.Context, opts Options) (_ *Cluster, err error) {
	if opts.Port < 0 || opts.Port > 65535 {
		return nil, fmt.Errorf("pgcluster: invalid port %d", opts.Port)
	}
	binDir, err := FindBinaries()
	if err != nil {
		return nil, err
	}
	c := &Cluster{
		binDir:    binDir,
		database:  opts.Database,
		log:       opts.Log,
		ephemeral: opts.Ephemeral,
	}
	if c.database == "" {
		c.database = DefaultDatabase
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}

	started := false
	defer func() {
		if err == nil {
			return
		}
		if started {
			// Don't leave a server behind, whatever ctx says.
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			_ = c.pgCtl(sctx, "stop", "-w", "-m", "immediate", "-D", c.dataDir)
			cancel()
		}
		c.release()
	}()

	if opts.DataDir == "" {
		c.dataDir, err = os.MkdirTemp("", "pgcluster-")
		if err != nil {
			return nil, fmt.Errorf("pgcluster: %w", err)
		}
		c.tmpData = true
	} else if c.dataDir, err = filepath.Abs(opts.DataDir); err != nil {
		return nil, fmt.Errorf("pgcluster: %w", err)
	}

	if c.runAs, err = pickRunAs(c.dataDir); err != nil {
		return nil, err
	}
	if c.runAs != nil {
		c.log.Debug("running PostgreSQL as an unprivileged user, since this process is root",
			"user", c.runAs.name, "uid", c.runAs.uid)
	}
	if err := c.prepareDataDir(); err != nil {
		return nil, err
	}
	if c.lock, err = lockDir(c.dataDir); err != nil {
		return nil, err
	}

	if _, err := os.Stat(filepath.Join(c.dataDir, "PG_VERSION")); errors.Is(err, fs.ErrNotExist) {
		if err := c.initdb(ctx, opts.Ephemeral); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, fmt.Errorf("pgcluster: %w", err)
	}

	if err := c.stopLeftover(ctx); err != nil {
		return nil, err
	}
	if err := c.chooseSocketDir(); err != nil {
		return nil, err
	}

	started = true // from here on, a server may be running
	if err := c.startServer(ctx, opts); err != nil {
		return nil, err
	}
	if err := c.ensureDatabase(ctx); err != nil {
		return nil, err
	}
	if err := c.notePID(); err != nil {
		return nil, err
	}
	c.log.Info("PostgreSQL started", "dir", c.dataDir, "port", c.port, "database", c.database)
	if opts.Supervise {
		var sctx context.Context
		sctx, c.endSupervision = context.WithCancel(context.Background())
		c.supervised = make(chan struct{})
		go c.supervise(sctx)
	}
	return c, nil
}

// URL returns the connection URL of the cluster's database (Options.Database)
// as the superuser, over TCP to 127.0.0.1, e.g.
// postgres://postgres@127.0.0.1:PORT/burnrate?sslmode=disable.
func (c *Cluster) URL() string { return c.urlFor(c.database) }

// AdminURL returns the connection URL of the cluster's "postgres"
// maintenance database as the superuser, for creating and dropping
// databases.
func (c *Cluster) AdminURL() string { return c.urlFor("postgres") }

func (c *Cluster) urlFor(db string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.User(Superuser),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(c.port)),
		Path:     "/" + db,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// Port returns the TCP port the cluster listens on at 127.0.0.1.
func (c *Cluster) Port() int { return c.port }

// DataDir returns the absolute path of the cluster's data directory. The
// server's log is the file pgcluster.log in it.
func (c *Cluster) DataDir() string { return c.dataDir }

// Stop shuts the cluster down (pg_ctl stop -m fast: open sessions are
// disconnected, committed data are kept) and releases the data directory;
// a temporary data directory (Options.DataDir empty) is removed. Calling
// Stop again after it succeeded does nothing. If it fails, the cluster may
// still be running and Stop may be called again.
//
// ctx bounds the shutdown; don't pass a context that the shutdown signal has
// already canceled (use e.g. context.WithTimeout(context.Background(), ...)),
// or pg_ctl is not even run and the server is left for the next Start to
// clean up.
func (c *Cluster) Stop(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil
	}
	if c.endSupervision != nil {
		// First, or the supervisor would start the server again. If the
		// stop below fails, the server is left running unsupervised.
		c.endSupervision()
		<-c.supervised
		c.endSupervision = nil
	}
	if err := c.pgCtl(ctx, "stop", "-w", "-m", "fast", "-D", c.dataDir); err != nil {
		// Already down (killed, or stopped by hand)? Then there's
		// nothing left to stop.
		if _, serr := os.Stat(filepath.Join(c.dataDir, "postmaster.pid")); !errors.Is(serr, fs.ErrNotExist) {
			return fmt.Errorf("pgcluster: stopping %s: %w", c.dataDir, err)
		}
	}
	c.stopped = true
	c.release()
	c.log.Info("PostgreSQL stopped", "dir", c.dataDir)
	return nil
}

// release frees what Start acquired, other than the server itself.
func (c *Cluster) release() {
	if c.lock != nil {
		c.lock.Close()
		c.lock = nil
	}
	if c.tmpSock && c.sockDir != "" {
		os.RemoveAll(c.sockDir)
	}
	if c.tmpData && c.dataDir != "" {
		os.RemoveAll(c.dataDir)
	}
}

// prepareDataDir checks that the user the server runs as can reach the data
// directory, creates it (0700, its missing parents 0755) and hands it to
// that user.
func (c *Cluster) prepareDataDir() error {
	var created []string
	for d := c.dataDir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("pgcluster: %w", err)
		}
		created = append(created, d)
		if d == filepath.Dir(d) {
			break
		}
	}
	if c.runAs != nil {
		if err := c.runAs.checkReachable(c.dataDir); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(c.dataDir, 0o700); err != nil {
		return fmt.Errorf("pgcluster: creating data directory: %w", err)
	}
	if len(created) > 1 {
		// MkdirAll made the parents 0700 (minus umask) too; they only
		// need to be traversable, and by the server's user as well.
		for _, d := range created[1:] {
			if err := os.Chmod(d, 0o755); err != nil {
				return fmt.Errorf("pgcluster: %w", err)
			}
		}
	}
	if c.runAs == nil {
		return nil
	}
	if err := c.runAs.own(c.dataDir, c.log); err != nil {
		return err
	}
	// Again, now that symlinks in the path can be resolved.
	return c.runAs.checkReachable(c.dataDir)
}

// initdb initializes the data directory.
func (c *Cluster) initdb(ctx context.Context, ephemeral bool) error {
	args := []string{
		"-D", c.dataDir,
		"-U", Superuser,
		"-E", "UTF8",
		"--no-locale",
		"-A", "trust", // local and host (127.0.0.1 only, see listen_addresses)
	}
	if ephemeral {
		args = append(args, "--no-sync")
	}
	c.log.Info("initializing PostgreSQL data directory", "dir", c.dataDir)
	out, err := c.command(ctx, "initdb", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgcluster: initdb -D %s failed: %w\n%s", c.dataDir, err, lastLines(out, 30))
	}
	return nil
}

// stopLeftover stops a postmaster left running in the data directory by a
// previous run that died without Stop. The caller holds the directory lock,
// so no live Cluster owns it.
func (c *Cluster) stopLeftover(ctx context.Context) error {
	pidFile := filepath.Join(c.dataDir, "postmaster.pid")
	lines, pid, err := readPIDFile(pidFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	if pid == 0 {
		c.log.Warn("removing unreadable postmaster.pid", "file", pidFile)
		return removeIfExists(pidFile)
	}
	switch processState(pid) {
	case procGone:
		return nil // postgres itself replaces a stale postmaster.pid
	case procOther:
		c.log.Warn("removing stale postmaster.pid: its PID now belongs to another process", "file", pidFile, "pid", pid)
		return removeIfExists(pidFile)
	}
	oldPort := ""
	if len(lines) > 3 {
		oldPort = strings.TrimSpace(lines[3])
	}
	c.log.Warn("stopping PostgreSQL left running by a previous run", "dir", c.dataDir, "pid", pid, "port", oldPort)
	if err := c.pgCtl(ctx, "stop", "-w", "-m", "fast", "-D", c.dataDir); err != nil {
		if err2 := c.pgCtl(ctx, "stop", "-w", "-m", "immediate", "-D", c.dataDir); err2 != nil {
			return fmt.Errorf("pgcluster: could not stop the PostgreSQL (pid %d) left running in %s by a previous run: %w", pid, c.dataDir, err)
		}
	}
	return nil
}

// readPIDFile reads postmaster.pid: its lines, and the PID on the first
// (0 if unreadable).
func readPIDFile(path string) (lines []string, pid int, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	lines = strings.Split(string(data), "\n")
	pid, err = strconv.Atoi(strings.TrimSpace(lines[0]))
	if err != nil {
		return lines, 0, nil
	}
	if pid < 0 {
		pid = -pid // a standalone backend writes its PID negated
	}
	return lines, pid, nil
}

// notePID records the PID of the postmaster just started, for supervise.
func (c *Cluster) notePID() error {
	_, pid, err := readPIDFile(filepath.Join(c.dataDir, "postmaster.pid"))
	if err != nil || pid == 0 {
		return fmt.Errorf("pgcluster: reading the new server's postmaster.pid: %v", err)
	}
	c.pid.Store(int64(pid))
	return nil
}

// supervise checks the postmaster every superviseEvery until ctx ends, and
// starts the server again when it is gone, retrying with backoff.
func (c *Cluster) supervise(ctx context.Context) {
	defer close(c.supervised)
	tick := time.NewTicker(superviseEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		pid := int(c.pid.Load())
		if processState(pid) == procPostgres {
			continue
		}
		c.log.Error("PostgreSQL stopped unexpectedly; starting it again", "dir", c.dataDir, "pid", pid, "port", c.port)
		backoff := firstRestartBackoff
		for attempt := 1; ; attempt++ {
			err := c.restart(ctx, attempt == 1)
			if err == nil {
				c.log.Info("PostgreSQL started again", "dir", c.dataDir, "pid", c.pid.Load(), "port", c.port, "attempts", attempt)
				break
			}
			if ctx.Err() != nil {
				return
			}
			c.log.Error("starting PostgreSQL again failed; will retry", "dir", c.dataDir, "attempt", attempt, "retry_in", backoff, "error", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, maxRestartBackoff)
		}
	}
}

// restart starts the server again, after it died, with the options and on
// the port it had: its clients have that address. The first attempt keeps
// the dead server's log as pgcluster.log.1.
func (c *Cluster) restart(ctx context.Context, keepLog bool) error {
	if pid := int(c.pid.Load()); unreaped(pid) {
		return fmt.Errorf("pgcluster: the dead postmaster (PID %d) is not reaped yet by its parent", pid)
	}
	// A stale postmaster.pid, or one whose PID was taken since.
	if err := c.stopLeftover(ctx); err != nil {
		return err
	}
	logFile := filepath.Join(c.dataDir, logFileName)
	if keepLog {
		os.Rename(logFile, logFile+".1")
	}
	if err := c.startOnce(ctx, logFile, c.ephemeral); err != nil {
		return err
	}
	return c.notePID()
}

// chooseSocketDir picks the unix socket directory: the data directory if
// the socket path fits in sockaddr_un, else a private temporary directory,
// else none (unix sockets disabled; TCP still works).
func (c *Cluster) chooseSocketDir() error {
	if socketPathFits(c.dataDir) {
		c.sockDir = c.dataDir
		return nil
	}
	for _, base := range []string{os.TempDir(), "/tmp"} {
		if !socketPathFits(filepath.Join(base, "pgsock-0123456789")) {
			continue
		}
		d, err := os.MkdirTemp(base, "pgsock-")
		if err != nil {
			continue
		}
		c.sockDir, c.tmpSock = d, true
		if c.runAs != nil {
			if err := c.runAs.own(d, c.log); err != nil {
				return err
			}
		}
		c.log.Debug("data directory path too long for a unix socket; using a temporary socket directory", "socket_dir", d)
		return nil
	}
	c.log.Warn("data directory path too long for a unix socket; unix sockets disabled (TCP only)", "dir", c.dataDir)
	return nil
}

// socketPathFits reports whether the socket file postgres creates in dir,
// ".s.PGSQL.<port>", fits in sockaddr_un.sun_path with any port.
func socketPathFits(dir string) bool {
	limit := 107 // Linux: 108 bytes including the NUL
	if runtime.GOOS != "linux" {
		limit = 103 // BSDs, macOS: 104
	}
	return len(filepath.Join(dir, ".s.PGSQL.65535")) <= limit
}

// startServer runs pg_ctl start, retrying on another free port if the one
// picked was taken in the meantime.
func (c *Cluster) startServer(ctx context.Context, opts Options) error {
	logFile := filepath.Join(c.dataDir, logFileName)
	if _, err := os.Stat(logFile); err == nil {
		os.Rename(logFile, logFile+".1")
	}
	attempts := 1
	if opts.Port == 0 {
		attempts = 3
	}
	var err error
	for i := range attempts {
		c.port = opts.Port
		if c.port == 0 {
			if c.port, err = freePort(); err != nil {
				return fmt.Errorf("pgcluster: picking a free port: %w", err)
			}
		}
		err = c.startOnce(ctx, logFile, opts.Ephemeral)
		if err == nil || ctx.Err() != nil || !errors.Is(err, errPortTaken) {
			return err
		}
		c.log.Debug("port taken, retrying", "port", c.port, "attempt", i+1)
	}
	return err
}

var errPortTaken = errors.New("port already in use")

func (c *Cluster) startOnce(ctx context.Context, logFile string, ephemeral bool) error {
	// A fresh log per attempt, so the tail we report is this attempt's.
	f, err := os.OpenFile(logFile, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	f.Close()
	if c.runAs != nil {
		if err := c.runAs.own(logFile, c.log); err != nil {
			return err
		}
	}

	// pg_ctl hands -o to the shell that execs postgres, so quote values.
	pgOpts := []string{
		"-p", strconv.Itoa(c.port),
		"-c", "listen_addresses=127.0.0.1",
	}
	if c.sockDir != "" {
		pgOpts = append(pgOpts, "-k", shQuote(c.sockDir))
	} else {
		pgOpts = append(pgOpts, "-c", "unix_socket_directories=''")
	}
	if ephemeral {
		pgOpts = append(pgOpts,
			"-c", "fsync=off",
			"-c", "synchronous_commit=off",
			"-c", "full_page_writes=off",
		)
	}
	err = c.pgCtl(ctx, "start", "-w",
		"-t", strconv.Itoa(int(startTimeout/time.Second)),
		"-D", c.dataDir,
		"-l", logFile,
		"-o", strings.Join(pgOpts, " "),
	)
	if err == nil {
		return nil
	}
	tail := readTail(logFile, 30)
	werr := err
	if strings.Contains(tail, "could not bind") || strings.Contains(tail, "Address already in use") {
		werr = fmt.Errorf("%w: %w", errPortTaken, err)
	}
	return fmt.Errorf("pgcluster: starting PostgreSQL in %s on port %d failed: %w\n--- last lines of %s ---\n%s",
		c.dataDir, c.port, werr, logFile, tail)
}

// ensureDatabase creates c.database if it does not exist.
func (c *Cluster) ensureDatabase(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, c.AdminURL())
	if err != nil {
		return fmt.Errorf("pgcluster: connecting to the new server: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", c.database).Scan(&exists); err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	if exists {
		return nil
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{c.database}.Sanitize())
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P04" { // duplicate_database: created meanwhile
		err = nil
	}
	if err != nil {
		return fmt.Errorf("pgcluster: creating database %q: %w", c.database, err)
	}
	c.log.Info("created database", "database", c.database)
	return nil
}

// pgCtl runs pg_ctl and, on failure, returns its output in the error.
func (c *Cluster) pgCtl(ctx context.Context, args ...string) error {
	out, err := c.command(ctx, "pg_ctl", args...).CombinedOutput()
	if err != nil {
		if msg := strings.TrimSpace(string(out)); msg != "" {
			return fmt.Errorf("pg_ctl %s: %w: %s", args[0], err, msg)
		}
		return fmt.Errorf("pg_ctl %s: %w", args[0], err)
	}
	return nil
}

// command prepares one of the server binaries to run as the cluster's user.
func (c *Cluster) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(c.binDir, name), args...)
	// Children chdir after dropping privileges, so use a directory any
	// user can enter (the caller's may be /root).
	cmd.Dir = "/"
	cmd.Env = serverEnv()
	cmd.WaitDelay = 5 * time.Second
	c.runAs.apply(cmd)
	return cmd
}

// serverEnv is this process's environment without the libpq/server PG*
// variables (PGDATA, PGPORT, PGHOST, ...), which would override or confuse
// the explicit settings.
func serverEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") {
			env = append(env, kv)
		}
	}
	return env
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("pgcluster: %w", err)
	}
	return nil
}

// readTail returns the last n lines of the file (at most 16 KiB of it).
func readTail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	defer f.Close()
	const max = 16 << 10
	if fi, err := f.Stat(); err == nil && fi.Size() > max {
		f.Seek(fi.Size()-max, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	return lastLines(b, n)
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
