package durable

import (
	"os"

	"golang.org/x/sys/unix"
)

// Datasync flushes the file's data and the metadata needed to read it
// back (fdatasync), not its times.
func Datasync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }
