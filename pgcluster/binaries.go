package pgcluster

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ErrBinariesNotFound is returned (possibly wrapped) by FindBinaries and Start
// when no directory holding initdb, pg_ctl and postgres can be found. Its text
// tells the user what to do about it.
var ErrBinariesNotFound = errors.New("PostgreSQL server binaries (initdb, pg_ctl) not found on PATH or in /usr/lib/postgresql/*/bin: install them (Debian/Ubuntu: apt-get install postgresql; macOS: brew install postgresql@16) or set DATABASE_URL to an existing database")

// requiredBinaries must all be present, as executables, in one directory.
var requiredBinaries = []string{"initdb", "pg_ctl", "postgres"}

// pathEnv returns the PATH to search first. Tests replace it.
var pathEnv = func() string { return os.Getenv("PATH") }

// searchGlobs are searched, in order, after PATH. Within one glob, the
// directories are tried newest PostgreSQL version first. Tests replace it.
var searchGlobs = []string{
	"/usr/lib/postgresql/*/bin",                               // Debian, Ubuntu
	"/usr/local/pgsql/bin",                                    // source install default
	"/usr/pgsql-*/bin",                                        // RHEL/Fedora PGDG packages
	"/opt/homebrew/opt/postgresql@*/bin",                      // Homebrew (Apple silicon); keg-only, so not on PATH
	"/usr/local/opt/postgresql@*/bin",                         // Homebrew (Intel)
	"/opt/homebrew/opt/postgresql/bin",                        // Homebrew unversioned formula
	"/usr/local/opt/postgresql/bin",                           // Homebrew unversioned formula (Intel)
	"/Applications/Postgres.app/Contents/Versions/latest/bin", // Postgres.app
}

// FindBinaries returns the directory that holds the PostgreSQL server
// binaries initdb, pg_ctl and postgres. It looks on PATH first, then under
// /usr/lib/postgresql/*/bin (newest version first), /usr/local/pgsql/bin and
// a few other well-known install locations (PGDG RPMs, Homebrew). All three
// binaries must be in the same directory. If none is found, the error is
// ErrBinariesNotFound, whose message says how to install them.
func FindBinaries() (dir string, err error) {
	for _, p := range filepath.SplitList(pathEnv()) {
		if p == "" || !filepath.IsAbs(p) {
			continue // like exec.LookPath, don't run programs relative to the cwd
		}
		if !isExecutable(filepath.Join(p, "initdb")) {
			continue
		}
		if hasBinaries(p) {
			return p, nil
		}
		// initdb may be a symlink into the real bin dir (Debian's
		// postgresql-common layout, or hand-made links) whose siblings
		// were not linked onto PATH.
		if real, err := filepath.EvalSymlinks(filepath.Join(p, "initdb")); err == nil {
			if d := filepath.Dir(real); hasBinaries(d) {
				return d, nil
			}
		}
	}
	for _, g := range searchGlobs {
		matches, _ := filepath.Glob(g)
		sortNewestFirst(matches)
		for _, d := range matches {
			if hasBinaries(d) {
				return d, nil
			}
		}
	}
	return "", ErrBinariesNotFound
}

func hasBinaries(dir string) bool {
	for _, b := range requiredBinaries {
		if !isExecutable(filepath.Join(dir, b)) {
			return false
		}
	}
	return true
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// sortNewestFirst orders directories such as /usr/lib/postgresql/{9.6,10,16}/bin
// by the numeric version found in their path, highest first. Paths without a
// version sort last, in lexical order.
func sortNewestFirst(dirs []string) {
	slices.SortStableFunc(dirs, func(a, b string) int {
		va, vb := pathVersion(a), pathVersion(b)
		if c := slices.Compare(vb, va); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
}

// pathVersion extracts the first dotted number from a path component, e.g.
// "/usr/lib/postgresql/9.6/bin" -> [9 6], "/usr/pgsql-16/bin" -> [16].
func pathVersion(path string) []int {
	for _, comp := range strings.Split(filepath.ToSlash(path), "/") {
		start := strings.IndexAny(comp, "0123456789")
		if start < 0 {
			continue
		}
		var v []int
		for _, part := range strings.Split(comp[start:], ".") {
			n, err := strconv.Atoi(part)
			if err != nil {
				break
			}
			v = append(v, n)
		}
		if len(v) > 0 {
			return v
		}
	}
	return nil
}
