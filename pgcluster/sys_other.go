//go:build !(linux || darwin || freebsd)

package pgcluster

import (
	"errors"
	"io"
	"log/slog"
	"os/exec"
	"runtime"
)

var errUnsupported = errors.New("pgcluster: not supported on " + runtime.GOOS + ": set DATABASE_URL to an existing database")

type runAs struct {
	name     string
	uid, gid uint32
}

func pickRunAs(string) (*runAs, error)          { return nil, errUnsupported }
func (r *runAs) apply(*exec.Cmd)                {}
func (r *runAs) own(string, *slog.Logger) error { return errUnsupported }
func (r *runAs) checkReachable(string) error    { return errUnsupported }
func lockDir(string) (io.Closer, error)         { return nil, errUnsupported }

type procState int

const (
	procGone procState = iota
	procPostgres
	procOther
)

func processState(int) procState { return procPostgres }
func unreaped(int) bool          { return false }
