package fusefs

import "golang.org/x/sys/unix"

// openBeneath opens rel beneath the directory rootFd, following no
// symlink on the way.
func openBeneath(rootFd int, rel string, flags int) (int, error) {
	return unix.Openat2(rootFd, rel, &unix.OpenHow{
		Flags:   uint64(flags | unix.O_CLOEXEC | unix.O_NOFOLLOW),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
}

// fsync makes fd durable, its data only when dataOnly.
func fsync(fd int, dataOnly bool) error {
	if dataOnly {
		return unix.Fdatasync(fd)
	}
	return unix.Fsync(fd)
}

func fallocate(fd int, mode uint32, off, size int64) error {
	return unix.Fallocate(fd, mode, off, size)
}
