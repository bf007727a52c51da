package index

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// On a full disk, Append gives the reserve back to get its records in;
// AppendIfRoom fails and leaves the reserve (and the timeline) alone.
func TestAppendIfRoomLeavesTheReserve(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=4m,mode=0700"); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	w, _ := openTest(t, dir)
	if _, err := os.Stat(filepath.Join(dir, ReserveFile)); err != nil {
		t.Fatalf("no reserve: %v", err)
	}
	// Fill the disk.
	f, err := os.Create(filepath.Join(dir, "fill"))
	if err != nil {
		t.Fatal(err)
	}
	for _, err = f.Write(make([]byte, 4096)); err == nil; _, err = f.Write(make([]byte, 4096)) {
	}
	f.Close()
	if !IsDiskFull(err) {
		t.Fatalf("filling the disk: %v", err)
	}
	rec := func() *Record {
		return &Record{Kind: KindOpen, Window: "w", Tool: string(make([]byte, 8000))}
	}
	err = w.AppendIfRoom(rec())
	if !IsDiskFull(err) {
		t.Fatalf("AppendIfRoom on a full disk: %v", err)
	}
	if w.ReserveUsed() || w.LastSeq() != 0 {
		t.Fatalf("AppendIfRoom on a full disk: reserve used %v, last seq %d", w.ReserveUsed(), w.LastSeq())
	}
	if _, err := os.Stat(filepath.Join(dir, ReserveFile)); err != nil {
		t.Fatalf("AppendIfRoom gave the reserve back: %v", err)
	}
	if err := w.Append(rec()); err != nil {
		t.Fatalf("Append on a full disk, with the reserve: %v", err)
	}
	if !w.ReserveUsed() || w.LastSeq() != 1 {
		t.Fatalf("Append on a full disk: reserve used %v, last seq %d", w.ReserveUsed(), w.LastSeq())
	}
}
