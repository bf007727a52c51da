package cas

import (
	"os"

	"golang.org/x/sys/unix"
)

// syncFS flushes the whole filesystem that holds dir.
func syncFS(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return unix.Syncfs(int(d.Fd()))
}
