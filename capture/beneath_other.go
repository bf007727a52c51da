//go:build !linux

package capture

import (
	"strings"

	"golang.org/x/sys/unix"
)

// openBeneath opens rel beneath dirfd one element at a time, following no
// symlink (O_NOFOLLOW on every element). Paths come from records and from
// the FUSE layer and never hold "..".
func openBeneath(dirfd int, rel string, flags int) (int, error) {
	elems := strings.Split(rel, "/")
	fd, err := unix.Openat(dirfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	for _, e := range elems[:len(elems)-1] {
		next, err := unix.Openat(fd, e, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = next
	}
	last, err := unix.Openat(fd, elems[len(elems)-1], flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	unix.Close(fd)
	return last, err
}

// oPathDir opens a directory to resolve names from (no O_PATH here).
const oPathDir = unix.O_RDONLY | unix.O_DIRECTORY
