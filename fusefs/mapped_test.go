//go:build linux

package fusefs_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ckfs-dev/ckfs/fusefs"
	"github.com/ckfs-dev/ckfs/internal/mapped"
	"github.com/ckfs-dev/ckfs/internal/testenv"
	"golang.org/x/sys/unix"
)

// slowHooks answers every change after a pause once slow is set, and
// notes when the last one was done.
type slowHooks struct {
	fakeHooks
	slow   atomic.Bool
	doneAt atomic.Int64
}

func (h *slowHooks) BeginChange(pid uint32, rel string) (func(), error) {
	if !h.slow.Load() {
		return func() {}, nil
	}
	time.Sleep(300 * time.Millisecond)
	return func() { h.doneAt.Store(time.Now().UnixNano()) }, nil
}

// A page written through a shared mapping that outlives the tool call
// reaches the daemon before the boundary: syncfs of the mount alone
// returns before the daemon has the WRITE (it was slowed here), and
// mapped.Flush waits for it.
func TestMappedWritesReachTheDaemonBeforeFlushReturns(t *testing.T) {
	testenv.RequireFUSE(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("needs python3 to write through a mapping")
	}
	backing := t.TempDir()
	fd, err := unix.Open(backing, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	h := &slowHooks{fakeHooks: fakeHooks{disk: fd, refuse: map[string]bool{}}}
	f, err := fusefs.New(fd, backing, h)
	if err != nil {
		t.Fatal(err)
	}
	var told atomic.Int32
	srv, err := f.Mount(backing, fusefs.Options{InPlace: true, Cached: true, OnMappedWrite: func() { told.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Unmount(); unix.Close(fd) })
	p := filepath.Join(backing, "m.bin")
	if err := os.WriteFile(p, make([]byte, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Stat(backing, &st); err != nil {
		t.Fatal(err)
	}
	// The writer runs in a child: a page fault on the mount in this
	// process, which serves it, could stop its own garbage collector.
	h.slow.Store(true)
	c := exec.Command("python3", "-c", `import mmap, sys
f = open(sys.argv[1], "r+b"); m = mmap.mmap(f.fileno(), 0); m[0:6] = b"MAPPED"
print("ready", flush=True); sys.stdin.read()`, p)
	c.Dir = "/"
	stdin, _ := c.StdinPipe()
	out, _ := c.StdoutPipe()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); c.Wait() }()
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
		t.Fatalf("the writer said %q", line)
	}
	root, err := unix.Open(backing, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(root)
	unix.Syncfs(root)
	if n := mapped.Flush(st.Dev, []int{os.Getpid()}); n != 1 {
		t.Errorf("Flush synced %d files, want the one mapped", n)
	}
	returned := time.Now().UnixNano()
	if done := h.doneAt.Load(); done == 0 || done > returned {
		t.Errorf("Flush returned before the daemon had the mapped page's WRITE (done at %d, returned at %d)", done, returned)
	}
	// Once more: OnMappedWrite tells of the first written-back page only.
	h.slow.Store(false)
	if err := os.WriteFile(p, []byte("plain write"), 0o644); err != nil {
		t.Fatal(err)
	}
	if n := told.Load(); n != 1 {
		t.Errorf("OnMappedWrite was called %d times, want once (the mapping's writeback; a plain write is not one)", n)
	}
}
