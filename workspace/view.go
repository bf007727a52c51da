package workspace

import (
	"fmt"
	"slices"
	"strings"

	"strconv"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/rewind"
)

// View is an opened store, for the commands that read the timeline.
type View struct {
	*Workspace
	Mounted bool
	Records []index.Record
	CAS     *cas.Local
	Dir     *rewind.Dir // the workspace, for reads beneath its root
}

// openView reads the workspace's timeline; a live daemon first records
// the post-images of files still being written.
func openView(w *Workspace) (*View, error) {
	store := w.Store
	v := &View{Workspace: w}
	v.Mounted, _ = flush(store)
	recs, tail, err := index.Load(Layout(store).Timeline())
	if err != nil {
		return nil, err
	}
	if tail != nil && !tail.Torn {
		return nil, BadTimeline(store, tail)
	}
	v.Records = recs
	if v.CAS, err = cas.Open(store, nil); err != nil {
		return nil, err
	}
	return v, nil
}

// flush asks the live daemon of store, if there is one, to record the
// post-images of files still being written, and says whether it did.
// Without a live daemon nothing is being written.
func flush(store string) (bool, error) {
	if !DaemonAlive(store) {
		return false, nil
	}
	_, err := DaemonOf(store).Flush()
	return err == nil, err
}

// Checkpoint resolves a checkpoint name: a seq, "now" (the end of the
// timeline), or a window id, meaning the checkpoint just before the window
// (its open record).
func (v *View) Checkpoint(s string) (uint64, error) {
	last := uint64(0)
	if n := len(v.Records); n > 0 {
		last = v.Records[n-1].Seq
	}
	if s == "now" || s == "end" {
		return last, nil
	}
	if n, err := strconv.ParseUint(s, 10, 64); err == nil {
		if n > last {
			return 0, fmt.Errorf("checkpoint %d is beyond the end of the timeline (last seq %d): ckfs log lists checkpoints", n, last)
		}
		return n, nil
	}
	for _, w := range index.Windows(v.Records) {
		if w.ID == s {
			return w.Open.Seq, nil
		}
	}
	return 0, Errorf(ErrUsage, "no checkpoint %q: give a seq or a window id from ckfs log", s)
}

// SplitWindow returns the window that checkpoint t cuts in two: one with
// changes recorded at or before t and more after it (or still open), so
// that the state at t holds only part of what it did; nil if none does.
func (v *View) SplitWindow(t uint64) *index.Window {
	before, after := map[string]bool{}, map[string]bool{}
	for i := range v.Records {
		if r := &v.Records[i]; r.IsImage() && r.Window != "" {
			if r.Seq <= t {
				before[r.Window] = true
			} else {
				after[r.Window] = true
			}
		}
	}
	for _, w := range index.Windows(v.Records) {
		if before[w.ID] && w.Open.Seq < t && (after[w.ID] || w.Close == nil) {
			return &w
		}
	}
	return nil
}

// afterWindow names the checkpoint just after a closed window, for a
// message.
func afterWindow(w *index.Window) string {
	if w.Close == nil {
		return ""
	}
	return fmt.Sprintf(" or just after it (--to %d)", w.Close.Seq)
}

// Window returns the window with id, or nil if the timeline has none.
func (v *View) Window(id string) *index.Window {
	for _, w := range index.Windows(v.Records) {
		if w.ID == id {
			return &w
		}
	}
	return nil
}

// BeforeLast returns the checkpoint before the n-th most recent window
// that wrote something (windows of read-only tool calls do not count).
func (v *View) BeforeLast(n int) (uint64, *index.Window, error) {
	ws := slices.DeleteFunc(index.Windows(v.Records), func(w index.Window) bool { return len(w.Paths) == 0 && len(w.Skipped) == 0 })
	if n < 1 || n > len(ws) {
		return 0, nil, Errorf(ErrUsage, "--last %d: the timeline has %d windows that wrote something", n, len(ws))
	}
	w := ws[len(ws)-n]
	return w.Open.Seq, &w, nil
}

// Content returns the bytes a state holds, from the store.
func (v *View) Content(s index.State) ([]byte, error) {
	if s.Hash == "" {
		return nil, nil
	}
	h := s.Hash
	return v.CAS.Get(h)
}

// DiskContent reads a path of the workspace as it is now (through the
// mount when mounted: the command is not the daemon). Every path element is
// opened beneath the root without following a symlink, so a symlinked
// directory can never make it read (and print) a file outside the
// workspace; a FIFO or device is never opened.
func (v *View) DiskContent(rel string) ([]byte, index.FileType, error) {
	if err := v.openDisk(); err != nil {
		return nil, "", err
	}
	st, err := v.Dir.Stat(rel)
	if err != nil {
		return nil, "", err
	}
	if st.Type != index.TypeFile && st.Type != index.TypeSymlink {
		return nil, st.Type, nil
	}
	b, err := v.Dir.Content(rel)
	return b, st.Type, err
}

// openDisk opens the workspace's root for DiskContent, once (not safe for
// concurrent use; the Dir it makes is).
func (v *View) openDisk() error {
	if v.Dir != nil {
		return nil
	}
	fd, err := OpenRoot(v.Meta.Root)
	if err != nil {
		return fmt.Errorf("open %s: %w", v.Meta.Root, err)
	}
	v.Dir = rewind.NewDir(fd) // closed when the command exits
	return nil
}

// BadTimeline is the error for a timeline with a bad line: where, what,
// and the command that repairs it.
func BadTimeline(store string, tail *index.LineError) error {
	return tail.Repair(Layout(store).Timeline())
}

// RewindTarget resolves where a rewind goes, from exactly one of: to (a
// checkpoint name, as Checkpoint takes), last (before the last-th most
// recent window that wrote) or undo (before the last rewind). what names
// it for people. guard refuses an undo that would overwrite files changed
// after the rewind it undoes (a preview or --force does not guard).
func (v *View) RewindTarget(to string, last int, undo, guard bool) (target uint64, what string, err error) {
	if err := (TargetSpec{To: to, Last: last, Undo: undo}).check(); err != nil {
		return 0, "", err
	}
	switch {
	case to != "":
		if target, err = v.Checkpoint(to); err != nil {
			return 0, "", err
		}
		what = fmt.Sprintf("checkpoint %d", target)
		if _, numeric := strconv.ParseUint(to, 10, 64); numeric != nil {
			return target, what, nil
		}
		if w := v.SplitWindow(target); w != nil {
			inside := fmt.Sprintf("checkpoint %d is inside window %s (%s): a rewind there keeps part of that call's changes and takes back the rest", target, w.ID, w.Tool)
			if guard {
				return 0, "", Errorf(ErrRefused, "%s; nothing was changed. Rewind to just before it (--to %s)%s, or rerun with --force to rewind to %d anyway", inside, w.ID, afterWindow(w), target)
			}
			what += " (" + inside + ")"
		}
		return target, what, nil
	case last > 0:
		t, w, err := v.BeforeLast(last)
		if err != nil {
			return 0, "", err
		}
		return t, fmt.Sprintf("checkpoint %d, before window %s (%s)", t, w.ID, w.Tool), nil
	}
	t, op, err := rewind.UndoTarget(v.Records)
	if err != nil {
		return 0, "", Errorf(ErrRefused, "%v", err)
	}
	if changed := rewind.ChangedSince(v.Records, t, op); len(changed) > 0 && guard {
		for i, p := range changed {
			changed[i] = index.Display(p)
		}
		return 0, "", Errorf(ErrRefused, "undo of rewind %s refused; nothing was changed: these files changed after it, and undoing it would overwrite that work:\n  %s\nways out: rewind to a checkpoint of your choice instead (ckfs log lists them), or rerun with --force (the work is captured first, so ckfs rewind --files --undo brings it back)", op, strings.Join(changed, "\n  "))
	}
	return t, fmt.Sprintf("checkpoint %d, before rewind %s", t, op), nil
}
