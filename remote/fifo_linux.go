package remote

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// mkfifoIn makes a FIFO at rel in root (os.Root has no Mkfifo): in the
// directory opened through root, by its last name.
func mkfifoIn(root *os.Root, rel string, mode uint32) error {
	d, err := root.Open(filepath.Dir(rel))
	if err != nil {
		return err
	}
	defer d.Close()
	return unix.Mknodat(int(d.Fd()), filepath.Base(rel), unix.S_IFIFO|mode, 0)
}
