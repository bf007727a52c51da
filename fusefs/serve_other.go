//go:build !linux

package fusefs

// servePath: without /proc the directory is served by path, so it must not
// be the mountpoint (macOS mounts on a separate directory).
func servePath(_ int, path string) string { return path }

// ServeFromCwd does nothing where the directory is served by its path.
func (f *FS) ServeFromCwd() error { return nil }
