//go:build !linux

package remote

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// mkfifoIn makes a FIFO at rel in root, by its joined path where there is
// no mknodat.
func mkfifoIn(root *os.Root, rel string, mode uint32) error {
	return unix.Mkfifo(filepath.Join(root.Name(), rel), mode)
}
