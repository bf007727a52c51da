package cas

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
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

// publish links the complete temp file tmp into place as object h and
// removes the temp name, whatever happens. When a file already holds that
// name, it is kept only if it verifies; a corrupt one is replaced by tmp.
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
	if err := os.Link(tmp, final); err != nil {
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
		// Deleted between the link and the check: try once more.
		if err := os.Link(tmp, final); err != nil {
			return false, fmt.Errorf("store object %s: %w", h, err)
		}
	}
	// Drop the temp name before stamping the object: unlinking it changes
	// the inode's change time, which would make the trust cache miss.
	linked = true
	os.Remove(tmp)
	l.rememberPath(h)
	if sync {
		if err := syncDir(shard); err != nil {
			return false, fmt.Errorf("store object %s: fsync %s: %w", h, shard, err)
		}
	}
	return true, nil
}
