//go:build !linux

package fusefs

import "golang.org/x/sys/unix"

// openBeneath opens rel under rootFd. Elsewhere than Linux there is no
// openat2: the cached model is Linux's (other systems offer no no-open
// FUSE), so this only keeps the package building.
func openBeneath(rootFd int, rel string, flags int) (int, error) {
	return unix.Openat(rootFd, rel, flags|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
}

func fsync(fd int, _ bool) error { return unix.Fsync(fd) }

func fallocate(int, uint32, int64, int64) error { return unix.ENOTSUP }
