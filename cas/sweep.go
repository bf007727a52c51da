package cas

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ckfs-dev/ckfs/internal/hashid"
)

// Garbage collection deletes objects that a reachability pass over the
// records found unreferenced. The pass reads the records at one moment;
// a writer may store (or find already stored) the same content a moment
// later and name it in a new record. A Sweep makes that race harmless for
// writers that use the same Local: every address a Put family call sees
// while a sweep is active is recorded before the call looks at the disk,
// and Sweep.Delete refuses those addresses under the same lock. Writers in
// other processes are kept out by the timeline's writer lock (the caller's
// job); as a second guard, Delete never removes an object whose inode
// changed after the sweep began.

// sweepGuard is the state shared by a Local and its active sweep.
type sweepGuard struct {
	active  atomic.Bool // a sweep is running: Puts must record their addresses
	mu      sync.Mutex
	touched map[Hash]struct{} // nil when no sweep is active
}

// touch records that h is being stored or referenced now. Outside a sweep
// it costs one atomic load: Put is on the capture path.
func (l *Local) touch(h Hash) {
	if !l.sweep.active.Load() {
		return
	}
	l.sweep.mu.Lock()
	if l.sweep.touched != nil {
		l.sweep.touched[h] = struct{}{}
	}
	l.sweep.mu.Unlock()
}

// DefaultGrace is the grace a sweep gives objects written just before it.
const DefaultGrace = 2 * time.Second

// Sweep deletes unreferenced objects safely against concurrent writers of
// the same Local. Only one sweep may be active at a time.
type Sweep struct {
	l     *Local
	start time.Time
	// unpacked are objects this sweep wrote out of a pack it removed
	// one of their neighbours from: their new object files are as old
	// as the pack was.
	unpacked map[Hash]bool
	// dead are the objects the caller is about to delete (Dead); dropped
	// those of them left out of a pack it unpacked.
	dead, dropped map[Hash]bool
}

// Dead tells the sweep which objects it is about to be asked to delete, so
// that a pack holding several of them is unpacked once, without them all.
func (s *Sweep) Dead(hs []Hash) {
	s.l.sweep.mu.Lock()
	defer s.l.sweep.mu.Unlock()
	for _, h := range hs {
		s.dead[h] = true
	}
}

// ErrSweepActive means another sweep of the same store is running.
var ErrSweepActive = errors.New("another garbage collection of this store is running")

// BeginSweep starts a sweep. Call it before reading the records whose
// references decide what is kept, and End it when done. Objects whose
// inode changed less than grace before the sweep began, or after, are
// never deleted by it (DefaultGrace covers the change-time granularity of
// common filesystems; tests pass a negative grace to turn the guard off).
func (l *Local) BeginSweep(grace time.Duration) (*Sweep, error) {
	l.sweep.mu.Lock()
	defer l.sweep.mu.Unlock()
	if l.sweep.touched != nil {
		return nil, ErrSweepActive
	}
	l.sweep.touched = map[Hash]struct{}{}
	l.sweep.active.Store(true)
	return &Sweep{l: l, start: time.Now().Add(-grace), unpacked: map[Hash]bool{}, dead: map[Hash]bool{}, dropped: map[Hash]bool{}}, nil
}

// Delete removes object h unless it was stored or referenced since the
// sweep began; deleted is false when it was kept (or already gone).
func (s *Sweep) Delete(h Hash) (deleted bool, err error) {
	s.l.sweep.mu.Lock()
	defer s.l.sweep.mu.Unlock()
	if _, ok := s.l.sweep.touched[h]; ok {
		return false, nil
	}
	if s.dropped[h] {
		return true, nil
	}
	p := s.l.Path(h)
	changed, err := inodeChange(p)
	if errors.Is(err, fs.ErrNotExist) {
		return s.deletePacked(h)
	}
	if err != nil {
		return false, fmt.Errorf("delete object %s: %w", h, err)
	}
	if !changed.Before(s.start) && !s.unpacked[h] {
		return false, nil
	}
	s.l.forget(h)
	if err := os.Remove(p); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, fmt.Errorf("delete object %s: %w", h, err)
	}
	return true, nil
}

// deletePacked removes the packed copy of h: its pack is unpacked without
// it, under the same guard on the pack's change time.
func (s *Sweep) deletePacked(h Hash) (bool, error) {
	r, ok := s.l.findPacked(h, true)
	if !ok {
		return false, nil
	}
	changed, err := inodeChange(r.p.path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("delete object %s: %w", h, err)
	}
	if !changed.Before(s.start) {
		return false, nil
	}
	drop := map[Hash]bool{h: true}
	for _, e := range r.p.ents {
		o := hashid.FromDigest(e.digest)
		if _, touched := s.l.sweep.touched[o]; !s.dead[o] || touched {
			continue
		}
		if _, err := os.Lstat(s.l.Path(o)); err == nil {
			continue // its object file goes by its own Delete
		}
		drop[o] = true
	}
	for o := range drop {
		s.l.forget(o)
	}
	if err := s.l.unpack(r, drop, s.unpacked); err != nil {
		return false, fmt.Errorf("delete object %s: %w", h, err)
	}
	// Another pack may hold a copy too (two written at once): such an
	// object is not gone yet, and its Delete takes that pack next.
	for o := range drop {
		if _, still := s.l.findPacked(o, false); !still {
			s.dropped[o] = true
		}
	}
	return s.dropped[h], nil
}

// SyncDirs makes the deletions durable: one fsync per shard directory
// that lost an object (so a sweep of many objects costs one fsync per
// directory, not per object).
func (s *Sweep) SyncDirs(deleted []Hash) error {
	dirs := map[string]bool{}
	for _, h := range deleted {
		if !s.dropped[h] { // a packed copy's pack is durably gone already
			dirs[filepath.Dir(s.l.Path(h))] = true
		}
	}
	for d := range dirs {
		if err := syncDir(d); err != nil {
			return err
		}
	}
	return nil
}

// End finishes the sweep.
func (s *Sweep) End() {
	s.l.sweep.mu.Lock()
	s.l.sweep.active.Store(false)
	s.l.sweep.touched = nil
	s.l.sweep.mu.Unlock()
}
