package capture

import (
	"path"

	"golang.org/x/sys/unix"
)

// Batches taken ahead. A batch of pre-images holds up the operation that
// started it: every file is read, hashed and compressed, and the pack
// fsynced, before that one unlink goes through. A tool working through a
// tree (rm -rf, git checkout) then waits batch by batch. So a batch that
// fills up starts the next one at once, where its walk stopped: the next
// files are chosen on the lock, and their images taken off it while the
// tool works through the files of the batch before.
//
// Nothing may change a file between its image and its record. The files
// of a batch taken ahead are claimed while it is chosen: the first change
// of any of them waits for the batch and lands it (records its
// pre-images) before it goes on, exactly as if the batch had been taken
// then. Every change through the mount passes there first (touch), so
// only another name of the file could change it meanwhile, which needs a
// hard link: landing checks that every file still has one link and the
// stat its image saw, and leaves out any that does not, for its own
// change to take. A boundary (and a rewind, a flush, the recorder's
// close) lands the batch before it records the period's post-images; a
// change that would start another batch lands it first, so that two
// batches never share a file.

// claims reports whether p is one of the batch's files.
func (b *batch) claims(p string) bool {
	_, ok := b.claimed[p]
	return ok
}

// startAhead starts the batch after prev, where prev's walk stopped once
// it was full, when the period may still batch. r.mu is held.
func (r *Recorder) startAhead(prev *batch) {
	if prev == nil || prev.next == "" || r.ahead != nil || r.closed || len(r.windows) > 1 || r.noBatch || r.tl.ReserveUsed() {
		return
	}
	b := r.newBatch(prev.own)
	b.claimed = map[string]struct{}{}
	limit, up := prev.limit, prev.up
	if !up {
		dir := prev.next
		if !prev.nextDir {
			dir = path.Dir(dir)
		}
		limit, up = r.touchedAbove(dir)
	}
	b.choose(prev.next, prev.nextDir, limit, up && b.deep)
	if len(b.paths) == 0 {
		b.abort()
		return
	}
	b.done = make(chan struct{})
	r.ahead = b
	go func() {
		defer close(b.done)
		b.store()
	}()
}

// landAhead waits for the batch taken ahead, if one is, and records its
// pre-images, leaving out any file whose stat moved since its image. It
// returns the batch, nil when there was none or it could not be recorded
// (each file's own change then takes its pre-image). r.mu is held.
func (r *Recorder) landAhead() *batch {
	b := r.ahead
	if b == nil {
		return nil
	}
	r.ahead = nil
	<-b.done
	defer b.abort()
	b.keep()
	recs := b.recs[:0]
	paths := make([]string, len(b.recs))
	for i, rec := range b.recs {
		paths[i] = rec.Path
	}
	r.lstatEach(paths, func(i int, st *unix.Stat_t, err error) {
		if rec := b.recs[i]; err == nil && st.Nlink == 1 && statMatches(st, nil, *rec.State) {
			recs = append(recs, rec)
		}
	})
	b.recs = recs
	if _, err := r.land(b); err != nil {
		r.log.Warn("pre-images taken ahead not recorded; each file's own change takes its own", "err", err)
		return nil
	}
	return b
}
