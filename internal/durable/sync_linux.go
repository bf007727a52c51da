package durable

import (
	"os"

	"golang.org/x/sys/unix"
)

// Datasync flushes the file's data and the metadata needed to read it
// back (fdatasync), not its times.
func Datasync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }

// StartWriteback starts writing the file's dirty pages out without waiting
// (sync_file_range). Started on every file of a batch before the first
// fsync, it lets the file system allocate and commit them together: the
// fsyncs that follow then find their data on its way or written, instead
// of each one committing a journal transaction of its own. It is a hint:
// it makes nothing durable, and an error is not reported.
func StartWriteback(f *os.File) {
	unix.SyncFileRange(int(f.Fd()), 0, 0, unix.SYNC_FILE_RANGE_WRITE)
}
