//lint:file-ignore SA1019 this test guards ckfs's use of LoopbackRoot.NewNode (fs.go)

package fusefs

import (
	"syscall"
	"testing"
	"unsafe"

	"github.com/hanwen/go-fuse/v2/fs"
	"golang.org/x/sys/unix"
)

// TestNodeIsOneAllocation guards what each node the kernel knows costs
// while it knows it (100,000 of them after a walk of a large tree): the
// loopback's node and ckfs's are one allocation, and it stays within the
// 144-byte size class the loopback's node alone would take.
func TestNodeIsOneAllocation(t *testing.T) {
	fd, err := unix.Open(t.TempDir(), unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	f, err := New(fd, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	rd := f.root.RootData
	if rd.NewNode == nil {
		t.Fatal("the loopback makes its own nodes, and each of ours wraps one: two allocations a node")
	}
	var made fs.InodeEmbedder
	st := &syscall.Stat_t{}
	allocs := testing.AllocsPerRun(100, func() {
		made = rd.NewNode(rd, nil, "x", st)
	})
	n, ok := made.(*node)
	if !ok || n.fsys != f {
		t.Fatalf("NewNode made %T, not a node of this file system", made)
	}
	if allocs != 1 {
		t.Errorf("a node takes %v allocations, want 1", allocs)
	}
	if size := unsafe.Sizeof(node{}); size > 144 {
		t.Errorf("a node is %d bytes, over the 144-byte size class", size)
	}
}
