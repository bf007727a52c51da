package workspace

import (
	"errors"
	"fmt"
)

// The kinds of failure a command reports with its own exit code. Errors of
// this package (and the daemon's replies) wrap one of them; errors.Is tells
// them apart.
var (
	ErrUsage      = errors.New("bad request")               // a wrong argument: nothing was tried
	ErrRefused    = errors.New("refused")                   // a safety check refused: nothing was changed
	ErrNotMounted = errors.New("not mounted")               // no store, or no live daemon
	ErrBusy       = errors.New("busy")                      // mounted, locked or in use already
	errUnknown    = errors.New("failed in the ckfs daemon") // any other daemon error
)

// Codes carry the kinds over the control protocol (a reply's "code"). They
// are the exit codes ckfs gives for them.
const (
	CodeError      = 1
	CodeUsage      = 2
	CodeRefused    = 3
	CodeNotMounted = 4
	CodeBusy       = 5
)

// kindError is a message with a kind. Its text is the message alone.
type kindError struct{ kind, err error }

func (e *kindError) Error() string   { return e.err.Error() }
func (e *kindError) Unwrap() []error { return []error{e.err, e.kind} }

// Errorf returns an error of a kind (ErrUsage, ErrRefused, ...).
func Errorf(kind error, format string, a ...any) error {
	return &kindError{kind: kind, err: fmt.Errorf(format, a...)}
}

// errorOfCode is a daemon's error reply as an error of its kind.
func errorOfCode(code int, msg string) error {
	kind := map[int]error{CodeUsage: ErrUsage, CodeRefused: ErrRefused, CodeNotMounted: ErrNotMounted, CodeBusy: ErrBusy}[code]
	if kind == nil {
		kind = errUnknown
	}
	return Errorf(kind, "%s", msg)
}
