package cas

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// commitTemp makes the temp file durable and publishes it as object h:
// fsync, read-only, link into objects/ (which fails if the object exists,
// so a concurrent writer of the same content wins harmlessly), fsync the
// shard directory, remove the temp name.
func (l *Local) commitTemp(f *os.File, tmp string, h Hash) (isNew bool, err error) {
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return false, fmt.Errorf("store object %s: fsync: %w", h, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return false, fmt.Errorf("store object %s: %w", h, err)
	}
	return l.publish(tmp, h, true)
}

// publish moves the complete temp file tmp into place as object h, and
// leaves no temp name behind, whatever happens. When a file already holds
// that name, it is kept only if it verifies; a corrupt one is replaced by
// tmp.
// sync also fsyncs the shard directory.
func (l *Local) publish(tmp string, h Hash, sync bool) (isNew bool, err error) {
	linked := false
	defer func() {
		if !linked {
			os.Remove(tmp)
		}
	}()
	final := l.Path(h)
	shard := dirOf(final)
	if err := l.mkdirShard(shard, sync); err != nil {
		return false, fmt.Errorf("store object %s: %w", h, err)
	}
	if err := l.place(tmp, final); err != nil {
		if !errors.Is(err, fs.ErrExist) {
			return false, fmt.Errorf("store object %s: %w", h, err)
		}
		ok, corrupt, err := l.existing(h)
		switch {
		case err != nil:
			return false, fmt.Errorf("store object %s: %w", h, err)
		case ok:
			return false, nil
		case corrupt:
			return true, l.replaceCorrupt(tmp, h)
		}
		// Deleted between the attempt and the check: try once more.
		if err := l.place(tmp, final); err != nil {
			return false, fmt.Errorf("store object %s: %w", h, err)
		}
	}
	// The temp name is gone before the object is stamped: unlinking it
	// changes the inode's change time, which would make the trust cache
	// miss.
	linked = true
	l.rememberPath(h)
	if sync {
		if err := syncDir(shard); err != nil {
			return false, fmt.Errorf("store object %s: fsync %s: %w", h, shard, err)
		}
	}
	return true, nil
}

// place gives the temp file tmp the name final, and fails with an error
// matching fs.ErrExist, leaving tmp, when final exists. It renames with
// RENAME_NOREPLACE where the file system has it: one directory operation
// fewer per object than a hard link followed by removing the temp name,
// which is what it does elsewhere.
func (l *Local) place(tmp, final string) error {
	if !l.linkOnly.Load() {
		err := renameNoReplace(tmp, final)
		if err == nil || !unsupported(err) {
			return err
		}
		l.linkOnly.Store(true)
	}
	if err := os.Link(tmp, final); err != nil {
		return err
	}
	os.Remove(tmp)
	return nil
}

// unsupported reports whether a rename failed for want of RENAME_NOREPLACE
// (an old kernel, or a file system without it) rather than for its paths.
func unsupported(err error) bool {
	return errors.Is(err, errors.ErrUnsupported) || errors.Is(err, syscall.EINVAL) ||
		errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.EOPNOTSUPP)
}
