//go:build !linux

package fusefs

import "golang.org/x/sys/unix"

func fsync(fd int, _ bool) error { return unix.Fsync(fd) }

func fallocate(int, uint32, int64, int64) error { return unix.ENOTSUP }
