package capture

import (
	"slices"
	"strings"

	"github.com/ckfs-dev/ckfs/index"
)

// BeforeChange takes the pre-image of rel if this is the first mutating
// operation on it in the current period. It must return before the
// operation reaches the disk; an error means the operation must be refused.
func (r *Recorder) BeforeChange(rel string) error {
	if r.excl.Excluded(rel) {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.touch(rel)
}

// BeforeChangeTree is BeforeChange for rel and everything under it (a
// directory about to be renamed or exchanged).
func (r *Recorder) BeforeChangeTree(rel string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.touchTree(rel)
}

func (r *Recorder) touchTree(rel string) error {
	if err := r.touch(rel); err != nil {
		return err
	}
	if st, ok := r.last[rel]; !ok || st.Type != index.TypeDir || r.excl.Excluded(rel) {
		return nil
	}
	names, err := r.src.ReadDir(rel)
	if err != nil {
		return r.fail(rel, err)
	}
	slices.Sort(names)
	for _, n := range names {
		if err := r.touchTree(rel + "/" + n); err != nil {
			return err
		}
	}
	return nil
}

// writer is one open writable handle. Its path follows renames; a deleted
// file's handle keeps the path it was deleted from.
type writer struct{ path string }

// WriterOpened is called before a handle opened for writing on rel is
// handed out: it takes the pre-image (writes may then bypass the daemon)
// and counts the handle. The returned release must be called exactly once
// when the handle is released.
func (r *Recorder) WriterOpened(rel string) (release func(), err error) {
	if r.excl.Excluded(rel) {
		return func() {}, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.touch(rel); err != nil {
		return nil, err
	}
	w := &writer{path: rel}
	r.writers[w] = struct{}{}
	return func() { r.writerReleased(w) }, nil
}

// writerReleased forgets the handle; when the last one on its path goes,
// the post-image is recorded if the state changed. A failure is logged:
// the next boundary records the post-image again.
func (r *Recorder) writerReleased(w *writer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.writers, w)
	if r.closed || !r.touched[w.path] {
		return
	}
	for o := range r.writers {
		if o.path == w.path {
			return
		}
	}
	if r.recordAfter(w.path) == nil {
		r.clean[w.path] = true
	}
}

// writerPaths returns the sorted paths with open writable handles.
func (r *Recorder) writerPaths() []string {
	set := map[string]bool{}
	for w := range r.writers {
		set[w.path] = true
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// Renamed moves the bookkeeping of open handles after a successful rename
// of oldRel to newRel (both directions for an exchange).
func (r *Recorder) Renamed(oldRel, newRel string, exchange bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for w := range r.writers {
		if np, ok := rebase(w.path, oldRel, newRel); ok {
			w.path = np
		} else if exchange {
			if np, ok := rebase(w.path, newRel, oldRel); ok {
				w.path = np
			}
		}
	}
}

// rebase maps p under old to the same place under new.
func rebase(p, old, new string) (string, bool) {
	if p == old {
		return new, true
	}
	if rest, ok := strings.CutPrefix(p, old+"/"); ok {
		return new + "/" + rest, true
	}
	return "", false
}

// BeforeRename takes the pre-images a rename of src to dst needs: both
// sides with everything under them, and every name the move will create
// under dst (and under src for an exchange), which do not exist yet.
func (r *Recorder) BeforeRename(src, dst string, exchange bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.touchTree(src); err != nil {
		return err
	}
	if err := r.touchTree(dst); err != nil {
		return err
	}
	if err := r.touchMapped(src, dst); err != nil {
		return err
	}
	if exchange {
		return r.touchMapped(dst, src)
	}
	return nil
}

// touchMapped takes the pre-image of the name under to of every path under
// from that is already touched.
func (r *Recorder) touchMapped(from, to string) error {
	var mapped []string
	for p := range r.touched {
		if rest, ok := strings.CutPrefix(p, from+"/"); ok {
			mapped = append(mapped, to+"/"+rest)
		}
	}
	slices.Sort(mapped)
	for _, p := range mapped {
		if err := r.touch(p); err != nil {
			return err
		}
	}
	return nil
}
