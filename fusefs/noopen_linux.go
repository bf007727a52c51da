package fusefs

import "golang.org/x/sys/unix"

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
