//go:build !linux

package nohandle

// Cap: go-fuse names no such capability here; Dirs serves OPENDIR as
// before.
const Cap = 0
