package main

import (
	"errors"

	"github.com/ckfs-dev/ckfs/rewind"
	"github.com/ckfs-dev/ckfs/workspace"
)

// Exit codes. Stable and never reused; README.md documents them.
const (
	ExitOK         = 0 // success
	ExitError      = 1 // an error: something failed
	ExitUsage      = 2 // bad command line
	ExitRefused    = 3 // a safety check refused the operation; nothing was changed
	ExitNotMounted = 4 // the workspace is not mounted, or its daemon is dead
	ExitBusy       = 5 // already mounted, locked, or still in use
)

// exitError carries a code of its own: a wrapped command's exit status,
// or an error already reported (silent). Every other error's code comes
// from its kind (exitCode).
type exitError struct {
	code   int
	err    error
	silent bool // the error has been reported already (a wrapped command's own exit)
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// exitCode is the exit code of a command's error: its own, or its kind's.
func exitCode(err error) int {
	var ee *exitError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, workspace.ErrUsage):
		return ExitUsage
	case errors.Is(err, workspace.ErrRefused), errors.Is(err, rewind.ErrRefused):
		return ExitRefused
	case errors.Is(err, workspace.ErrNotMounted):
		return ExitNotMounted
	case errors.Is(err, workspace.ErrBusy):
		return ExitBusy
	}
	return ExitError
}
