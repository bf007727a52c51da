//go:build !linux

package session

import "os"

func datasync(f *os.File) error { return f.Sync() }
