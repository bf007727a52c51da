package daemon

import (
	"errors"
	"testing"

	"github.com/ckfs-dev/ckfs/workspace"
)

// What a daemon reports before it serves is read back by its kind, not by
// the words of its message.
func TestReadyReport(t *testing.T) {
	for _, c := range []struct {
		err  error
		busy bool
	}{
		{workspace.Errorf(workspace.ErrBusy, "/r is mounted at /m"), true},
		{errors.New("mount /r: the store is not what I expected: already mounted somewhere?"), false},
		{errors.New("two\nlines"), false},
	} {
		line := readyReport(c.err)
		rep, ok := parseReady(line)
		if !ok || rep == nil {
			t.Fatalf("%q: not read back as a report (%v, %v)", line, rep, ok)
		}
		if rep.Busy != c.busy || rep.Msg != oneLine(c.err.Error()) {
			t.Errorf("%q read back as %+v", line, rep)
		}
	}
	if rep, ok := parseReady(readyReport(nil)); !ok || rep != nil {
		t.Errorf("ok read back as %v, %v", rep, ok)
	}
	for _, line := range []string{"", "error: old form", "error weird: x", "okay"} {
		if _, ok := parseReady(line); ok {
			t.Errorf("%q read as a ready line", line)
		}
	}
}
