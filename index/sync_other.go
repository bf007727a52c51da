//go:build !linux

package index

import "os"

func datasync(f *os.File) error { return f.Sync() }
