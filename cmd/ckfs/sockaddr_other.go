//go:build !linux

package main

// sockAddr returns path: without /proc a long store path cannot be
// shortened.
func sockAddr(path string) (string, func(), error) { return path, func() {}, nil }
