package beneath

import (
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// DirFlags open a directory only as a place to resolve names from.
const DirFlags = unix.O_PATH | unix.O_DIRECTORY

// noOpenat2 is set once openat2 answered ENOSYS (a kernel before 5.6).
var noOpenat2 atomic.Bool

func open(root int, rel string, flags int) (int, error) {
	if noOpenat2.Load() {
		return walk(root, rel, flags)
	}
	for {
		fd, err := unix.Openat2(root, rel, &unix.OpenHow{
			Flags:   uint64(flags),
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		})
		switch err {
		case nil:
			return fd, nil
		case unix.EAGAIN, unix.EINTR:
			continue // a concurrent rename raced the lookup
		case unix.ENOSYS:
			noOpenat2.Store(true)
			return walk(root, rel, flags)
		case unix.ELOOP, unix.EXDEV:
			// A symlink on the way (or at the end), or a way out: the
			// walk tells which, with the same answer as without openat2.
			return walk(root, rel, flags)
		}
		return -1, &os.PathError{Op: "open", Path: rel, Err: err}
	}
}

// lstatDeep is Lstat of a path below root's own names: the path itself
// opened with O_PATH (the link itself, when it is one).
func lstatDeep(root int, rel string, st *unix.Stat_t) error {
	fd, err := open(root, rel, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Fstat(fd, st)
}
