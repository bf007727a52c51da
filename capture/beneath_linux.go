package capture

import "golang.org/x/sys/unix"

// openBeneath opens rel beneath the directory dirfd, following no symlink
// in any element and never leaving dirfd's tree (openat2 with
// RESOLVE_BENEATH and RESOLVE_NO_SYMLINKS): a symlink where a directory
// was recorded, or a final symlink, fails with ELOOP.
func openBeneath(dirfd int, rel string, flags int) (int, error) {
	for {
		fd, err := unix.Openat2(dirfd, rel, &unix.OpenHow{
			Flags:   uint64(flags | unix.O_CLOEXEC),
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		})
		if err == unix.EAGAIN || err == unix.EINTR {
			continue // a concurrent rename raced the lookup
		}
		return fd, err
	}
}

// oPathDir opens a directory only as a place to resolve names from.
const oPathDir = unix.O_PATH | unix.O_DIRECTORY
