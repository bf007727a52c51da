package workspace

import (
	"fmt"
	"slices"

	"strconv"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/rewind"
)

// View is an opened store, for the commands that read the timeline.
type View struct {
	Store   string
	Meta    *Meta
	Mounted bool
	Records []index.Record
	CAS     *cas.Local
	Dir     *rewind.Dir // the workspace, for reads beneath its root
}

// OpenView finds the store of dir and reads its timeline; a live daemon
// first records the post-images of files still being written.
func OpenView(cmdStore func() (string, *Meta, error)) (*View, error) {
	store, meta, err := cmdStore()
	if err != nil {
		return nil, err
	}
	v := &View{Store: store, Meta: meta}
	if st, err := ReadDaemonState(store); err == nil && ProcessAlive(st.PID) {
		if _, err := Call(store, Request{Op: "flush"}); err == nil {
			v.Mounted = true
		}
	}
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
	h, err := cas.ParseHash(string(s.Hash))
	if err != nil {
		return nil, err
	}
	return v.CAS.Get(h)
}

// DiskContent reads a path of the workspace as it is now (through the
// mount when mounted: the command is not the daemon). Every path element is
// opened beneath the root without following a symlink, so a symlinked
// directory can never make it read (and print) a file outside the
// workspace; a FIFO or device is never opened.
func (v *View) DiskContent(rel string) ([]byte, index.FileType, error) {
	if v.Dir == nil {
		fd, err := OpenRoot(v.Meta.Root)
		if err != nil {
			return nil, "", fmt.Errorf("open %s: %w", v.Meta.Root, err)
		}
		v.Dir = rewind.NewDir(fd) // closed when the command exits
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

// BadTimeline is the error for a timeline with a bad line: where, what,
// and the command that repairs it.
func BadTimeline(store string, tail *index.LineError) error {
	return tail.Repair(Layout(store).Timeline())
}
