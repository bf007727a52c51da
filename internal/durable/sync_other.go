//go:build !linux

package durable

import "os"

// Datasync flushes the file (fsync where fdatasync is missing).
func Datasync(f *os.File) error { return f.Sync() }

// StartWriteback does nothing here: fsync alone makes a file durable.
func StartWriteback(*os.File) {}
