package session

import (
	"os"

	"golang.org/x/sys/unix"
)

// datasync flushes the file's data and the metadata needed to read it.
func datasync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }
