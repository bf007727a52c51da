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

// syncDir makes a directory's entries durable (a variable so that tests
// can see which directories are made durable, and when).
var syncDir = durable.SyncDir

// pendingSet tracks the deferred objects waiting for Sync: how many, and,
// while they are few, which.
type pendingSet struct {
	mu    sync.Mutex
	n     int
	paths []string // nil once n passes syncEachMax
	// dirs are directories with a new shard directory in them whose entry
	// is not durable yet (made by a deferred put).
	dirs map[string]struct{}
}

// addDir notes that dir may hold a new entry that is not durable yet.
func (p *pendingSet) addDir(dir string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dirs == nil {
		p.dirs = map[string]struct{}{}
	}
	p.dirs[dir] = struct{}{}
}

// syncDirs fsyncs those of dirs that hold entries not durable yet.
func (p *pendingSet) syncDirs(dirs ...string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, d := range dirs {
		if _, ok := p.dirs[d]; !ok {
			continue
		}
		if err := syncDir(d); err != nil {
			return err
		}
		delete(p.dirs, d)
	}
	return nil
}

// syncAllDirs fsyncs every directory that holds entries not durable yet.
func (p *pendingSet) syncAllDirs() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for d := range p.dirs {
		if err := syncDir(d); err != nil {
			return err
		}
		delete(p.dirs, d)
	}
	return nil
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
	if werr != nil {
		os.Remove(tmp)
		return h, false, fmt.Errorf("store object %s: %w", h, werr)
	}
	isNew, err := l.publish(tmp, h, false)
	if err != nil || !isNew {
		return h, false, err
	}
	l.pending.add(l.Path(h))
	return h, true, nil
}

// add notes a file written without fsync (an object, a pack), which the
// next Sync makes durable with the entry of it in its directory.
func (p *pendingSet) add(path string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	if p.n <= syncEachMax {
		p.paths = append(p.paths, path)
	} else {
		p.paths = nil
	}
}

// Pending reports how many files written deferred (objects, packs) await
// Sync.
func (l *Local) Pending() int {
	l.pending.mu.Lock()
	defer l.pending.mu.Unlock()
	return l.pending.n
}

// Sync makes every deferred object durable, with the shard directories
// made for them: a few one by one, many with one syncfs of the store's
// filesystem.
func (l *Local) Sync() error {
	l.pending.mu.Lock()
	defer l.pending.mu.Unlock()
	if l.pending.n == 0 && len(l.pending.dirs) == 0 {
		return nil
	}
	if l.pending.n <= syncEachMax && len(l.pending.paths) == l.pending.n {
		// The objects and their shard directories, then the new shard
		// directories' entries in their parents.
		if err := syncEach(l.pending.paths); err != nil {
			return fmt.Errorf("sync object store %s: %w", l.dir, err)
		}
		for d := range l.pending.dirs {
			if err := syncDir(d); err != nil {
				return fmt.Errorf("sync object store %s: %w", l.dir, err)
			}
		}
	} else if err := durable.SyncFS(l.dir); err != nil {
		return fmt.Errorf("sync object store %s: %w", l.dir, err)
	}
	l.pending.n, l.pending.paths, l.pending.dirs = 0, nil, nil
	return nil
}

// syncEach makes the object files at paths and their directory entries
// durable. Writeback of every file starts before the first fsync, so the
// batch reaches the disk together rather than a journal commit per file.
func syncEach(paths []string) error {
	files := make([]*os.File, 0, len(paths))
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	for _, p := range paths {
		f, err := openRead(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue // collected since: nothing left to make durable
		}
		if err != nil {
			return err
		}
		durable.StartWriteback(f)
		files = append(files, f)
	}
	dirs := map[string]bool{}
	for _, f := range files {
		if err := f.Sync(); err != nil {
			return err
		}
		dirs[dirOf(f.Name())] = true
	}
	for d := range dirs {
		if err := syncDir(d); err != nil {
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
