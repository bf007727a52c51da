package daemon

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"

	"github.com/ckfs-dev/ckfs/capture"
	"github.com/ckfs-dev/ckfs/config"
	"github.com/ckfs-dev/ckfs/fusefs"
	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/workspace"
	"golang.org/x/sys/unix"
)

// What a successor needs from its predecessor, kept beside the store by
// every worker of a supervisor (supervise_linux.go): the node journal
// (fusefs) and the open windows with their agents.

// keepNodeJournal has fsys record the node ids it hands out, when this
// mount may be taken over: a worker of a supervisor, serving in place
// with the cached model. A successor keeps the journal its predecessor
// wrote (takeOver reads it first).
func (d *daemon) keepNodeJournal(fsys *fusefs.FS) error {
	o := d.o
	if (d.succ.Handoff == nil && !d.tookOver) || o.Mountpoint != o.Root || o.IO == config.IOPassthrough {
		return nil
	}
	if d.tookOver {
		b, err := os.ReadFile(workspace.Layout(o.Store).NodeJournal())
		if err != nil {
			return fmt.Errorf("take over: %w", err)
		}
		d.nodes = b
	}
	f, err := fusefs.OpenNodeJournal(workspace.Layout(o.Store).NodeJournal(), true)
	if err != nil {
		return err
	}
	d.undo.push(func() { f.Close() })
	fsys.KeepNodeJournal(f)
	return nil
}

// writeOpenWindows records the open windows for a successor. It is not
// synced: a dead daemon's page cache survives it.
func (d *daemon) writeOpenWindows() {
	if d.succ.Handoff == nil && !d.tookOver {
		return
	}
	b, _ := json.Marshal(d.rec.OpenWindowInfo())
	path := workspace.Layout(d.o.Store).OpenWindows()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err == nil {
		os.Rename(tmp, path)
	}
}

// readOpenWindows is what writeOpenWindows last wrote (none if nothing).
// A file that does not parse gives none and an error naming it: the
// windows still open again, from their open records, but without the
// processes that own them.
func readOpenWindows(store string) ([]capture.WindowInfo, error) {
	path := workspace.Layout(store).OpenWindows()
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil
	}
	var ws []capture.WindowInfo
	if err := json.Unmarshal(b, &ws); err != nil {
		return nil, fmt.Errorf("%s is damaged (%v): the windows the previous daemon had open are reopened from the timeline, owned by no process", path, err)
	}
	return ws, nil
}

// reopenWindows opens again, under the same ids, the windows the dead
// daemon had open, which Reconcile closed as interrupted (ids, oldest
// first): with the agents writeOpenWindows recorded, or, for a window
// opened after its last write, with the tool and label its open record
// has.
func (d *daemon) reopenWindows(ids []string, known []capture.WindowInfo, history []index.Record) error {
	for _, id := range ids {
		w := capture.WindowInfo{ID: id}
		for i := len(history) - 1; i >= 0; i-- {
			if r := &history[i]; r.Kind == index.KindOpen && r.Window == id {
				w.Tool, w.Label = r.Tool, r.Label
				break
			}
		}
		for _, k := range known {
			if k.ID == id {
				w = k
			}
		}
		if _, err := d.rec.OpenAgentWindow(w.ID, w.Tool, w.Label, w.Agent); err != nil {
			return fmt.Errorf("reopen window %s: %w", w.ID, err)
		}
		d.log.Info("reopened the window the dead daemon had open", "window", w.ID)
	}
	d.writeOpenWindows()
	return nil
}

// unmount unmounts the mount. A successor's server does not know the
// mountpoint (it serves a connection it was given): it is unmounted by
// its path.
func (d *daemon) unmount() error {
	if !d.tookOver {
		return d.srv.Unmount()
	}
	if err := unix.Unmount(d.o.Mountpoint, 0); err != nil {
		out, ferr := exec.Command("fusermount3", "-u", d.o.Mountpoint).CombinedOutput()
		if ferr != nil {
			return fmt.Errorf("%v (fusermount3: %v %s)", err, ferr, out)
		}
	}
	return nil
}
