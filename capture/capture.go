// Package capture is ckfs's window state machine. It decides when a
// pre-image or a post-image of a path is taken and writes the records; the
// FUSE layer only tells it what is about to happen. It never reads the
// workspace through the mount: images are read from the backing directory
// through a Source.
//
// Periods. The timeline is cut into periods by boundaries (a window opens
// or closes). In a period, the first mutating operation on a path records
// its pre-image (a before record inside a window, an outside record with
// image "before" when no window is open). The post-image is taken by a
// background worker once the last writable handle on the path is released
// (postimage.go), and at the next boundary for every path the period
// touched whose state differs from its last record. Paths with writable handles still open at a boundary get a
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
	"sync"
	"sync/atomic"
	"time"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/internal/proc"
)

// DefaultMaxFileSize is the largest file whose content is stored; larger
// files get skip records.
const DefaultMaxFileSize = 16 << 20

// Errors returned to callers.
var (
	ErrWindowOpen = errors.New("a window with this id is already open")
	ErrNoWindow   = errors.New("no such open window")
	ErrClosed     = errors.New("recorder is closed")
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
	// Procs tells which tool call a write belongs to when several windows
	// are open (proc.System{} on Linux); nil credits such writes to the
	// newest window.
	Procs proc.Table
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
	procs   proc.Table
	closed  bool

	windows []openWindow           // open windows, oldest first
	recent  []openWindow           // closed windows that know their process, oldest first (at most recentMax)
	touched map[string]owner       // paths with a pre-image in the current period, and the window they belong to
	owners  map[uint32]owner       // the window of each writer process this period (several windows open)
	ops     int                    // operations in flight: pre-image taken, not yet on disk (BeginChange)
	opsDone *sync.Cond             // signals that ops fell to 0 (on mu)
	endFn   func()                 // r.endOp, made once (begin hands it out)
	unclean map[string]struct{}    // touched paths without a post-image since their last change (the rest are clean: settle, unsettle)
	calm    map[string]bool        // touched paths no operation touched since the last QueueQuiet
	last    map[string]index.State // last recorded state of each path
	lastSeq map[string]uint64      // seq of that record
	writers map[*writer]struct{}   // open writable handles
	dirs    map[string]*dirRun     // durable pre-images per directory this period (prefetch.go)
	listed  listings               // directories the period's batches listed (prefetch.go)
	bulk    bool                   // this period has taken a batch of pre-images
	noBatch bool                   // the store filled up in a batch: none more this period
	batch   int                    // the size of the period's next batch (0: prefetchFirst)
	ahead   *batch                 // the batch taken ahead, off the lock (ahead.go)

	// The post-image worker (postimage.go) takes the post-images of
	// released handles off the request path.
	pending map[string]struct{} // paths whose last writable handle was released
	// inflight are the paths whose images the worker is taking (while
	// busy), each true once void: the path changed again, or the period
	// was flushed.
	inflight map[string]bool
	work     *sync.Cond    // signals the worker (on mu)
	idle     *sync.Cond    // signals that the worker has nothing to do (on mu)
	busy     bool          // the worker is taking images
	done     chan struct{} // closed when the worker has stopped

	// The counters are atomic: they are bumped on the request path and by
	// the post-image worker outside mu, and read by status at any time.
	// statsMu guards only the rare disk-full fields of stats.
	count   counters
	statsMu sync.Mutex
	stats   Stats
}

type openWindow struct {
	id, tool, label string
	agent           Agent
}

// Stats counts what the recorder has done since it started.
type Stats struct {
	Windows      int   // windows opened
	Records      int   // records appended
	ObjectsNew   int   // objects stored that were not in the store
	BytesStored  int64 // content bytes hashed and stored
	Skipped      int   // skip records
	Prefetched   int   // pre-images taken in a batch ahead of their path's change (prefetch.go)
	CaptureError int   // failed captures (the operation was refused)
	// StoreFull counts disk-full events: writes refused with ENOSPC and
	// post-images recorded as skips; StoreFullSince is when the current
	// spell began (zero once the store has room again).
	StoreFull      int
	StoreFullSince time.Time
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
		maxSize: o.MaxFileSize, log: o.Logger, procs: o.Procs,
		touched: map[string]owner{}, unclean: map[string]struct{}{}, lastSeq: map[string]uint64{}, last: map[string]index.State{}, writers: map[*writer]struct{}{},
		pending: map[string]struct{}{},
	}
	r.opsDone = sync.NewCond(&r.mu)
	r.endFn = r.endOp
	for p, rec := range index.LastImage(o.History) {
		r.last[p], r.lastSeq[p] = *rec.State, rec.Seq
	}
	// A window left open by a crashed daemon is still open in the
	// timeline; keep attributing writes to it until someone closes it.
	for _, w := range index.Windows(o.History) {
		if w.Close == nil {
			r.windows = append(r.windows, openWindow{id: w.ID, tool: w.Tool, label: w.Label})
		}
	}
	r.startWorker()
	return r, nil
}

// Excluded reports whether rel is outside capture.
func (r *Recorder) Excluded(rel string) bool { return r.excl.Excluded(rel) }

// counters are the Stats fields counted on busy paths.
type counters struct {
	windows, records, objectsNew, bytesStored, skipped, captureError, prefetched atomic.Int64
}

// Stats returns a copy of the counters.
func (r *Recorder) Stats() Stats {
	r.statsMu.Lock()
	s := r.stats
	r.statsMu.Unlock()
	c := &r.count
	s.Windows, s.Records, s.ObjectsNew = int(c.windows.Load()), int(c.records.Load()), int(c.objectsNew.Load())
	s.BytesStored, s.Skipped, s.CaptureError = c.bytesStored.Load(), int(c.skipped.Load()), int(c.captureError.Load())
	s.Prefetched = int(c.prefetched.Load())
	return s
}

// touch records the pre-image of rel once per period, in the window of
// the process pid (see ownerFor).
func (r *Recorder) touch(pid uint32, rel string) error {
	if r.closed {
		return ErrClosed
	}
	// A post-image queued or being taken for rel is void: rel is changing
	// again (no map write when nothing is queued: this is the request path).
	if len(r.pending) > 0 {
		delete(r.pending, rel)
	}
	if r.busy {
		if _, ok := r.inflight[rel]; ok {
			r.inflight[rel] = true
		}
	}
	if _, ok := r.touched[rel]; ok {
		if r.clean(rel) {
			r.unsettle(rel) // touched again since its post-image
		}
		if len(r.calm) > 0 {
			delete(r.calm, rel)
		}
		return nil
	}
	if r.excl.Excluded(rel) {
		return nil
	}
	took, err := r.prefetch(pid, rel)
	if err == nil && took {
		return nil
	}
	st, ctime, reason := index.State{}, int64(0), ""
	if err == nil {
		st, ctime, reason, err = r.preImage(rel, durableSink)
	}
	if err != nil {
		if index.IsDiskFull(err) {
			r.storeFull()
			err = fmt.Errorf("%w: %w", ErrStoreFull, err)
		}
		return r.fail(rel, err)
	}
	// What the disk holds must be what the timeline last recorded, or a
	// change behind the mount would be credited to this window (found.go).
	// The found record goes first, durable: its content is about to go.
	if last, ok := r.last[rel]; ok && reason == "" && changedBehind(last, st) && !r.hasWriter(rel) {
		if err := r.appendFound(rel, st, index.FoundChange, true); err != nil {
			if index.IsDiskFull(err) {
				r.storeFull()
				err = fmt.Errorf("%w: %w", ErrStoreFull, err)
			}
			return err
		}
	}
	own := r.ownerFor(pid)
	rec := imageRecord(rel, own, &st, reason, index.KindBefore, index.ImageBefore)
	if rec.IsPreImage() {
		rec.CTime = ctime
	}
	// A pre-image with content must be durable before the operation
	// goes on, unless it says nothing new: the path's last record holds
	// the same state and is durable already. One of an absent path or a
	// directory loses nothing if a power cut takes it. Those are written
	// without waiting.
	durable := st.Hash != ""
	if last, ok := r.last[rel]; ok && last == st && r.lastSeq[rel] <= r.tl.SyncedSeq() {
		durable = false
	}
	if err := r.append(rec, durable); err != nil {
		if index.IsDiskFull(err) {
			r.storeFull()
			err = fmt.Errorf("%w: %w", ErrStoreFull, err)
		}
		return r.fail(rel, err)
	}
	r.touched[rel] = own
	r.unclean[rel] = struct{}{}
	r.last[rel] = st
	r.noteTouched(rel, durable)
	return nil
}

// recordAfter appends the post-image of rel if it differs from its last
// record.
func (r *Recorder) recordAfter(rel string) error {
	st, reason, err := r.image(rel, deferredSink)
	return r.finishAfter(rel, st, reason, err)
}

// finishAfter records the post-image image returned for rel.
func (r *Recorder) finishAfter(rel string, st index.State, reason string, err error) error {
	if err != nil && index.IsDiskFull(err) {
		// The change has happened; record that it did, and that its
		// content could not be kept.
		r.storeFull()
		st, reason, err = index.State{}, ReasonStoreFull, nil
		if st, err = r.statOnly(rel); err == nil && (st.Type == index.TypeAbsent || st.Type == index.TypeDir || st.Type.Special()) {
			reason = "" // nothing to store: a plain image
		}
	}
	if err != nil {
		r.countError()
		r.log.Error("post-image not recorded (the change itself went through; the next boundary tries again)", "path", rel, "err", err)
		return fmt.Errorf("capture %s: %w", rel, err)
	}
	if last, ok := r.last[rel]; ok && last == st {
		return nil
	}
	rec := imageRecord(rel, r.touched[rel], &st, reason, index.KindAfter, index.ImageAfter)
	if err := r.append(rec, false); err != nil {
		return r.fail(rel, err)
	}
	r.last[rel] = st
	return nil
}

// imageRecord is the record of an image of rel in own's window: a skip
// when its content was not stored (reason), an outside image when no
// window is open, else kind.
func imageRecord(rel string, own owner, st *index.State, reason string, kind index.Kind, image index.Image) *index.Record {
	rec := &index.Record{Path: rel, State: st, Window: own.window, By: own.by, Kind: kind}
	switch {
	case reason != "":
		rec.Kind, rec.Reason = index.KindSkip, reason
	case rec.Window == "":
		rec.Kind, rec.Image = index.KindOutside, image
	}
	return rec
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
	if rec.IsImage() {
		r.lastSeq[rec.Path] = rec.Seq
	}
	r.count.records.Add(1)
	if rec.Kind == index.KindSkip {
		r.count.skipped.Add(1)
	}
	return nil
}

func (r *Recorder) fail(rel string, err error) error {
	r.countError()
	r.log.Error("capture failed; the operation is refused", "path", rel, "err", err)
	return fmt.Errorf("capture %s: %w", rel, err)
}
