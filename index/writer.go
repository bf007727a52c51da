package index

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/ckfs-dev/ckfs/internal/durable"
	"github.com/ckfs-dev/ckfs/internal/jsonl"
	"github.com/gofrs/flock"
)

// File names inside a store directory.
const (
	TimelineFile = "snapshots.jsonl"
	LockFile     = "lock"
)

// ErrLocked means another process holds the store's writer lock (a mounted
// daemon or a rewind in progress).
var ErrLocked = errors.New("store is locked by another ckfs process")

// WriterOptions configure a Writer. The zero value is the production
// setting.
type WriterOptions struct {
	// Clock gives record times; time.Now if nil. Tests inject their own.
	Clock func() time.Time
	// NoSync skips the fdatasync after each append. Only benchmarks and
	// tests that measure something else may set it.
	NoSync bool
}

// Repair describes what OpenWriter did to a timeline whose last append was
// interrupted.
type Repair struct {
	Offset    int64 // where the torn line started; the file now ends here
	TornBytes int64 // how many bytes were removed
}

func (r *Repair) String() string {
	return fmt.Sprintf("removed a torn last line of %d bytes at offset %d (an append interrupted by a crash)", r.TornBytes, r.Offset)
}

// Writer is the single writer of a store's timeline. It holds the store's
// lock until Close, assigns increasing seqs, and appends each batch of
// records with one write followed by fdatasync: when Append returns, the
// records are durable. Callers must make every object a record names
// durable before appending the record (cas.Put does).
type Writer struct {
	mu     sync.Mutex
	f      *os.File
	lock   *flock.Flock
	seq    uint64
	opts   WriterOptions
	buf    bytes.Buffer
	path   string
	size   int64  // file size: where the next append starts
	dirty  bool   // records written but not yet fdatasynced
	synced uint64 // every record up to this seq is durable

	reserveUsed bool // the reserve was spent on a full disk (reserve.go)
}

// OpenWriter takes the store's lock in dir and opens its timeline for
// appending, creating it if needed. If the last line is torn it is removed
// and described in the returned Repair.
func OpenWriter(dir string, opts WriterOptions) (*Writer, *Repair, error) {
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	lk := flock.New(filepath.Join(dir, LockFile))
	ok, err := lk.TryLock()
	if err != nil {
		return nil, nil, fmt.Errorf("lock store %s: %w", dir, err)
	}
	if !ok {
		return nil, nil, fmt.Errorf("%w (%s): unmount it or wait for the rewind to finish", ErrLocked, dir)
	}
	path := filepath.Join(dir, TimelineFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		lk.Unlock()
		return nil, nil, fmt.Errorf("open timeline: %w", err)
	}
	w := &Writer{f: f, lock: lk, opts: opts, path: path}
	rep, err := w.recover()
	if err != nil {
		f.Close()
		lk.Unlock()
		return nil, nil, err
	}
	w.refillReserve() // best effort: a full disk gets none until later
	return w, rep, nil
}

// tailWindow is how much of the end of the timeline recover reads to find
// the last record. A single record is far smaller.
const tailWindow = 1 << 20

// tail finds the last complete line of a timeline file: its bytes (nil
// for an empty timeline), the offset just after it, where a torn tail
// would begin, and the file's size.
func tail(f *os.File, path string) ([]byte, int64, int64, error) {
	last, end, size, err := jsonl.Tail(f, tailWindow)
	if errors.Is(err, jsonl.ErrNoLine) {
		return nil, 0, 0, fmt.Errorf("timeline %s: the last %d bytes hold no complete record; run ckfs verify --repair with the workspace unmounted (it moves them to quarantine/)", path, tailWindow)
	}
	if err != nil {
		return nil, 0, 0, fmt.Errorf("read timeline %s: %w", path, err)
	}
	return last, end, size, nil
}

// LastSeq reads the seq of the last complete record of the timeline at
// path (0 for an empty or missing one) without reading the rest.
func LastSeq(path string) (uint64, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	last, _, _, err := tail(f, path)
	if err != nil || last == nil {
		return 0, err
	}
	rec, err := ParseRecord(last)
	if err != nil {
		return 0, fmt.Errorf("timeline %s: last record is invalid: %w; run ckfs verify --repair with the workspace unmounted (it moves bad lines to quarantine/ and keeps every good record)", path, err)
	}
	return rec.Seq, nil
}

// recover finds the last complete record (for its seq) and truncates a
// torn tail after it.
func (w *Writer) recover() (*Repair, error) {
	last, end, size, err := tail(w.f, w.path)
	if err != nil {
		return nil, err
	}
	var rep *Repair
	if end < size {
		rep = &Repair{Offset: end, TornBytes: size - end}
		if err := w.f.Truncate(end); err != nil {
			return nil, fmt.Errorf("truncate torn tail of %s: %w", w.path, err)
		}
		if err := w.f.Sync(); err != nil {
			return nil, err
		}
	}
	w.size = end
	if last == nil {
		return rep, nil // empty timeline
	}
	rec, err := ParseRecord(last)
	if err != nil {
		return nil, fmt.Errorf("timeline %s: last record is invalid: %w; run ckfs verify --repair with the workspace unmounted (it moves bad lines to quarantine/ and keeps every good record)", w.path, err)
	}
	// What a killed writer left in the page cache is made durable now.
	if err := durable.Datasync(w.f); err != nil {
		return nil, err
	}
	w.seq, w.synced = rec.Seq, rec.Seq
	return rep, nil
}

// LastSeq returns the seq of the last record appended.
func (w *Writer) LastSeq() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seq
}

// Append assigns seq, time and version to recs, validates them and appends
// them durably, in order, with one write. On error nothing is appended
// (a partial write is truncated away) and the seqs are not consumed.
func (w *Writer) Append(recs ...*Record) error {
	return w.append(recs, !w.opts.NoSync, true)
}

// AppendIfRoom is Append without the reserve: when the disk is full it
// fails with the disk-full error and appends nothing, leaving the reserve
// to records that must get through (for records that may be left out, such
// as pre-images taken ahead of their change).
func (w *Writer) AppendIfRoom(recs ...*Record) error {
	return w.append(recs, !w.opts.NoSync, false)
}

func (w *Writer) append(recs []*Record, sync, reserve bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return errors.New("timeline writer is closed")
	}
	now := w.opts.Clock().UTC()
	w.buf.Reset()
	seq := w.seq
	for _, r := range recs {
		seq++
		r.V, r.Seq, r.Time = Version, seq, now
		if err := r.Validate(); err != nil {
			return fmt.Errorf("append %s record: %w", r.Kind, err)
		}
		out := r
		if enc := EncodePath(r.Path); enc != r.Path {
			c := *r
			c.Path = enc
			out = &c
		}
		b, err := json.Marshal(out)
		if err != nil {
			return err
		}
		w.buf.Write(b)
		w.buf.WriteByte('\n')
	}
	_, err := w.f.Write(w.buf.Bytes())
	if err != nil && IsDiskFull(err) && reserve && w.useReserve() {
		w.f.Truncate(w.size)
		_, err = w.f.Write(w.buf.Bytes())
	}
	if err != nil {
		w.f.Truncate(w.size)
		return fmt.Errorf("append to %s: %w", w.path, err)
	}
	w.dirty = true
	if sync {
		if err := durable.Datasync(w.f); err != nil {
			return fmt.Errorf("sync %s: %w", w.path, err)
		}
		w.dirty = false
		w.synced = seq
	}
	w.seq = seq
	w.size += int64(w.buf.Len())
	return nil
}

// Close releases the file and the store lock.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	if uerr := w.lock.Unlock(); err == nil {
		err = uerr
	}
	return err
}

// AppendDeferred is Append without the fdatasync: the records are written
// (they survive the process being killed) but may not survive a power loss
// until Sync or a later Append. Only records whose loss loses no content
// may be appended this way (post-images, pre-images of absent paths).
func (w *Writer) AppendDeferred(recs ...*Record) error {
	return w.append(recs, false, true)
}

// Sync makes every record appended so far durable.
func (w *Writer) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil || !w.dirty {
		return nil
	}
	if err := durable.Datasync(w.f); err != nil {
		return fmt.Errorf("sync %s: %w", w.path, err)
	}
	w.dirty = false
	w.synced = w.seq
	return nil
}

// SyncedSeq returns the seq up to which every record is durable.
func (w *Writer) SyncedSeq() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.synced
}
