//go:build !linux

package fusefs

// capNoOpendir: go-fuse names no such capability here; a mount in place
// (Linux only) is where noOpendir serves.
const capNoOpendir = 0

// servePath: without /proc the directory is served by path, so it must not
// be the mountpoint (macOS mounts on a separate directory).
func servePath(_ int, path string) string { return path }

// ServeFromCwd does nothing where the directory is served by its path.
func (f *FS) ServeFromCwd() error { return nil }
