package cas

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"

	"github.com/ckfs-dev/ckfs/internal/durable"
)

// Deferred durability. A post-image only needs to be durable before the
// content it holds disappears from the workspace, so the capture layer
// stores it with PutDeferred (no fsync) and makes a batch of them durable
// with one Sync. Put always syncs, and Sync must be called before anything
// durable refers to a deferred object.

// pendingSet tracks the deferred objects waiting for Sync: how many, and,
// while they are few, which.
type pendingSet struct {
	mu    sync.Mutex
	n     int
	paths []string // nil once n passes syncEachMax
}

// syncEachMax is how many deferred objects Sync makes durable one by one
// (an fdatasync each, then their directories). Past it, one syncfs of the
// whole filesystem is cheaper, but it also pays for every other dirty page
// on that filesystem (a build, a git index), so a checkpoint of a few
// files should not use it.
const syncEachMax = 32

// PutDeferred stores data like Put but without fsync: the object is
// complete and verifiable once written, but may not survive a power loss
// until Sync returns.
func (l *Local) PutDeferred(data []byte) (Hash, bool, error) {
	h := Sum(data)
	l.touch(h)
	if ok, _, err := l.existing(h); err != nil || ok {
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
	isNew, err := l.publish(tmp, h, false)
	if err != nil || !isNew {
		return h, false, err
	}
	final := l.Path(h)
	l.pending.mu.Lock()
	l.pending.n++
	if l.pending.n <= syncEachMax {
		l.pending.paths = append(l.pending.paths, final)
	} else {
		l.pending.paths = nil
	}
	l.pending.mu.Unlock()
	return h, true, nil
}

// Pending reports how many deferred objects await Sync.
func (l *Local) Pending() int {
	l.pending.mu.Lock()
	defer l.pending.mu.Unlock()
	return l.pending.n
}

// Sync makes every deferred object durable: a few one by one, many with
// one syncfs of the store's filesystem.
func (l *Local) Sync() error {
	l.pending.mu.Lock()
	defer l.pending.mu.Unlock()
	if l.pending.n == 0 {
		return nil
	}
	if l.pending.n <= syncEachMax && len(l.pending.paths) == l.pending.n {
		if err := syncEach(l.pending.paths); err != nil {
			return fmt.Errorf("sync object store %s: %w", l.dir, err)
		}
	} else if err := durable.SyncFS(l.dir); err != nil {
		return fmt.Errorf("sync object store %s: %w", l.dir, err)
	}
	l.pending.n, l.pending.paths = 0, nil
	return nil
}

// syncEach makes the object files at paths and their directory entries
// durable.
func syncEach(paths []string) error {
	dirs := map[string]bool{}
	for _, p := range paths {
		f, err := os.Open(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue // collected since: nothing left to make durable
		}
		if err != nil {
			return err
		}
		err = f.Sync()
		f.Close()
		if err != nil {
			return err
		}
		dirs[dirOf(p)] = true
	}
	for d := range dirs {
		if err := durable.SyncDir(d); err != nil {
			return err
		}
	}
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
