package capture

import (
	"errors"
	"slices"

	"github.com/ckfs-dev/ckfs/index"
	"golang.org/x/sys/unix"
)

// Changes behind the mount. The timeline never assumes that the disk still
// holds what it last recorded: files change while the workspace is not
// mounted (the user's editor between two agent sessions), while a daemon
// is dead, and behind the mount (a process that was inside the directory
// before it was mounted in place, or any writer of a workspace mounted on a
// separate mountpoint). A change ckfs did not see has no author it can
// name, so it is the user's own.
//
// Two checks find such changes and record each as an outside post-image
// marked found (index.Record.Found), before anything is attributed to a
// window:
//
//   - at mount, CheckRecorded compares every recorded path with its last
//     record (type, size, mtime, mode and owner from one lstat; the
//     content is read only where they differ), so the state before the
//     session's first window is what that window finds;
//   - before a path's first change in a period, touch compares the
//     pre-image it takes anyway with the path's last record, so a window's
//     before is never a state the timeline did not account for.
//
// A found record's change happened at a time ckfs cannot know, after the
// path's previous record: index.StateAt places it as early as it could have
// been, so that no rewind destroys it.

// Checked is what CheckRecorded did.
type Checked struct {
	Paths  int // recorded paths checked
	Read   int // paths whose content was read (their stat differed)
	Found  int // changes found and recorded
	Failed int // paths that could not be read (logged; checked again at their next change)
}

// CheckRecorded compares every recorded path with the disk and records
// each difference as a found outside change (see above). The daemon runs
// it at start, after Reconcile and before it serves anything.
func (r *Recorder) CheckRecorded() (Checked, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out Checked
	if r.closed {
		return out, ErrClosed
	}
	// Every checkpoint before this mount may predate changes made while
	// nothing was mounted: the mount record says where that gap is
	// (index.StateAt reads a path first recorded absent after it as
	// unknown before it).
	if r.tl.LastSeq() > 0 {
		if err := r.tl.Append(&index.Record{Kind: index.KindMount}); err != nil {
			return out, err
		}
	}
	paths := make([]string, 0, len(r.last))
	for p := range r.last {
		if !r.excl.Excluded(p) {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	// One lstat of every path first (in one pass where the source can),
	// then the content of those that differ.
	same := make([]bool, len(paths))
	r.lstatEach(paths, func(i int, s *unix.Stat_t, err error) {
		same[i] = statMatches(s, err, r.last[paths[i]])
	})
	for i, p := range paths {
		out.Paths++
		last := r.last[p]
		if same[i] {
			continue
		}
		out.Read++
		st, reason, err := r.image(p, deferredSink)
		if err != nil {
			// One file that cannot be read (no permission, the store's
			// disk full) must not keep the workspace from mounting: its
			// next change is checked again before anything is credited.
			out.Failed++
			r.log.Warn("could not check a recorded file against the disk at mount", "path", p, "err", err)
			continue
		}
		if reason != "" || !changedBehind(last, st) {
			continue
		}
		if err := r.appendFound(p, st, index.FoundMount, false); err != nil {
			return out, err
		}
		out.Found++
	}
	if out.Found > 0 {
		if err := r.syncObjects(); err != nil {
			return out, err
		}
		if err := r.tl.Sync(); err != nil {
			return out, err
		}
	}
	return out, nil
}

// lstatEach lstats every path of sorted paths, calling fn with each
// result in order: in one pass where the source can (a descriptor a
// directory), else one by one.
func (r *Recorder) lstatEach(paths []string, fn func(i int, st *unix.Stat_t, err error)) {
	if b, ok := r.src.(interface {
		LstatEach([]string, func(int, *unix.Stat_t, error))
	}); ok {
		b.LstatEach(paths, fn)
		return
	}
	var st unix.Stat_t
	for i, p := range paths {
		err := r.src.Lstat(p, &st)
		fn(i, &st, err)
	}
}

// statMatches reports whether an lstat (s, or err) agrees with a path's
// last recorded state: same type, size (for files and symlinks), mtime
// (except for directories, whose mtime every entry change moves), mode and
// owner. A content change that keeps all of them (a write that puts the
// mtime back) is not seen here; everything else is then read and compared.
func statMatches(s *unix.Stat_t, err error, last index.State) bool {
	if err != nil {
		return (errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR)) && last.Type == index.TypeAbsent
	}
	st, known := stateOf(s)
	if !known || st.Type != last.Type {
		return false
	}
	if last.Type == index.TypeFile && last.Hash == "" {
		return true // a skip: no content to compare with
	}
	if st.Size != last.Size || st.Mode != last.Mode || st.Rdev != last.Rdev {
		return false
	}
	if last.HasMeta() && st.Owner != last.Owner {
		return false
	}
	return st.Type == index.TypeDir || st.MTime == last.MTime
}

// changedBehind reports whether st, read from disk, holds a change that
// last (the path's last record) does not: content, type, mode, owner or
// extended attributes. Times alone are not a change. A skip (a file whose
// content was not stored) has nothing to compare its content with.
func changedBehind(last, st index.State) bool {
	if !last.HasMeta() {
		st.Owner, st.XAttrs = "", "" // a record from before owners were kept
	}
	if last.Type == index.TypeFile && last.Hash == "" {
		return false
	}
	return !last.SameContent(st)
}

// appendFound records st as a change of rel made behind the mount, found
// where says (index.FoundMount or index.FoundChange).
func (r *Recorder) appendFound(rel string, st index.State, where string, durable bool) error {
	rec := &index.Record{Path: rel, State: &st, Kind: index.KindOutside, Image: index.ImageAfter, Found: where}
	if err := r.append(rec, durable); err != nil {
		return r.fail(rel, err)
	}
	r.last[rel] = st
	return nil
}

// hasWriter reports whether a writable handle on rel is open: its writes
// may reach the disk without passing through the daemon (kernel
// passthrough, a memory mapping), so a difference from the last record is
// theirs, not a change behind the mount.
func (r *Recorder) hasWriter(rel string) bool {
	for w := range r.writers {
		if w.path == rel {
			return true
		}
	}
	return false
}
