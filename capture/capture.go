// Package capture is ckfs's window state machine. It decides when a
// pre-image or a post-image of a path is taken and writes the records; the
// FUSE layer only tells it what is about to happen. It never reads the
// workspace through the mount: images are read from the backing directory
// through a Source.
//
// Periods. The timeline is cut into periods by boundaries (a window opens
// or closes). In a period, the first mutating operation on a path records
// its pre-image (a before record inside a window, an outside record with
// image "before" when no window is open). The post-image is recorded when
// the last writable handle on the path is released, and at the next
// boundary for every path the period touched whose state differs from its
// last record. Paths with writable handles still open at a boundary get a
// fresh pre-image right after it, since their writes may reach the disk
// without passing through the daemon (kernel passthrough, mmap).
//
// Capture cost is proportional to what is written: nothing is walked or
// hashed at mount time, and untouched paths are never read (StateAt's lazy
// baseline makes a path's first pre-image its baseline).
package capture

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
	"golang.org/x/sys/unix"
)

// DefaultMaxFileSize is the largest file whose content is stored; larger
// files get skip records.
const DefaultMaxFileSize = 16 << 20

// Errors returned to callers.
var (
	ErrWindowOpen     = errors.New("a window with this id is already open")
	ErrNoWindow       = errors.New("no such open window")
	ErrExclusiveClose = errors.New("recorder is closed")
)

// Options configure a Recorder.
type Options struct {
	Store    cas.Store
	Timeline *index.Writer
	Source   Source
	// Excludes are glob patterns of paths not captured, in addition to
	// DefaultExcludes.
	Excludes []string
	// MaxFileSize is the content size limit; DefaultMaxFileSize if zero.
	MaxFileSize int64
	// History is the timeline as it was when the recorder started; the
	// last image of each path seeds what the recorder knows.
	History []index.Record
	Logger  *slog.Logger
}

// Recorder records pre- and post-images in windows. It is safe for
// concurrent use; operations are serialized.
type Recorder struct {
	mu      sync.Mutex
	store   cas.Store
	tl      *index.Writer
	src     Source
	excl    *Excluder
	maxSize int64
	log     *slog.Logger
	closed  bool

	windows []openWindow           // open windows, oldest first; the last gets the writes
	touched map[string]bool        // paths with a pre-image in the current period
	clean   map[string]bool        // touched paths whose post-image was taken at release, untouched since
	last    map[string]index.State // last recorded state of each path
	writers map[*writer]struct{}   // open writable handles
	stats   Stats
}

type openWindow struct {
	id, tool, label string
}

// Stats counts what the recorder has done since it started.
type Stats struct {
	Windows      int   // windows opened
	Records      int   // records appended
	ObjectsNew   int   // objects stored that were not in the store
	BytesStored  int64 // content bytes hashed and stored
	Skipped      int   // skip records
	CaptureError int   // failed captures (the operation was refused)
}

// New returns a Recorder.
func New(o Options) (*Recorder, error) {
	ex, err := NewExcluder(append(slices.Clone(DefaultExcludes), o.Excludes...))
	if err != nil {
		return nil, err
	}
	if o.MaxFileSize == 0 {
		o.MaxFileSize = DefaultMaxFileSize
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Recorder{
		store: o.Store, tl: o.Timeline, src: o.Source, excl: ex,
		maxSize: o.MaxFileSize, log: o.Logger,
		touched: map[string]bool{}, clean: map[string]bool{}, last: map[string]index.State{}, writers: map[*writer]struct{}{},
	}
	for p, rec := range index.LastImage(o.History) {
		r.last[p] = *rec.State
	}
	// A window left open by a crashed daemon is still open in the
	// timeline; keep attributing writes to it until someone closes it.
	for _, w := range index.Windows(o.History) {
		if w.Close == nil {
			r.windows = append(r.windows, openWindow{w.ID, w.Tool, w.Label})
		}
	}
	return r, nil
}

// Excluded reports whether rel is outside capture.
func (r *Recorder) Excluded(rel string) bool { return r.excl.Excluded(rel) }

// Stats returns a copy of the counters.
func (r *Recorder) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

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

// current is the window id of the current period, "" outside windows.
func (r *Recorder) current() string {
	if len(r.windows) == 0 {
		return ""
	}
	return r.windows[len(r.windows)-1].id
}

// OpenWindow opens a window: a boundary, after which writes belong to it.
func (r *Recorder) OpenWindow(id, tool, label string) (uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return 0, ErrExclusiveClose
	}
	if id == "" {
		return 0, errors.New("window id is empty")
	}
	for _, w := range r.windows {
		if w.id == id {
			return 0, fmt.Errorf("%w: %s", ErrWindowOpen, id)
		}
	}
	if err := r.flushPeriod(); err != nil {
		return 0, err
	}
	rec := &index.Record{Kind: index.KindOpen, Window: id, Tool: tool, Label: label}
	if err := r.append(rec, true); err != nil {
		return 0, err
	}
	r.windows = append(r.windows, openWindow{id, tool, label})
	r.stats.Windows++
	return rec.Seq, r.startPeriod()
}

// CloseWindow closes the window id ("" closes the newest): a boundary.
func (r *Recorder) CloseWindow(id string) (uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return 0, ErrExclusiveClose
	}
	i := len(r.windows) - 1
	if id != "" {
		i = slices.IndexFunc(r.windows, func(w openWindow) bool { return w.id == id })
	}
	if i < 0 {
		return 0, fmt.Errorf("%w: %q", ErrNoWindow, id)
	}
	id = r.windows[i].id
	if err := r.flushPeriod(); err != nil {
		return 0, err
	}
	rec := &index.Record{Kind: index.KindClose, Window: id}
	if err := r.append(rec, true); err != nil {
		return 0, err
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
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	err := r.flushPeriod()
	if err == nil {
		if err = r.syncObjects(); err == nil {
			err = r.tl.Sync()
		}
	}
	r.closed = true
	return err
}

// flushPeriod appends an after image for every touched path whose state
// differs from its last record.
func (r *Recorder) flushPeriod() error {
	paths := make([]string, 0, len(r.touched))
	for p := range r.touched {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		if r.clean[p] && r.unchanged(p) {
			continue
		}
		if err := r.recordAfter(p); err != nil {
			return err
		}
	}
	return nil
}

// unchanged reports whether rel's type, size, mode and mtime are still
// those of its last record: for a path whose post-image was taken when its
// last handle was released and that no operation has touched since (only a
// write through a memory mapping kept after close could change it, and
// that moves the mtime).
func (r *Recorder) unchanged(rel string) bool {
	last, ok := r.last[rel]
	if !ok || last.Type != index.TypeFile {
		return false
	}
	var st unix.Stat_t
	if err := r.src.Lstat(rel, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return false
	}
	return st.Size == last.Size && st.Mtim.Sec*1e9+st.Mtim.Nsec == last.MTime && uint32(st.Mode)&0o7777 == last.Mode
}

// startPeriod resets first-write tracking and takes pre-images of paths
// whose writable handles stay open across the boundary.
func (r *Recorder) startPeriod() error {
	clear(r.touched)
	clear(r.clean)
	for _, p := range r.writerPaths() {
		if err := r.touch(p); err != nil {
			return err
		}
	}
	return nil
}

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

// touch records the pre-image of rel once per period.
func (r *Recorder) touch(rel string) error {
	if r.closed {
		return ErrExclusiveClose
	}
	if r.touched[rel] {
		delete(r.clean, rel) // touched again since its post-image
		return nil
	}
	if r.excl.Excluded(rel) {
		return nil
	}
	st, reason, err := r.image(rel, true)
	if err != nil {
		return r.fail(rel, err)
	}
	rec := &index.Record{Path: rel, State: &st, Window: r.current(), Kind: index.KindBefore}
	switch {
	case reason != "":
		rec.Kind, rec.Reason = index.KindSkip, reason
	case rec.Window == "":
		rec.Kind, rec.Image = index.KindOutside, index.ImageBefore
	}
	// A pre-image with content must be durable before the operation
	// goes on; one of an absent path or a directory loses nothing if a
	// power cut takes it, and is written without waiting.
	if err := r.append(rec, st.Hash != ""); err != nil {
		return r.fail(rel, err)
	}
	r.touched[rel] = true
	r.last[rel] = st
	return nil
}

// recordAfter appends the post-image of rel if it differs from its last
// record.
func (r *Recorder) recordAfter(rel string) error {
	st, reason, err := r.image(rel, false)
	if err != nil {
		return r.fail(rel, err)
	}
	if last, ok := r.last[rel]; ok && last == st {
		return nil
	}
	rec := &index.Record{Path: rel, State: &st, Window: r.current(), Kind: index.KindAfter}
	switch {
	case reason != "":
		rec.Kind, rec.Reason = index.KindSkip, reason
	case rec.Window == "":
		rec.Kind, rec.Image = index.KindOutside, index.ImageAfter
	}
	if err := r.append(rec, false); err != nil {
		return r.fail(rel, err)
	}
	r.last[rel] = st
	return nil
}

// append writes rec to the timeline. A durable append first makes every
// deferred object durable (the fdatasync that follows makes earlier
// deferred records durable too, and they must not name a lost object).
func (r *Recorder) append(rec *index.Record, durable bool) error {
	var err error
	if durable {
		if err = r.syncObjects(); err == nil {
			err = r.tl.Append(rec)
		}
	} else {
		err = r.tl.AppendDeferred(rec)
	}
	if err != nil {
		return err
	}
	r.stats.Records++
	if rec.Kind == index.KindSkip {
		r.stats.Skipped++
	}
	return nil
}

func (r *Recorder) fail(rel string, err error) error {
	r.stats.CaptureError++
	r.log.Error("capture failed; the operation is refused", "path", rel, "err", err)
	return fmt.Errorf("capture %s: %w", rel, err)
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
		return ErrExclusiveClose
	}
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
			r.stats.Records++
			if rec.IsImage() {
				r.last[rec.Path] = *rec.State
			}
		}
		return nil
	}, open)
	// What was written bypassed the mount: the next change of any path
	// takes a fresh pre-image.
	clear(r.touched)
	clear(r.clean)
	if serr := r.startPeriod(); err == nil {
		err = serr
	}
	return err
}
