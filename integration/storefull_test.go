package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckfs-dev/ckfs/capture"
	"github.com/ckfs-dev/ckfs/internal/testenv"
	"golang.org/x/sys/unix"
)

// The store's disk full, on a real mount with the store on a small tmpfs:
// a write whose pre-image cannot be stored is refused with ENOSPC and
// changes nothing; a change whose post-image cannot be stored is recorded
// as not restorable; windows still open and close; status and doctor say
// so; and once there is room again everything works, the reserve included.
func TestStoreDiskFull(t *testing.T) {
	w := newWorkspace(t, `printf 'a0\n' > a.txt`)
	smallStore(t, w)
	w.mount()
	if _, err := os.Stat(filepath.Join(w.store, "reserve")); err != nil {
		t.Fatalf("the store has no reserve: %v", err)
	}
	fill := filepath.Join(w.home, "fill")
	exec.Command("sh", "-c", "head -c 100000000 /dev/zero > "+fill).Run()

	w.ckfs("window", "open", "--id", "full")
	out, err := exec.Command("sh", "-c", "cd "+w.root+" && printf 'a1\\n' > a.txt").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "No space left on device") {
		t.Fatalf("a write whose pre-image cannot be stored: err %v, %q", err, out)
	}
	if got := w.read("a.txt"); got != "a0\n" {
		t.Fatalf("the refused write changed a.txt: %q", got)
	}
	// A new file needs no pre-image; its post-image cannot be stored.
	if out, err := exec.Command("sh", "-c", "cd "+w.root+" && head -c 200000 /dev/urandom > b.bin").CombinedOutput(); err != nil {
		t.Fatalf("creating a file needs no pre-image: %v %s", err, out)
	}
	if out, err := w.ckfsErr("window", "close", "--id", "full"); err != nil {
		t.Fatalf("closing a window on a full store: %v\n%s", err, out)
	}
	skipped := false
	for _, r := range w.records() {
		if r.Path == "b.bin" && r.Reason == capture.ReasonStoreFull {
			skipped = true
		}
	}
	if !skipped {
		t.Errorf("b.bin's post-image is not recorded as not stored (store full)")
	}
	if st := w.ckfs("status"); !strings.Contains(st, "store full") {
		t.Errorf("status does not say the store was full:\n%s", st)
	}
	if out, _ := w.exitCode(nil, "doctor"); !strings.Contains(out, "store space") || !strings.Contains(out, "ENOSPC") {
		t.Errorf("doctor does not say the store was full:\n%s", out)
	}
	if out, code := w.exitCode(nil, "rewind", "--to", "full"); code != 0 && code != 3 || !strings.Contains(out, "b.bin") {
		t.Errorf("preview after a full store: exit %d\n%s", code, out)
	}

	// Room again: writes go through and are captured.
	os.Remove(fill)
	w.window("after", `printf 'a2\n' > a.txt`)
	if got := w.read("a.txt"); got != "a2\n" {
		t.Fatalf("a.txt = %q", got)
	}
	w.ckfs("rewind", "--files", "--to", "after")
	if got := w.read("a.txt"); got != "a0\n" {
		t.Fatalf("a.txt after rewinding the window = %q", got)
	}
}

// A store whose path is longer than a Unix socket name can be (108
// bytes) still gets its control socket: mount, windows and status work.
func TestLongStorePath(t *testing.T) {
	w := newWorkspace(t, `printf 'a\n' > a.txt`)
	w.home = filepath.Join(w.home, strings.Repeat("deep-directory-name/", 8))
	w.mount()
	if len(filepath.Join(w.store, "control.sock")) <= 108 {
		t.Fatalf("the store path is not long enough to test anything: %s", w.store)
	}
	w.window("w1", `printf 'b\n' > a.txt`)
	if st := w.status(); st.State != "mounted" {
		t.Fatalf("status: %+v", st)
	}
}

// The store fills up in the middle of rm -rf of a tree from before the
// mount, whose pre-images are taken in batches: the files whose pre-image
// could not be stored stay, the window still closes, and once there is room
// again a rewind brings back every file that went.
func TestStoreFullDuringRmOfAnOldTree(t *testing.T) {
	// 8 MB of incompressible content for a 4 MB store.
	w := newWorkspace(t, `mkdir -p tree/a tree/b
for i in $(seq 80); do head -c 50000 /dev/urandom > tree/a/f$i; head -c 50000 /dev/urandom > tree/b/g$i; done`)
	want := map[string]string{}
	filepath.WalkDir(filepath.Join(w.root, "tree"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			want[p] = string(b)
		}
		return nil
	})
	smallStore(t, w)
	w.mount()

	w.ckfs("window", "open", "--id", "rm")
	out, err := exec.Command("sh", "-c", "cd "+w.root+" && rm -rf tree").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "No space left on device") {
		t.Fatalf("rm -rf of 8 MB for a 4 MB store: err %v, %q", err, out)
	}
	if out, err := w.ckfsErr("window", "close", "--id", "rm"); err != nil {
		t.Fatalf("closing the window on a full store: %v\n%s", err, out)
	}
	gone := 0
	for p, c := range want {
		b, err := os.ReadFile(p)
		switch {
		case os.IsNotExist(err):
			gone++
		case err != nil || string(b) != c:
			t.Fatalf("%s: a file rm could not delete changed: %v", p, err)
		}
	}
	if gone == 0 || gone == len(want) {
		t.Fatalf("%d of %d files deleted: the store should fill up in the middle", gone, len(want))
	}
	t.Logf("%d of %d files deleted before the store was full", gone, len(want))

	// Room again (the user grows the store's disk): the rewind brings
	// every deleted file back.
	if err := unix.Mount("tmpfs", w.home, "tmpfs", unix.MS_REMOUNT, "size=64m,mode=0700"); err != nil {
		t.Fatal(err)
	}
	w.ckfs("rewind", "--files", "--to", "rm")
	for p, c := range want {
		if b, err := os.ReadFile(p); err != nil || string(b) != c {
			t.Fatalf("%s after the rewind: %d bytes, %v", p, len(b), err)
		}
	}
	w.ckfs("verify")
}

// smallStore puts the workspace's store on a 4 MB tmpfs (before it is
// mounted), unmounted after the workspace.
func smallStore(t *testing.T, w *workspace) {
	t.Helper()
	testenv.Tmpfs(t, w.home, "4m") // its unmount runs after the workspace's
}

// A rewind whose files do not fit on the workspace's own file system is
// refused before it writes anything, naming the files it would write and
// the way out. It used to fail part way, leaving the files partly
// rewound and a journal for --rollback.
func TestRewindRefusedWhenTheWorkspaceDiskIsFull(t *testing.T) {
	w := newWorkspace(t, "")
	disk := filepath.Join(filepath.Dir(w.root), "disk")
	testenv.Tmpfs(t, disk, "8m") // its unmount runs after the workspace's
	w.root = filepath.Join(disk, "repo")
	if err := os.Mkdir(w.root, 0o755); err != nil {
		t.Fatal(err)
	}
	w.mount()
	w.window("big", "head -c 3000000 /dev/urandom > keep.bin")
	w.window("shrink", ": > keep.bin")
	// The user's own file fills the disk.
	fill := filepath.Join(w.root, "mine.bin")
	if out, err := exec.Command("sh", "-c", "head -c 7000000 /dev/zero > "+fill).CombinedOutput(); err != nil {
		t.Fatalf("filling the workspace's disk: %v %s", err, out)
	}
	out, code := w.exitCode(nil, "rewind", "--files", "--to", "shrink", "--", "keep.bin")
	if code != 3 || !strings.Contains(out, "FAIL space") || !strings.Contains(out, "free space on it, or rewind fewer paths") || !strings.Contains(out, "keep.bin") {
		t.Fatalf("a rewind that does not fit: exit %d\n%s", code, out)
	}
	if ents, _ := os.ReadDir(filepath.Join(w.store, "journal")); len(ents) != 0 {
		t.Errorf("the refused rewind left %d journals", len(ents))
	}
	if got := w.read("keep.bin"); got != "" {
		t.Errorf("the refused rewind wrote keep.bin (%d bytes)", len(got))
	}
	// Room again: the same rewind goes through.
	os.Remove(fill)
	w.ckfs("rewind", "--files", "--to", "shrink", "--", "keep.bin")
	if got := w.read("keep.bin"); len(got) != 3000000 {
		t.Errorf("keep.bin after the rewind: %d bytes, want 3000000", len(got))
	}
}
