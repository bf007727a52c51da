package durable

import (
	"os"

	"golang.org/x/sys/unix"
)

// SyncFS flushes the whole filesystem that holds dir: one call for many
// files written without a sync each.
func SyncFS(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return SyncFSOf(int(d.Fd()))
}

// SyncFSOf flushes the filesystem of an open descriptor.
func SyncFSOf(fd int) error { return unix.Syncfs(fd) }
