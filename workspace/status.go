package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/internal/english"
)

// StatusReport is the state of a workspace: its mount, daemon, store,
// hooks and remotes.
type StatusReport struct {
	Root       string      `json:"root"`
	Store      string      `json:"store"`
	State      string      `json:"state"` // mounted, not-mounted, dead
	Mountpoint string      `json:"mountpoint,omitempty"`
	Daemon     *StatusInfo `json:"daemon,omitempty"`
	StoreBytes int64       `json:"store_bytes"`
	// ReserveBytes is the part of StoreBytes held free for a full disk
	// (docs/format.md, "A full store disk").
	ReserveBytes int64  `json:"reserve_bytes"`
	Objects      int    `json:"objects"`
	Hint         string `json:"hint,omitempty"`
	// HookProblems counts the lines of the store's hook.log: problems the
	// agent hooks met (a hook never shows them to the agent).
	HookProblems int    `json:"hook_problems,omitempty"`
	HookLast     string `json:"hook_last_problem,omitempty"`
	// Remotes say how far each remote has the timeline (ckfs push).
	Remotes []RemoteStatus `json:"remotes,omitempty"`
	// Views are the open read-only views of checkpoints (ckfs view).
	Views []ViewInfo `json:"views,omitempty"`
}

// RemoteStatus is how far a remote has the timeline.
type RemoteStatus struct {
	Name     string `json:"name"`
	Unpushed uint64 `json:"unpushed_records"` // seqs after the pushed one
	RemoteConfig
}

// Status reads the state of the workspace: whether its
// daemon answers, what it counts, the store's size, the hooks' problems
// and how far each remote is behind.
func (w *Workspace) Status() *StatusReport {
	store, meta := w.Store, w.Meta
	r := &StatusReport{Root: meta.Root, Store: store, State: "not-mounted"}
	r.StoreBytes, r.Objects = w.Usage()
	if fi, err := os.Stat(filepath.Join(store, index.ReserveFile)); err == nil {
		r.ReserveBytes = fi.Size()
	}
	if st, err := ReadDaemonState(store); err == nil {
		r.Mountpoint = st.Mountpoint
		if info, err := DaemonOf(store).Status(); err == nil {
			r.State, r.Daemon = "mounted", info
		} else {
			r.State = "dead"
			r.Hint = fmt.Sprintf("daemon pid %d is not answering; run: ckfs mount %s (it detaches the dead mount and mounts again)", st.PID, st.Mountpoint)
		}
	} else if MountedAt(meta.Root) {
		r.State, r.Mountpoint = "dead", meta.Root
		r.Hint = "a ckfs mount without a daemon; run: ckfs mount " + meta.Root + " (it detaches the dead mount and mounts again)"
	}
	r.HookProblems, r.HookLast = hookProblems(store)
	r.Views = w.Views()
	r.Remotes = w.RemoteStatuses()
	return r
}

// RemoteStatuses says how far each remote of the workspace has its
// timeline, in the order of the remotes' names.
func (w *Workspace) RemoteStatuses() []RemoteStatus {
	c, err := LoadRemotes(w.Store)
	if err != nil || len(c.Remotes) == 0 {
		return nil
	}
	var out []RemoteStatus
	last, _ := index.LastSeq(Layout(w.Store).Timeline())
	for _, n := range c.Names() {
		rc := c.Remotes[n]
		out = append(out, RemoteStatus{Name: n, Unpushed: last - min(last, rc.Pushed), RemoteConfig: rc})
	}
	return out
}

// UnpushedWarnings are one line per remote that lacks records, for the
// end of a command that leaves the workspace (an unmount).
func (w *Workspace) UnpushedWarnings() []string {
	var out []string
	for _, r := range w.RemoteStatuses() {
		if r.Unpushed > 0 {
			out = append(out, fmt.Sprintf("warning: remote %s lacks %s of this workspace: ckfs push sends them (it works unmounted too)", r.Name, english.Count(int(r.Unpushed), "record", "records")))
		}
	}
	return out
}

// hookProblems counts the lines of the store's hook.log and returns the
// last one.
func hookProblems(store string) (int, string) {
	b, err := os.ReadFile(Layout(store).HookLog())
	if err != nil || len(b) == 0 {
		return 0, ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return len(lines), FirstLine(lines[len(lines)-1], 300)
}
