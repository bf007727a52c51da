package cas

import (
	"fmt"
	"os"
	"sync"
)

// Deferred durability. A post-image only needs to be durable before the
// content it holds disappears from the workspace, so the capture layer
// stores it with PutDeferred (no fsync) and makes a batch of them durable
// with one Sync. Put always syncs, and Sync must be called before anything
// durable refers to a deferred object.

// pendingSet tracks whether deferred objects are waiting for Sync.
type pendingSet struct {
	mu sync.Mutex
	n  int
}

// PutDeferred stores data like Put but without fsync: the object is
// complete and verifiable once written, but may not survive a power loss
// until Sync returns.
func (l *Local) PutDeferred(data []byte) (Hash, bool, error) {
	h := Sum(data)
	l.touch(h)
	if ok, err := l.Has(h); err != nil || ok {
		return h, false, err
	}
	codec, body := l.encode(data)
	hdr := header{codec: codec, size: uint64(len(data))}.encode()
	f, tmp, err := l.createTemp()
	if err != nil {
		return h, false, err
	}
	w := l.wrapWriter(f)
	werr := writeFull(w, hdr[:])
	if werr == nil {
		werr = writeFull(w, body)
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	defer os.Remove(tmp)
	if werr != nil {
		return h, false, fmt.Errorf("store object %s: %w", h, werr)
	}
	final := l.Path(h)
	if err := l.mkdirDurable(dirOf(final)); err != nil {
		return h, false, err
	}
	if err := os.Link(tmp, final); err != nil {
		if os.IsExist(err) {
			return h, false, nil
		}
		return h, false, fmt.Errorf("store object %s: %w", h, err)
	}
	l.pending.mu.Lock()
	l.pending.n++
	l.pending.mu.Unlock()
	return h, true, nil
}

// Pending reports how many deferred objects await Sync.
func (l *Local) Pending() int {
	l.pending.mu.Lock()
	defer l.pending.mu.Unlock()
	return l.pending.n
}

// Sync makes every deferred object durable (one syncfs of the store's
// filesystem).
func (l *Local) Sync() error {
	l.pending.mu.Lock()
	defer l.pending.mu.Unlock()
	if l.pending.n == 0 {
		return nil
	}
	if err := syncFS(l.dir); err != nil {
		return fmt.Errorf("sync object store %s: %w", l.dir, err)
	}
	l.pending.n = 0
	return nil
}

func dirOf(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[:i]
		}
	}
	return "."
}
