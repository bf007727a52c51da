//go:build !linux

package rewind

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// mknodat is not available beneath a directory descriptor here: special
// files are not restored on this platform.
func mknodat(dirfd int, name string, mode uint32, dev uint64) error {
	return fmt.Errorf("restoring a special file (mode %o) is supported on Linux only: %w", mode, unix.ENOTSUP)
}
