package capture

import (
	"slices"

	"github.com/ckfs-dev/ckfs/index"
)

// Reconciling after a crash. A daemon killed while it served writes leaves
// the timeline without the post-images of its last period (they are taken
// at release and at boundaries, which never came) and, if a window was
// open, without that window's close. Left alone, the dead window would
// swallow every later write, block every rewind, and `ckfs show` would give
// the content from before the window for what it wrote.
//
// Reconcile, run when a daemon starts and before it serves anything,
// finishes that work: it takes a post-image of what is on disk now of every
// path the last period or a left-open window touched (attributed to the
// window, or recorded as an outside change), then closes every left-open
// window with reason "interrupted". What it records is what is on disk at
// the new start: it includes any change made to the directory while it was
// not mounted, which ckfs cannot tell apart from the window's own writes.

// Reconciled is what Reconcile did.
type Reconciled struct {
	Windows []string // windows closed as interrupted, oldest first
	Paths   int      // post-images recorded
}

// Reconcile closes the work a dead daemon left unfinished (see above).
// history is the timeline as loaded at start.
func (r *Recorder) Reconcile(history []index.Record) (Reconciled, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out Reconciled
	if r.closed {
		return out, ErrClosed
	}
	open := map[string]bool{}
	for _, w := range r.windows {
		open[w.id] = true
	}
	// Paths touched after the last boundary, and paths touched in a
	// left-open window, with the window each belongs to.
	lastBoundary := uint64(0)
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].IsBoundary() {
			lastBoundary = history[i].Seq
			break
		}
	}
	owner := map[string]string{}
	for i := range history {
		rec := &history[i]
		if !rec.IsImage() || (rec.Seq <= lastBoundary && !open[rec.Window]) {
			continue
		}
		if open[rec.Window] {
			owner[rec.Path] = rec.Window
		} else {
			owner[rec.Path] = "" // an outside change, or a rewind's own images
		}
	}
	paths := make([]string, 0, len(owner))
	for p := range owner {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		if r.excl.Excluded(p) {
			continue
		}
		st, reason, err := r.image(p, deferredSink)
		if err != nil {
			return out, r.fail(p, err)
		}
		if last, ok := r.last[p]; ok && last == st {
			continue
		}
		rec := &index.Record{Path: p, State: &st, Window: owner[p], Kind: index.KindAfter}
		switch {
		case reason != "":
			rec.Kind, rec.Reason = index.KindSkip, reason
		case rec.Window == "":
			rec.Kind, rec.Image = index.KindOutside, index.ImageAfter
		}
		if err := r.append(rec, false); err != nil {
			return out, r.fail(p, err)
		}
		r.last[p] = st
		out.Paths++
	}
	for len(r.windows) > 0 {
		w := r.windows[0]
		rec := &index.Record{Kind: index.KindClose, Window: w.id, Reason: index.ReasonInterrupted}
		if err := r.append(rec, true); err != nil {
			return out, err
		}
		r.windows = r.windows[1:]
		out.Windows = append(out.Windows, w.id)
	}
	if out.Paths > 0 && len(out.Windows) == 0 {
		if err := r.syncObjects(); err != nil {
			return out, err
		}
		if err := r.tl.Sync(); err != nil {
			return out, err
		}
	}
	return out, nil
}
