package index

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ckfs-dev/ckfs/internal/testenv"
)

// On a full disk, Append gives the reserve back to get its records in;
// AppendIfRoom fails and leaves the reserve (and the timeline) alone.
func TestAppendIfRoomLeavesTheReserve(t *testing.T) {
	dir := t.TempDir()
	testenv.Tmpfs(t, dir, "4m")
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
