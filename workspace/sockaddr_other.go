//go:build !linux

package workspace

// SockAddr returns path: without /proc a long store path cannot be
// shortened.
func SockAddr(path string) (string, func(), error) { return path, func() {}, nil }
