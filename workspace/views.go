package workspace

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ckfs-dev/ckfs/internal/durable"
	"golang.org/x/sys/unix"
)

// ViewInfo is one open read-only view of a checkpoint (ckfs view): the
// process serving it writes it when the view is mounted and removes it
// when it ends.
type ViewInfo struct {
	PID         int       `json:"pid"`
	Dir         string    `json:"dir"`
	Checkpoint  uint64    `json:"checkpoint"`
	Started     time.Time `json:"started"`
	Paths       int       `json:"paths"`
	Unavailable []string  `json:"unavailable,omitempty"` // paths the timeline cannot vouch for (listed, unreadable)
}

// AddView records a view the calling process serves.
func (w *Workspace) AddView(v ViewInfo) error {
	if err := os.MkdirAll(w.Layout().Views(), 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return durable.WriteFile(w.viewFile(v.PID), append(b, '\n'), 0o600)
}

// RemoveView forgets the view served by pid.
func (w *Workspace) RemoveView(pid int) { os.Remove(w.viewFile(pid)) }

func (w *Workspace) viewFile(pid int) string {
	return filepath.Join(w.Layout().Views(), strconv.Itoa(pid)+".json")
}

// Views lists the open views, oldest first. A view whose process is gone
// is cleaned up: its mount detached, its record removed.
func (w *Workspace) Views() []ViewInfo {
	ents, _ := os.ReadDir(w.Layout().Views())
	var out []ViewInfo
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(w.Layout().Views(), e.Name()))
		var v ViewInfo
		if err != nil || json.Unmarshal(b, &v) != nil {
			continue
		}
		if !ProcessAlive(v.PID) {
			if MountedAt(v.Dir) {
				Detach(v.Dir)
			}
			w.RemoveView(v.PID)
			continue
		}
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b ViewInfo) int { return a.Started.Compare(b.Started) })
	return out
}

// CloseView unmounts the view at dir (every view when dir is "") and
// waits for its process to end.
func (w *Workspace) CloseView(dir string) ([]string, error) {
	var closed []string
	found := false
	for _, v := range w.Views() {
		if dir != "" && !sameDir(v.Dir, dir) {
			continue
		}
		found = true
		if err := unix.Unmount(v.Dir, 0); err != nil {
			if err := unix.Kill(v.PID, unix.SIGTERM); err != nil {
				return closed, fmt.Errorf("close the view at %s: %v", v.Dir, err)
			}
		}
		for i := 0; i < 400 && ProcessAlive(v.PID); i++ {
			time.Sleep(25 * time.Millisecond)
		}
		if ProcessAlive(v.PID) {
			return closed, fmt.Errorf("the view at %s (pid %d) did not end: is a process still inside it? %s", v.Dir, v.PID, strings.Join(BusyProcesses(v.Dir), "; "))
		}
		w.RemoveView(v.PID)
		closed = append(closed, v.Dir)
	}
	if dir != "" && !found {
		return nil, Errorf(ErrUsage, "no view at %s (ckfs view --list lists them)", dir)
	}
	return closed, nil
}

func sameDir(a, b string) bool {
	a, _ = filepath.Abs(a)
	b, _ = filepath.Abs(b)
	return filepath.Clean(a) == filepath.Clean(b)
}
