package testenv

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// Tmpfs mounts a tmpfs of size (as mount takes it: "4m") on dir, making
// dir if needed, and unmounts it when t ends: a small disk to fill up. It
// skips t where that cannot be done (not root, no tmpfs).
func Tmpfs(t testing.TB, dir, size string) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		t.Skipf("cannot mount a tmpfs on %s: %v", dir, err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
}
