package session

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ckfs-dev/ckfs/internal/durable"
	"github.com/ckfs-dev/ckfs/internal/jsonl"
	"golang.org/x/sys/unix"
)

// The session logs and the marks log are JSONL files appended by short-lived
// processes (agent hooks, ckfs mark) as much as by long-lived ones, so each
// append takes an exclusive flock on the file, repairs a torn tail left by
// a crashed writer, and makes the line durable before it returns.

// maxLine bounds one line; a longer line is corruption.
const maxLine = 4 << 20

// TailError reports the first line of a log that is not a valid record;
// everything before it is good.
type TailError struct {
	Path string
	Line int
	Torn bool // the last line, without a newline: an interrupted append
	Err  error
}

func (e *TailError) Error() string {
	if e.Torn {
		return fmt.Sprintf("%s: line %d: torn last line (an append was interrupted): %v", e.Path, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: line %d: %v", e.Path, e.Line, e.Err)
}

func (e *TailError) Unwrap() error { return e.Err }

// appendLine appends one line to path under an exclusive lock. build gets
// the last complete line ("" for an empty log) and returns the new line
// (without its newline).
func appendLine(path string, build func(last []byte) ([]byte, error)) error {
	created := false
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		created = true
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		return fmt.Errorf("lock %s: %w", path, err)
	}
	defer unix.Flock(int(f.Fd()), unix.LOCK_UN)
	last, end, err := lastLine(f)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	line, err := build(last)
	if err != nil {
		return err
	}
	if bytes.IndexByte(line, '\n') >= 0 || len(line) > maxLine {
		return fmt.Errorf("append to %s: record does not fit on one line", path)
	}
	// Cut a torn tail, then write the line where the good part ends.
	if err := f.Truncate(end); err != nil {
		return fmt.Errorf("repair %s: %w", path, err)
	}
	if _, err := f.WriteAt(append(line, '\n'), end); err != nil {
		f.Truncate(end)
		return fmt.Errorf("append to %s: %w", path, err)
	}
	if err := durable.Datasync(f); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if created {
		if d, err := os.Open(filepath.Dir(path)); err == nil {
			d.Sync()
			d.Close()
		}
	}
	return nil
}

// lastLine returns the last complete line of f and the offset just after
// it (where a torn tail, if any, begins).
func lastLine(f *os.File) ([]byte, int64, error) {
	last, end, _, err := jsonl.Tail(f, int64(maxLine+1))
	if errors.Is(err, jsonl.ErrNoLine) {
		return nil, 0, errors.New("last line too long")
	}
	return last, end, err
}

// readLines calls parse for each line of path. It stops at the first line
// that parse rejects and returns it as a *TailError (Torn if it is an
// unterminated last line); a missing file has no lines.
func readLines(path string, parse func(line []byte) error) (*TailError, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	for n := 1; ; n++ {
		b, err := br.ReadBytes('\n')
		if len(b) == 0 && err == io.EOF {
			return nil, nil
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		torn := err == io.EOF // no newline
		if len(b) > maxLine {
			return &TailError{Path: path, Line: n, Torn: torn, Err: errors.New("line too long")}, nil
		}
		if perr := parse(bytes.TrimSuffix(b, []byte("\n"))); perr != nil || torn {
			if perr == nil {
				perr = errors.New("no newline")
			}
			return &TailError{Path: path, Line: n, Torn: torn, Err: perr}, nil
		}
	}
}

// RepairTail cuts a torn last line (an interrupted append) off the log at
// path, under the same lock appenders take; it reports whether it cut
// anything. A bad line that is not the last is left for a person to look at.
func RepairTail(path string) (bool, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		return false, err
	}
	defer unix.Flock(int(f.Fd()), unix.LOCK_UN)
	st, err := f.Stat()
	if err != nil {
		return false, err
	}
	_, end, err := lastLine(f)
	if err != nil || end == st.Size() {
		return false, err
	}
	if err := f.Truncate(end); err != nil {
		return false, err
	}
	return true, durable.Datasync(f)
}
