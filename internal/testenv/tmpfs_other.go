//go:build !linux

package testenv

import "testing"

// Tmpfs skips t: a small tmpfs is mounted on Linux only.
func Tmpfs(t testing.TB, dir, size string) {
	t.Helper()
	t.Skip("mounting a tmpfs is done on Linux only")
}
