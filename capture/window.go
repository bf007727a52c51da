package capture

import (
	"errors"
	"fmt"
	"slices"

	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/internal/proc"
	"golang.org/x/sys/unix"
)

// OpenWindows returns the ids of the open windows, oldest first.
func (r *Recorder) OpenWindows() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]string, len(r.windows))
	for i, w := range r.windows {
		ids[i] = w.id
	}
	return ids
}

// WindowInfo is an open window as a successor daemon reopens it.
type WindowInfo struct {
	ID    string `json:"id"`
	Tool  string `json:"tool,omitempty"`
	Label string `json:"label,omitempty"`
	Agent Agent  `json:"agent"`
}

// OpenWindowInfo lists the open windows, oldest first, with their agents.
func (r *Recorder) OpenWindowInfo() []WindowInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]WindowInfo, len(r.windows))
	for i, w := range r.windows {
		out[i] = WindowInfo{w.id, w.tool, w.label, w.agent}
	}
	return out
}

// OpenWindow opens a window: a boundary, after which writes belong to it.
func (r *Recorder) OpenWindow(id, tool, label string) (uint64, error) {
	return r.OpenAgentWindow(id, tool, label, Agent{})
}

// OpenAgentWindow is OpenWindow for a tool call run by agent: while other
// windows are open too, writes are matched to their call by process (see
// ownerFor).
func (r *Recorder) OpenAgentWindow(id, tool, label string, agent Agent) (uint64, error) {
	// The agent's run id is read before the lock: writes wait on it.
	if env, ok := r.procs.(proc.EnvReader); ok && agent.PID > 0 && agent.Run == "" {
		agent.Run, _ = env.Env(agent.PID, AgentRunEnv)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return 0, ErrClosed
	}
	if id == "" {
		return 0, errors.New("window id is empty")
	}
	for _, w := range r.windows {
		if w.id == id {
			return 0, fmt.Errorf("%w: %s", ErrWindowOpen, id)
		}
	}
	r.waitOps()
	if err := r.flushPeriod(); err != nil {
		return 0, err
	}
	rec := &index.Record{Kind: index.KindOpen, Window: id, Tool: tool, Label: label}
	if err := r.append(rec, true); err != nil {
		return 0, err
	}
	r.windows = append(r.windows, openWindow{id, tool, label, agent})
	r.count.windows.Add(1)
	return rec.Seq, r.startPeriod()
}

// CloseWindow closes the window id ("" closes the newest): a boundary.
func (r *Recorder) CloseWindow(id string) (uint64, error) { return r.CloseWindowReason(id, "") }

// CloseWindowReason is CloseWindow with the close record's reason: "" for
// a call that finished, index.ReasonUnfinished for one the agent never
// reported done.
func (r *Recorder) CloseWindowReason(id, reason string) (uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return 0, ErrClosed
	}
	i := len(r.windows) - 1
	if id != "" {
		i = slices.IndexFunc(r.windows, func(w openWindow) bool { return w.id == id })
	}
	if i < 0 {
		return 0, fmt.Errorf("%w: %q", ErrNoWindow, id)
	}
	id = r.windows[i].id
	r.waitOps()
	if err := r.flushPeriod(); err != nil {
		return 0, err
	}
	rec := &index.Record{Kind: index.KindClose, Window: id, Reason: reason}
	if err := r.append(rec, true); err != nil {
		return 0, err
	}
	if w := r.windows[i]; w.knows() {
		r.recent = append(r.recent, w)
		if len(r.recent) > recentMax {
			r.recent = slices.Delete(r.recent, 0, len(r.recent)-recentMax)
		}
	}
	r.windows = slices.Delete(r.windows, i, i+1)
	return rec.Seq, r.startPeriod()
}

// Flush records the post-images of the current period (at unmount, or
// before a rewind reads the timeline) without a boundary.
func (r *Recorder) Flush() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.flushPeriod()
}

// Sync makes every record and object written so far durable. The daemon
// calls it periodically; boundaries and pre-images do it themselves.
func (r *Recorder) Sync() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.syncObjects(); err != nil {
		return err
	}
	return r.tl.Sync()
}

func (r *Recorder) syncObjects() error {
	if d, ok := r.store.(deferrer); ok {
		return d.Sync()
	}
	return nil
}

// Close flushes and stops the recorder; later calls fail.
func (r *Recorder) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	err := r.flushPeriod()
	if err == nil {
		if err = r.syncObjects(); err == nil {
			err = r.tl.Sync()
		}
	}
	r.closed = true
	r.mu.Unlock()
	r.stopWorker()
	return err
}

// flushPeriod appends an after image for every touched path whose state
// differs from its last record.
func (r *Recorder) flushPeriod() error {
	r.landAhead()
	// Every post-image the worker has queued or is taking is recorded
	// here instead; its late result will be void.
	clear(r.pending)
	for p := range r.inflight {
		r.inflight[p] = true
	}
	clear(r.owners) // the next period may have other windows
	paths := make([]string, 0, len(r.touched))
	for p := range r.touched {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	// A clean file whose stat still is its last record's needs nothing:
	// one pass of lstats over them (a descriptor a directory, not a
	// resolution of each path: a boundary after a burst of thousands of
	// files outside any window holds up the agent's next call).
	var clean []string
	for _, p := range paths {
		if r.clean(p) && r.last[p].Type == index.TypeFile {
			clean = append(clean, p)
		}
	}
	same := make(map[string]bool, len(clean))
	r.lstatEach(clean, func(i int, st *unix.Stat_t, err error) {
		same[clean[i]] = err == nil && unchanged(r.last[clean[i]], st)
	})
	for _, p := range paths {
		if same[p] {
			continue
		}
		if err := r.recordAfter(p); err != nil {
			return err
		}
	}
	return nil
}

// unchanged reports whether st, a file's, still has the size, mode and
// mtime of last, its last record: for a path whose post-image was taken
// when its last handle was released and that no operation has touched
// since (only a write through a memory mapping kept after close could
// change it, and that moves the mtime).
func unchanged(last index.State, st *unix.Stat_t) bool {
	if last.Type != index.TypeFile || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return false
	}
	return st.Size == last.Size && st.Mtim.Sec*1e9+st.Mtim.Nsec == last.MTime && uint32(st.Mode)&0o7777 == last.Mode
}

// startPeriod resets first-write tracking and takes pre-images of paths
// whose writable handles stay open across the boundary.
func (r *Recorder) startPeriod() error {
	clear(r.touched)
	clear(r.unclean)
	clear(r.calm)
	clear(r.dirs)
	r.listed = listings{}
	r.bulk, r.batch, r.noBatch = false, 0, false
	for _, w := range r.writerPaths() {
		err := r.touch(w.pid, w.path)
		if errors.Is(err, ErrStoreFull) {
			// A boundary always succeeds. The handle is open already: say
			// that this path's pre-image in the new period is not kept.
			err = r.skipImage(w.pid, w.path, index.KindBefore, "pre-image "+ReasonStoreFull)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// skipImage records rel as changed with its content not stored.
func (r *Recorder) skipImage(pid uint32, rel string, kind index.Kind, reason string) error {
	st, err := r.statOnly(rel)
	if err != nil {
		return r.fail(rel, err)
	}
	own := r.ownerFor(pid)
	rec := &index.Record{Path: rel, State: &st, Window: own.window, By: own.by, Kind: index.KindSkip, Reason: reason}
	if err := r.append(rec, false); err != nil {
		return r.fail(rel, err)
	}
	r.touched[rel] = own
	r.unclean[rel] = struct{}{}
	r.last[rel] = st
	return nil
}

// Exclusive runs fn with capture stopped: the current period's post-images
// are recorded first, and no operation is captured (mutating operations
// wait) until fn returns. fn appends with appendFn, which keeps the
// recorder's knowledge of each path's last state, and is told which windows
// are open. A rewind runs here. fn must not call other Recorder methods:
// the recorder's lock is held.
func (r *Recorder) Exclusive(fn func(appendFn func(recs ...*index.Record) error, openWindows []string) error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	r.waitOps()
	if err := r.flushPeriod(); err != nil {
		return err
	}
	if err := r.syncObjects(); err != nil {
		return err
	}
	if err := r.tl.Sync(); err != nil {
		return err
	}
	var open []string
	for _, w := range r.windows {
		open = append(open, w.id)
	}
	err := fn(func(recs ...*index.Record) error {
		if err := r.tl.Append(recs...); err != nil {
			return err
		}
		for _, rec := range recs {
			r.count.records.Add(1)
			if rec.IsImage() {
				r.last[rec.Path], r.lastSeq[rec.Path] = *rec.State, rec.Seq
			}
		}
		return nil
	}, open)
	// What was written bypassed the mount: the next change of any path
	// takes a fresh pre-image.
	clear(r.touched)
	clear(r.unclean)
	clear(r.calm)
	if serr := r.startPeriod(); err == nil {
		err = serr
	}
	return err
}
