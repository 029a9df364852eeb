package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// childEnv makes the test binary run "burnrate serve" (see TestMain).
const childEnv = "BURNRATE_TEST_CHILD"

// privateDataDir returns a fresh BURNRATE_DATA_DIR. Postgres runs as
// another user when tests run as root, so it must be able to enter it.
func privateDataDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "burnrate-private-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	return dir
}

// waitUntil polls cond every 100 ms for up to d.
func waitUntil(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
	return true
}

// postmasterPID is the PID in the private cluster's postmaster.pid, or 0.
func postmasterPID(dataDir string) int {
	b, err := os.ReadFile(filepath.Join(dataDir, "pg", "postmaster.pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	return pid
}

// alive reports whether pid is a running process (not a zombie).
func alive(pid int) bool {
	if pid <= 0 || errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) == 0 || (fields[0] != "Z" && fields[0] != "X")
}

// stopStray stops a postmaster a failed test left running (SIGINT: fast
// shutdown).
func stopStray(t *testing.T, pid int) {
	t.Cleanup(func() {
		if alive(pid) {
			syscall.Kill(pid, syscall.SIGINT)
			waitUntil(30*time.Second, func() bool { return !alive(pid) })
		}
	})
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// healthy reports whether the serve at addr answers /healthz with 200.
func healthy(addr string) bool {
	res, err := (&http.Client{Timeout: 2 * time.Second}).Get("http://" + addr + "/healthz")
	if err != nil {
		return false
	}
	res.Body.Close()
	return res.StatusCode == http.StatusOK
}

// TestServeRestartsItsPrivatePostgres kills the postmaster of the private
// Postgres a running serve started: serve must start it again by itself
// and /healthz answer 200 again, rather than 503 until someone restarts
// serve.
func TestServeRestartsItsPrivatePostgres(t *testing.T) {
	t.Parallel()
	dir := privateDataDir(t)
	addr := freeAddr(t)
	e := env(map[string]string{"BURNRATE_DATA_DIR": dir, "ADDR": addr, "LOG_LEVEL": "error"})
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- run(ctx, []string{"serve"}, e, io.Discard, io.Discard) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	if !waitUntil(90*time.Second, func() bool { return healthy(addr) }) {
		t.Fatal("serve never became healthy")
	}
	pid := postmasterPID(dir)
	if !alive(pid) {
		t.Fatalf("no postmaster (pid file says %d)", pid)
	}

	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	restarted := func() bool {
		p := postmasterPID(dir)
		return p != pid && alive(p) && healthy(addr)
	}
	if !waitUntil(60*time.Second, restarted) {
		t.Fatalf("/healthz not answering 200 on a new postmaster 60 s after the old one (%d) was killed", pid)
	}
	t.Logf("healthy again %s after kill -9", time.Since(killed).Round(time.Millisecond))

	cancel()
	if err := <-served; err != nil {
		t.Fatalf("serve: %v", err)
	}
	served <- nil // for the cleanup
	if p := postmasterPID(dir); p != 0 {
		t.Fatalf("postmaster %d still noted after serve stopped", p)
	}
}

// TestOrphanedPrivatePostgresIsTakenOver kills (SIGKILL) a serve that runs
// the private Postgres, which keeps running without its owner. The next
// command must not share it with an owner that is gone: it takes it over
// and stops it when it is done.
func TestOrphanedPrivatePostgresIsTakenOver(t *testing.T) {
	t.Parallel()
	dir := privateDataDir(t)
	addr := freeAddr(t)
	var childLog bytes.Buffer
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), childEnv+"=serve", "BURNRATE_DATA_DIR="+dir, "ADDR="+addr, "LOG_LEVEL=error", "DATABASE_URL=")
	child.Stdout, child.Stderr = &childLog, &childLog
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { child.Wait(); close(exited) }()
	t.Cleanup(func() { child.Process.Kill(); <-exited })

	// Serving: its Postgres is up and migrated.
	if !waitUntil(90*time.Second, func() bool { return healthy(addr) }) {
		t.Fatalf("the child serve never became healthy:\n%s", childLog.String())
	}
	note := filepath.Join(dir, "running-url")
	orphan := postmasterPID(dir)
	stopStray(t, orphan)
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	if !alive(orphan) {
		t.Fatalf("the postmaster (%d) died with its owner; nothing was orphaned", orphan)
	}

	var out bytes.Buffer
	e := env(map[string]string{"BURNRATE_DATA_DIR": dir, "LOG_LEVEL": "error"})
	if err := run(context.Background(), []string{"org", "create", "--name", "Orphanage", "--owner-email", "o@example.com"}, e, &out, io.Discard); err != nil {
		t.Fatalf("org create beside an orphaned private Postgres: %v", err)
	}
	if !strings.Contains(out.String(), "orphanage") {
		t.Fatalf("org create printed %q", out.String())
	}
	if !waitUntil(30*time.Second, func() bool { return !alive(orphan) }) {
		t.Fatalf("the orphaned postmaster %d still runs after the command that found it exited", orphan)
	}
	if p := postmasterPID(dir); p != 0 {
		t.Fatalf("a postmaster (%d) still runs after the command that took the cluster over exited", p)
	}
	if _, err := os.Stat(note); !os.IsNotExist(err) {
		t.Fatalf("the note of the running cluster outlived it: %v", err)
	}
}
