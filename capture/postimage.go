package capture

import "sync"

// The post-image worker. When the last writable handle on a path is
// released, its post-image is queued rather than taken on the request path
// (reading, hashing and storing the file would hold up the next request,
// as creating many small files shows). One goroutine takes the queued
// images a batch at a time (stored as one pack), reading each file outside
// the recorder's lock, and records one only if nothing touched its path
// meanwhile: every hook on a path drops its queued image and voids the one
// being taken, and every flush of the period (a boundary, Flush, Close, a
// rewind) records every touched path itself and voids whatever the worker
// is taking. So the worker can only ever do early what the next boundary
// would do anyway.

// queueAfter queues rel's post-image. r.mu is held.
func (r *Recorder) queueAfter(rel string) {
	if r.work == nil {
		// A Recorder without a worker (built by hand in a test).
		if r.recordAfter(rel) == nil {
			r.settle(rel)
		}
		return
	}
	r.pending[rel] = struct{}{}
	r.work.Signal()
}

func (r *Recorder) startWorker() {
	r.work = sync.NewCond(&r.mu)
	r.idle = sync.NewCond(&r.mu)
	r.done = make(chan struct{})
	go r.postImages()
}

// stopWorker waits for the worker to stop; the recorder is closed.
func (r *Recorder) stopWorker() {
	if r.work == nil {
		return
	}
	r.mu.Lock()
	r.work.Broadcast()
	r.mu.Unlock()
	<-r.done
}

func (r *Recorder) postImages() {
	defer close(r.done)
	r.mu.Lock()
	defer func() {
		r.busy = false
		r.idle.Broadcast()
		r.mu.Unlock()
	}()
	for {
		for len(r.pending) == 0 && !r.closed {
			r.busy = false
			r.idle.Broadcast()
			r.work.Wait()
		}
		if r.closed {
			return
		}
		r.takeQueued()
	}
}

// postBatch is how many queued post-images the worker takes at once, into
// one pack where the store makes them: a burst of new files (an untar, a
// generator) then costs the store a file per batch, not one per file.
const postBatch = 256

// takeQueued takes a batch of the queued post-images, reading the files
// outside the recorder's lock, and records those whose paths nothing
// touched meanwhile. r.mu is held.
func (r *Recorder) takeQueued() {
	r.inflight = make(map[string]bool, min(len(r.pending), postBatch))
	paths := make([]string, 0, len(r.inflight))
	for rel := range r.pending {
		delete(r.pending, rel)
		r.inflight[rel] = false
		if paths = append(paths, rel); len(paths) == postBatch {
			break
		}
	}
	r.busy = true
	r.mu.Unlock()
	to := deferredSink
	if p, ok := r.store.(packer); ok && len(paths) > 1 {
		to.pack = p.NewPack()
	}
	ims := make([]image, len(paths))
	for i, rel := range paths {
		ims[i].st, ims[i].reason, ims[i].err = r.image(rel, to)
	}
	var perr error
	if to.pack != nil {
		// Visible at once, durable at the next sync of the store, as
		// a deferred object is: before any record of it is.
		perr = to.pack.CommitDeferred()
	}
	r.mu.Lock()
	for i, rel := range paths {
		if r.closed || r.inflight[rel] {
			continue // the path changed again, or the period was flushed
		}
		if _, ok := r.touched[rel]; !ok {
			continue
		}
		im := ims[i]
		if perr != nil && im.err == nil && im.reason == "" {
			im.err = perr
		}
		if r.finishAfter(rel, im.st, im.reason, im.err) == nil {
			r.settle(rel)
		}
	}
	r.inflight = nil
}

// QueueQuiet queues the post-images of touched paths that no operation
// has touched since its last call and that no writable handle holds: a
// path changed by requests without a handle (the cached model, metadata
// changes) has no release to queue it, and the boundary that would
// record it may be far off and would then have many to take at once (a
// burst of writes, an untar, before the agent's next call). The daemon
// calls it every second, so such a post-image is taken one to two seconds
// after its path's last change, off the request path.
func (r *Recorder) QueueQuiet() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.work == nil {
		return
	}
	held := map[string]bool{}
	for w := range r.writers {
		held[w.path] = true
	}
	if r.calm == nil {
		r.calm = map[string]bool{}
	}
	for p := range r.unclean {
		if _, ok := r.touched[p]; !ok {
			delete(r.unclean, p) // not this period's: nothing to queue
			continue
		}
		if held[p] {
			continue
		}
		if _, ok := r.inflight[p]; ok {
			continue
		}
		if _, ok := r.pending[p]; ok {
			continue
		}
		if !r.calm[p] {
			r.calm[p] = true
			continue
		}
		delete(r.calm, p)
		r.pending[p] = struct{}{}
	}
	if len(r.pending) > 0 {
		r.work.Signal()
	}
}

// clean reports whether rel, a touched path, has its post-image recorded
// and nothing has touched it since: the boundary checks only its stat.
// r.mu is held.
func (r *Recorder) clean(rel string) bool {
	_, unclean := r.unclean[rel]
	return !unclean
}

// settle notes that rel's post-image is recorded and that nothing has
// touched rel since: the boundary checks only its stat, and QueueQuiet no
// longer looks at it. r.mu is held.
func (r *Recorder) settle(rel string) {
	delete(r.unclean, rel)
	if len(r.calm) > 0 {
		delete(r.calm, rel)
	}
}

// unsettle notes that a touched rel changes again after its post-image:
// QueueQuiet looks at it again. A touched path is clean unless it is on
// the unclean list, so QueueQuiet walks only the paths that changed since
// their post-images, not every path the period touched (a period outside
// any window lasts as long as the user works without an agent, and
// QueueQuiet holds r.mu once a second), and a settled path costs no
// entry beyond touched's. r.mu is held.
func (r *Recorder) unsettle(rel string) {
	r.unclean[rel] = struct{}{}
}

// countError counts a failed capture.
func (r *Recorder) countError() {
	r.count.captureError.Add(1)
}

// WaitPostImages waits until every post-image queued so far is recorded
// (or void because its path changed again).
func (r *Recorder) WaitPostImages() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.idle != nil && !r.closed && (len(r.pending) > 0 || r.busy) {
		r.idle.Wait()
	}
}
