package capture

import (
	"slices"
	"strings"

	"github.com/ckfs-dev/ckfs/index"
	"golang.org/x/sys/unix"
)

// BeforeChange takes the pre-image of rel if this is the first mutating
// operation on it in the current period. It must return before the
// operation reaches the disk; an error means the operation must be refused.
// pid is the process making the change (0 when unknown).
func (r *Recorder) BeforeChange(pid uint32, rel string) error {
	if r.excl.Excluded(rel) {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.touch(pid, rel)
}

// BeginChange is BeforeChange for an operation that the caller carries
// out next: done must be called once it has reached the disk (or failed).
// A boundary waits for every such operation in flight, so that an
// operation whose pre-image one period took never lands in the next, where
// no record would say whose it was.
func (r *Recorder) BeginChange(pid uint32, rel string) (done func(), err error) {
	if r.excl.Excluded(rel) {
		return noop, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.touch(pid, rel); err != nil {
		return nil, err
	}
	return r.begin(), nil
}

// BeginRename is BeforeRename as BeginChange is BeforeChange. The
// pre-images and the count of the rename in flight are taken under one
// hold of the lock: a boundary between them would take the destination's
// post-image before the rename reached the disk, and the rename would then
// land in the next period, which never touched the path (sed -i in a
// background command, renaming while its call reports back).
func (r *Recorder) BeginRename(pid uint32, src, dst string, exchange bool) (done func(), err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.beforeRename(pid, src, dst, exchange); err != nil {
		return nil, err
	}
	afterRenamePreImages()
	return r.begin(), nil
}

// afterRenamePreImages runs after a rename's pre-images are taken and
// before the rename counts as in flight (a test's way in between).
var afterRenamePreImages = func() {}

// begin counts an operation in flight; the returned func, called once,
// ends it. On mu. It allocates nothing: this is every mutation's path.
func (r *Recorder) begin() func() {
	r.ops++
	return r.endFn
}

// endOp ends an operation begin counted.
func (r *Recorder) endOp() {
	r.mu.Lock()
	r.ops--
	if r.ops == 0 {
		r.opsDone.Broadcast()
	}
	r.mu.Unlock()
}

// noop is what an operation that begin did not count calls at its end.
func noop() {}

// waitOps waits, on mu, until no operation is in flight (see BeginChange).
func (r *Recorder) waitOps() {
	for r.ops > 0 {
		r.opsDone.Wait()
	}
}

func (r *Recorder) touchTree(pid uint32, rel string) error {
	if err := r.touch(pid, rel); err != nil {
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
		if err := r.touchTree(pid, rel+"/"+n); err != nil {
			return err
		}
	}
	return nil
}

// writer is one open writable handle and the process that opened it. Its
// path follows renames; a deleted file's handle keeps the path it was
// deleted from.
type writer struct {
	path string
	pid  uint32
}

// WriterOpened is called before a handle opened for writing on rel is
// handed out: it takes the pre-image (writes may then bypass the daemon)
// and counts the handle. The returned release must be called exactly once
// when the handle is released.
func (r *Recorder) WriterOpened(pid uint32, rel string) (release func(), err error) {
	if r.excl.Excluded(rel) {
		return noop, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.touch(pid, rel); err != nil {
		return nil, err
	}
	w := &writer{path: rel, pid: pid}
	r.writers[w] = struct{}{}
	return func() { r.writerReleased(w) }, nil
}

// writerReleased forgets the handle; when the last one on its path goes,
// the post-image is queued for the worker, which records it if the state
// changed. A failure is logged: the next boundary records it again.
func (r *Recorder) writerReleased(w *writer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.writers, w)
	if _, ok := r.touched[w.path]; r.closed || !ok {
		return
	}
	for o := range r.writers {
		if o.path == w.path {
			return
		}
	}
	r.queueAfter(w.path)
}

// writerPaths returns the sorted paths with open writable handles, each
// with the process that opened one of them.
func (r *Recorder) writerPaths() []*writer {
	set := map[string]*writer{}
	for w := range r.writers {
		set[w.path] = w
	}
	out := make([]*writer, 0, len(set))
	for _, w := range set {
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b *writer) int { return strings.Compare(a.path, b.path) })
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
func (r *Recorder) BeforeRename(pid uint32, src, dst string, exchange bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.beforeRename(pid, src, dst, exchange)
}

// beforeRename is BeforeRename on r.mu.
func (r *Recorder) beforeRename(pid uint32, src, dst string, exchange bool) error {
	if err := r.touchTree(pid, src); err != nil {
		return err
	}
	if err := r.touchTree(pid, dst); err != nil {
		return err
	}
	if err := r.touchMapped(pid, src, dst); err != nil {
		return err
	}
	if exchange {
		return r.touchMapped(pid, dst, src)
	}
	return nil
}

// touchMapped takes the pre-image of the name under to of every path under
// from that is already touched. Only a directory has paths under it (as
// it is now: its last record may be older than a rm and mkdir), so a
// file's rename, every sed -i and every editor's save, costs a stat and
// not a pass over every path the period touched.
func (r *Recorder) touchMapped(pid uint32, from, to string) error {
	var st unix.Stat_t
	if err := r.src.Lstat(from, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return nil
	}
	var mapped []string
	under := from + "/"
	for p := range r.touched {
		if rest, ok := strings.CutPrefix(p, under); ok {
			mapped = append(mapped, to+"/"+rest)
		}
	}
	slices.Sort(mapped)
	for _, p := range mapped {
		if err := r.touch(pid, p); err != nil {
			return err
		}
	}
	return nil
}
