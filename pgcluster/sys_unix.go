//go:build linux || darwin || freebsd

package pgcluster

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// runAs is the unprivileged user the server binaries run as when this
// process is root.
type runAs struct {
	name     string
	uid, gid uint32
}

// pickRunAs returns nil unless this process is root. As root, it returns the
// owner of an already initialized data directory if that is not root, else
// the "postgres" system user, else "nobody".
func pickRunAs(dataDir string) (*runAs, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	if _, err := os.Stat(filepath.Join(dataDir, "PG_VERSION")); err == nil {
		if fi, err := os.Stat(dataDir); err == nil {
			st := fi.Sys().(*syscall.Stat_t)
			if st.Uid != 0 {
				r := &runAs{name: "uid " + strconv.Itoa(int(st.Uid)), uid: st.Uid, gid: st.Gid}
				if u, err := user.LookupId(strconv.Itoa(int(st.Uid))); err == nil {
					r.name = u.Username
					if g, err := strconv.ParseUint(u.Gid, 10, 32); err == nil {
						r.gid = uint32(g)
					}
				}
				return r, nil
			}
		}
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 != nil || err2 != nil || uid == 0 {
			continue
		}
		return &runAs{name: name, uid: uint32(uid), gid: uint32(gid)}, nil
	}
	return nil, errors.New(`pgcluster: this process runs as root, which PostgreSQL refuses, and there is neither a "postgres" nor a "nobody" user to run it as: create one (useradd --system postgres), run as a non-root user, or set DATABASE_URL to an existing database`)
}

// apply makes cmd run as r, with no supplementary groups. A nil r leaves cmd
// running as this process's user.
func (r *runAs) apply(cmd *exec.Cmd) {
	if r == nil {
		return
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential: &syscall.Credential{Uid: r.uid, Gid: r.gid, Groups: []uint32{}},
	}
	// A HOME such as /root is not readable by r; nothing needs it.
	cmd.Env = append(cmd.Env, "HOME=/")
}

// own makes path owned by r. An initialized data directory owned by someone
// else (e.g. root) is chowned recursively, since postgres insists that it
// owns all of it.
func (r *runAs) own(path string, log *slog.Logger) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid == r.uid && st.Gid == r.gid {
		return nil
	}
	if !fi.IsDir() {
		return chown(path, r)
	}
	if _, err := os.Stat(filepath.Join(path, "PG_VERSION")); err != nil {
		return chown(path, r)
	}
	log.Warn("chowning PostgreSQL data directory to the user the server runs as", "dir", path, "user", r.name)
	return filepath.WalkDir(path, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("pgcluster: %w", err)
		}
		return chown(p, r)
	})
}

func chown(path string, r *runAs) error {
	if err := os.Lchown(path, int(r.uid), int(r.gid)); err != nil {
		return fmt.Errorf("pgcluster: handing %s to user %s: %w", path, r.name, err)
	}
	return nil
}

// checkReachable fails with an explanation if r cannot traverse one of the
// directories leading to dir (as given, and with symlinks resolved).
func (r *runAs) checkReachable(dir string) error {
	paths := []string{dir}
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
		paths = append(paths, real)
	}
	for _, p := range paths {
		for _, d := range ancestors(p) {
			fi, err := os.Stat(d)
			if errors.Is(err, fs.ErrNotExist) {
				continue // Start creates it 0755
			} else if err != nil {
				return fmt.Errorf("pgcluster: %w", err)
			}
			st := fi.Sys().(*syscall.Stat_t)
			perm := fi.Mode().Perm()
			var ok bool
			switch {
			case st.Uid == r.uid:
				ok = perm&0o100 != 0
			case st.Gid == r.gid:
				ok = perm&0o010 != 0
			default:
				ok = perm&0o001 != 0
			}
			if !ok {
				return fmt.Errorf("pgcluster: this process runs as root, so PostgreSQL runs as user %s (uid %d), "+
					"which cannot reach the data directory %s: directory %s (mode %04o, owner uid %d) is not traversable by it; "+
					"make it so (chmod o+x %s) or use a data directory whose parent directories all are",
					r.name, r.uid, dir, d, perm, st.Uid, d)
			}
		}
	}
	return nil
}

// ancestors returns the parent directories of path (absolute), nearest
// first, up to the root.
func ancestors(path string) []string {
	var ds []string
	for d := filepath.Dir(path); ; d = filepath.Dir(d) {
		ds = append(ds, d)
		if d == filepath.Dir(d) {
			return ds
		}
	}
}

// lockDir takes an exclusive, non-blocking flock on the directory. The
// returned file holds it until closed, or until the process exits. Go opens
// files close-on-exec, so the server processes do not inherit it.
func lockDir(dir string) (io.Closer, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("pgcluster: data directory %s is %w", dir, ErrInUse)
		}
		return nil, fmt.Errorf("pgcluster: locking %s: %w", dir, err)
	}
	return f, nil
}

type procState int

const (
	procGone     procState = iota // no such process
	procPostgres                  // a live postgres process (or one we cannot tell apart)
	procOther                     // a live process that is not postgres
)

// processState tells whether pid is a live postgres process.
func processState(pid int) procState {
	if pid <= 0 {
		return procGone
	}
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return procGone
	}
	// A dead process that its parent has not reaped yet still answers kill.
	if state, _, ok := procStat(pid); ok && (state == 'Z' || state == 'X') {
		return procGone
	}
	comm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return procPostgres // no /proc (macOS): assume the worst
	}
	if strings.TrimSpace(string(comm)) == "postgres" {
		return procPostgres
	}
	return procOther
}

// unreaped reports whether pid is a dead process that its parent has not
// reaped yet: postgres will not start while the PID in postmaster.pid
// exists. The postmaster's parent is init, which reaps at once, except in a
// container where this process is PID 1 and inherits it: then it is reaped
// here.
func unreaped(pid int) bool {
	state, ppid, ok := procStat(pid)
	if !ok || (state != 'Z' && state != 'X') {
		return false
	}
	if ppid == os.Getpid() {
		var ws syscall.WaitStatus
		if got, _ := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil); got == pid {
			return false
		}
	}
	return true
}

// procStat reads a process's state and parent from /proc (Linux).
func procStat(pid int) (state byte, ppid int, ok bool) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// pid (comm) state ppid ...; comm may hold spaces and parentheses.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return 0, 0, false
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 2 || len(fields[0]) != 1 {
		return 0, 0, false
	}
	ppid, err = strconv.Atoi(fields[1])
	return fields[0][0], ppid, err == nil
}
