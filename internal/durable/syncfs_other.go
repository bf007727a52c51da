//go:build !linux

package durable

import "golang.org/x/sys/unix"

// SyncFS flushes the filesystem that holds dir (every filesystem, where
// there is no syncfs).
func SyncFS(string) error { unix.Sync(); return nil }

// SyncFSOf flushes the filesystem of an open descriptor.
func SyncFSOf(int) error { unix.Sync(); return nil }
