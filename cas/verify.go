package cas

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
)

// Trusting existing objects. Deduplication means "an object with this name
// exists, so its content need not be written again" — which is only true if
// the existing file really holds that content. A file damaged on disk (a
// flipped bit, a truncation, a hand edit) must never stand in for good
// content the caller still has in hand: the caller may be about to let the
// only other copy disappear (a rewind overwriting a file). So a dedup hit
// is trusted only after the existing file has been verified, and a file
// that fails verification is replaced atomically by the good bytes.
//
// Verifying costs a read of the object, so a Local remembers which files it
// has verified or written itself, keyed by inode, size and change time: any
// write to the file after that (which is how bytes get flipped by anything
// but the disk itself) changes the key and forces a new verification.

// stamp identifies one version of an object file (see stampOf).
type stamp struct {
	ino, size uint64
	change    int64 // inode change time, ns
}

// trustCache maps a Hash to the stamp of its object file when last
// verified (or written) by this Local.
type trustCache struct{ m sync.Map }

// existing reports whether the object h exists with the right content.
// corrupt is true when a file exists under h's name but does not hold h's
// content; the caller then writes the good bytes over it.
func (l *Local) existing(h Hash) (ok, corrupt bool, err error) {
	fi, err := os.Lstat(l.Path(h))
	if errors.Is(err, fs.ErrNotExist) {
		// A packed copy, trusted on the stamp of its pack.
		r, ok := l.findPacked(h, false)
		if !ok {
			return false, false, nil
		}
		fi, err = os.Lstat(r.p.path)
		if errors.Is(err, fs.ErrNotExist) {
			return false, false, nil // unpacked since: stored again at worst
		}
	}
	if err != nil {
		return false, false, fmt.Errorf("object %s: %w", h, err)
	}
	if s, hit := l.trusted.m.Load(h); hit && s.(stamp) == stampOf(fi) {
		return true, false, nil
	}
	switch err := l.Verify(h); {
	case err == nil:
		return true, false, nil
	case errors.Is(err, ErrCorrupt):
		return false, true, nil
	case errors.Is(err, ErrNotFound):
		return false, false, nil // deleted since the lstat (a collection)
	default:
		return false, false, err
	}
}

// Verify reads the whole object h and checks it: header, size and hash.
// It returns nil, or an error wrapping ErrCorrupt or ErrNotFound. It never
// trusts an earlier verification.
func (l *Local) Verify(h Hash) error {
	rc, err := l.Open(h)
	if err != nil {
		return err
	}
	defer rc.Close()
	if _, err := io.Copy(io.Discard, rc); err != nil {
		return err
	}
	l.remember(h, rc.(*verifier).f)
	return nil
}

// remember records that the object file f holds h's content.
func (l *Local) remember(h Hash, f *os.File) {
	if fi, err := f.Stat(); err == nil {
		l.trusted.m.Store(h, stampOf(fi))
	}
}

// rememberPath records that the object file of h, just written by this
// Local, holds h's content.
func (l *Local) rememberPath(h Hash) {
	if fi, err := os.Lstat(l.Path(h)); err == nil {
		l.trusted.m.Store(h, stampOf(fi))
	}
}

// forget drops h from the trust cache (the object was deleted).
func (l *Local) forget(h Hash) { l.trusted.m.Delete(h) }

// replaceCorrupt renames the complete temp file tmp over the corrupt object
// file of h and makes the rename durable.
func (l *Local) replaceCorrupt(tmp string, h Hash) error {
	final := l.Path(h)
	if err := os.Rename(tmp, final); err != nil {
		return fmt.Errorf("replace corrupt object %s: %w", h, err)
	}
	if err := syncDir(dirOf(final)); err != nil {
		return fmt.Errorf("replace corrupt object %s: fsync: %w", h, err)
	}
	l.rememberPath(h)
	return nil
}
