package capture

import (
	"errors"
	"fmt"
	"time"

	"github.com/ckfs-dev/ckfs/index"
	"golang.org/x/sys/unix"
)

// The store's disk full: the policy. ckfs never lets a change through
// whose pre-image it could not store, and never lets a full store wedge
// the agent:
//
//   - A mutating operation whose pre-image cannot be stored is refused with
//     ENOSPC before it reaches the workspace: nothing changes, and the
//     writer sees "No space left on device", exactly as if the workspace
//     itself were full.
//   - A post-image that cannot be stored (the change has happened) is
//     recorded as a skip with ReasonStoreFull: ckfs knows the path changed
//     and that it cannot restore that state, and a rewind says so.
//   - Boundaries always succeed: a window opens and closes whatever the
//     store's disk says; the timeline's reserve (index.ReserveFile) lets
//     those records through.
//
// Each event is counted (Stats.StoreFull, StoreFullSince) for ckfs status
// and ckfs doctor.

// ReasonStoreFull is the skip reason of a post-image the full store
// could not hold.
const ReasonStoreFull = "not stored: the store's disk is full"

// ErrStoreFull wraps the error of a pre-image the full store could not
// hold; the FUSE layer answers ENOSPC.
var ErrStoreFull = errors.New("the store's disk is full")

// storeFull counts a disk-full event.
func (r *Recorder) storeFull() {
	r.statsMu.Lock()
	defer r.statsMu.Unlock()
	r.stats.StoreFull++
	if r.stats.StoreFullSince.IsZero() {
		r.stats.StoreFullSince = time.Now().UTC()
	}
}

// statOnly returns rel's state without its content (for a skip record).
func (r *Recorder) statOnly(rel string) (index.State, error) {
	var s unix.Stat_t
	st, known, err := r.lstat(rel, &s)
	if err == nil && !known {
		err = fmt.Errorf("%s: unknown file type (mode %o)", rel, s.Mode&unix.S_IFMT)
	}
	return st, err
}

// StoreFullNow reports whether the last append had to use the timeline's
// reserve, which has not been refilled since: the store's disk is full.
func (r *Recorder) StoreFullNow() bool { return r.tl.ReserveUsed() }

// RefillReserve remakes the timeline's reserve when there is room again;
// the daemon calls it periodically. It reports whether the store has its
// reserve (the disk is not full).
func (r *Recorder) RefillReserve() bool {
	ok := r.tl.RefillReserve()
	if ok {
		r.statsMu.Lock()
		r.stats.StoreFullSince = time.Time{}
		r.statsMu.Unlock()
	}
	return ok
}

// roomForContent fails with ENOSPC while the store is out of room: from
// the append that had to spend the timeline's reserve until the reserve is
// made again. Objects must not eat the space the reserve freed for
// records.
func (r *Recorder) roomForContent() error {
	if !r.tl.ReserveUsed() {
		return nil
	}
	// Space may have been freed since: then make the reserve again and
	// go on (a statfs while there is none).
	if r.tl.RefillReserve() {
		r.statsMu.Lock()
		r.stats.StoreFullSince = time.Time{}
		r.statsMu.Unlock()
		return nil
	}
	return fmt.Errorf("the timeline's reserve is in use: %w", unix.ENOSPC)
}
