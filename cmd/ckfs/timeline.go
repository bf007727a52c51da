package main

import (
	"bytes"
	"fmt"
	"slices"

	"path/filepath"
	"strconv"
	"strings"

	"github.com/aymanbagabas/go-udiff"
	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/rewind"
	"github.com/fatih/color"
)

// workspaceView is an opened store, for the commands that read the timeline.
type workspaceView struct {
	store   string
	meta    *storeMeta
	mounted bool
	records []index.Record
	cas     *cas.Local
	dir     *rewind.Dir // the workspace, for reads beneath its root
}

// openView finds the store of dir and reads its timeline; a live daemon
// first records the post-images of files still being written.
func openView(cmdStore func() (string, *storeMeta, error)) (*workspaceView, error) {
	store, meta, err := cmdStore()
	if err != nil {
		return nil, err
	}
	v := &workspaceView{store: store, meta: meta}
	if st, err := readDaemonState(store); err == nil && processAlive(st.PID) {
		if _, err := call(store, request{Op: "flush"}); err == nil {
			v.mounted = true
		}
	}
	recs, tail, err := index.Load(filepath.Join(store, index.TimelineFile))
	if err != nil {
		return nil, err
	}
	if tail != nil && !tail.Torn {
		return nil, badTimeline(store, tail)
	}
	v.records = recs
	if v.cas, err = cas.Open(store, nil); err != nil {
		return nil, err
	}
	return v, nil
}

// checkpoint resolves a checkpoint name: a seq, "now" (the end of the
// timeline), or a window id, meaning the checkpoint just before the window
// (its open record).
func (v *workspaceView) checkpoint(s string) (uint64, error) {
	last := uint64(0)
	if n := len(v.records); n > 0 {
		last = v.records[n-1].Seq
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
	for _, w := range index.Windows(v.records) {
		if w.ID == s {
			return w.Open.Seq, nil
		}
	}
	return 0, withCode(ExitUsage, "no checkpoint %q: give a seq or a window id from ckfs log", s)
}

// beforeLast returns the checkpoint before the n-th most recent window
// that wrote something (windows of read-only tool calls do not count).
func (v *workspaceView) beforeLast(n int) (uint64, *index.Window, error) {
	ws := slices.DeleteFunc(index.Windows(v.records), func(w index.Window) bool { return len(w.Paths) == 0 && len(w.Skipped) == 0 })
	if n < 1 || n > len(ws) {
		return 0, nil, withCode(ExitUsage, "--last %d: the timeline has %d windows that wrote something", n, len(ws))
	}
	w := ws[len(ws)-n]
	return w.Open.Seq, &w, nil
}

// content returns the bytes a state holds, from the store.
func (v *workspaceView) content(s index.State) ([]byte, error) {
	if s.Hash == "" {
		return nil, nil
	}
	h, err := cas.ParseHash(string(s.Hash))
	if err != nil {
		return nil, err
	}
	return v.cas.Get(h)
}

// diskContent reads a path of the workspace as it is now (through the
// mount when mounted: the command is not the daemon). Every path element is
// opened beneath the root without following a symlink, so a symlinked
// directory can never make it read (and print) a file outside the
// workspace; a FIFO or device is never opened.
func (v *workspaceView) diskContent(rel string) ([]byte, index.FileType, error) {
	if v.dir == nil {
		fd, err := openRoot(v.meta.Root)
		if err != nil {
			return nil, "", fmt.Errorf("open %s: %w", v.meta.Root, err)
		}
		v.dir = rewind.NewDir(fd) // closed when the command exits
	}
	st, err := v.dir.Stat(rel)
	if err != nil {
		return nil, "", err
	}
	if st.Type != index.TypeFile && st.Type != index.TypeSymlink {
		return nil, st.Type, nil
	}
	b, err := v.dir.Content(rel)
	return b, st.Type, err
}

func isBinary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0
}

// unifiedDiff renders a diff of a path between two contents; binary
// contents are summarised.
func unifiedDiff(path, fromLabel, toLabel string, from, to []byte) string {
	if bytes.Equal(from, to) {
		return ""
	}
	if isBinary(from) || isBinary(to) {
		return fmt.Sprintf("Binary file %s differs (%d -> %d bytes)\n", path, len(from), len(to))
	}
	return udiff.Unified(path+" ("+fromLabel+")", path+" ("+toLabel+")", string(from), string(to))
}

// lineCounts returns the added and removed lines between two contents, and
// whether either is binary.
func lineCounts(from, to []byte) (added, removed int, binary bool) {
	if isBinary(from) || isBinary(to) {
		return 0, 0, true
	}
	for _, e := range udiff.Lines(string(from), string(to)) {
		removed += strings.Count(string(from[e.Start:e.End]), "\n")
		if e.End > e.Start && from[e.End-1] != '\n' {
			removed++
		}
		added += strings.Count(e.New, "\n")
		if len(e.New) > 0 && !strings.HasSuffix(e.New, "\n") {
			added++
		}
	}
	return added, removed, false
}

// colorDiff colours a unified diff for a terminal (fatih/color turns
// itself off when stdout is not a TTY or NO_COLOR is set).
func colorDiff(d string) string {
	if color.NoColor {
		return d
	}
	add, del, hunk := color.New(color.FgGreen).SprintFunc(), color.New(color.FgRed).SprintFunc(), color.New(color.FgCyan).SprintFunc()
	lines := strings.SplitAfter(d, "\n")
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			lines[i] = color.New(color.Bold).Sprint(l)
		case strings.HasPrefix(l, "+"):
			lines[i] = add(l)
		case strings.HasPrefix(l, "-"):
			lines[i] = del(l)
		case strings.HasPrefix(l, "@@"):
			lines[i] = hunk(l)
		}
	}
	return strings.Join(lines, "")
}

// badTimeline is the error for a timeline with a bad line: where, what,
// and the command that repairs it.
func badTimeline(store string, tail *index.LineError) error {
	return tail.Repair(filepath.Join(store, index.TimelineFile))
}
