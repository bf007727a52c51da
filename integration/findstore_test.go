package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// One rule finds the store, from every command: the mount that serves the
// path wins. A store given with --store at mount is found by the commands
// that follow without it, and a leftover store of a subdirectory does not
// hide the mounted parent.
func TestTheMountedStoreIsFoundEverywhere(t *testing.T) {
	w := newWorkspace(t, `mkdir sub && printf 'a\n' > sub/a.txt`)
	// A leftover store of the subdirectory: mounted once and unmounted.
	sub := filepath.Join(w.root, "sub")
	if out, err := w.ckfsErr("mount", sub); err != nil {
		t.Fatalf("mount sub: %v\n%s", err, out)
	}
	if out, err := w.ckfsErr("unmount", sub); err != nil {
		t.Fatalf("unmount sub: %v\n%s", err, out)
	}
	custom := filepath.Join(filepath.Dir(w.root), "elsewhere", "store")
	os.MkdirAll(filepath.Dir(custom), 0o700)
	if out, err := w.ckfsErr("--store", custom, "mount", w.root); err != nil {
		t.Fatalf("mount --store: %v\n%s", err, out)
	}
	w.store = custom
	t.Cleanup(w.unmount)
	for _, dir := range []string{w.root, sub} {
		out, code := w.exitCodeIn(dir, nil, "status")
		if code != 0 || !strings.Contains(out, "mounted") || !strings.Contains(out, custom) {
			t.Errorf("status in %s: exit %d\n%s", dir, code, out)
		}
	}
	if out, code := w.exitCodeIn(sub, nil, "run", "--", "sh", "-c", "printf 'b\\n' > a.txt"); code != 0 {
		t.Fatalf("run in sub: exit %d\n%s", code, out)
	}
	if log := w.ckfs("log"); !strings.Contains(log, "sub/a.txt") {
		t.Errorf("the write in sub was not captured by the mounted parent's store:\n%s", log)
	}
	if out, err := w.ckfsErr("unmount", w.root); err != nil || strings.Contains(out, "not in a ckfs workspace") {
		t.Fatalf("unmount without --store: %v\n%s", err, out)
	}
}

// A busy unmount says plainly when the busy one is the user's own shell.
func TestUnmountFromInsideSaysCdOut(t *testing.T) {
	w := mountWorkspace(t, "")
	c := exec.Command("sh", "-c", `cd "$1" && ckfs unmount "$1"`, "sh", w.root)
	c.Dir, c.Env = "/", append(w.env(), "PATH="+filepath.Dir(ckfsBin)+":"+os.Getenv("PATH"))
	out, err := c.CombinedOutput()
	if err == nil {
		t.Fatalf("unmount from a shell inside the mount succeeded:\n%s", out)
	}
	if !strings.Contains(string(out), "cd out of it first") {
		t.Errorf("the busy unmount does not say the shell is inside:\n%s", out)
	}
	// A descriptor beneath the mount, at the same path, holds nothing of
	// it: the supervisor's, and this test's own (taken before the mount).
	for _, pid := range []int{w.sup, os.Getpid()} {
		if strings.Contains(string(out), fmt.Sprintf("pid %d ", pid)) {
			t.Errorf("the busy unmount names pid %d, which holds only the directory beneath the mount:\n%s", pid, out)
		}
	}
	if !w.mounted() {
		t.Fatal("the workspace is no longer mounted")
	}
}

// A shell with another CKFS_HOME than the mount's still finds the store
// that serves the path (the daemon names it as the mount's source): status,
// a window and unmount all work, with no circle between "not in a ckfs
// workspace" and "run ckfs unmount".
func TestAnotherCKFSHomeFindsTheMount(t *testing.T) {
	w := mountWorkspace(t, `printf 'a\n' > a.txt`)
	t.Cleanup(w.unmount)
	other := []string{"CKFS_HOME=" + filepath.Join(t.TempDir(), "other-home")}
	if out, code := w.exitCode(other, "status"); code != 0 || !strings.Contains(out, "mounted") || !strings.Contains(out, w.store) {
		t.Fatalf("status with another CKFS_HOME: exit %d\n%s", code, out)
	}
	if out, code := w.exitCode(other, "run", "--", "sh", "-c", "printf 'b\\n' > a.txt"); code != 0 {
		t.Fatalf("run with another CKFS_HOME: exit %d\n%s", code, out)
	}
	if log := w.ckfs("log"); !strings.Contains(log, "M a.txt") {
		t.Errorf("the window was not recorded in the mount's store:\n%s", log)
	}
	if out, code := w.exitCodeIn("/", other, "unmount", w.root); code != 0 {
		t.Fatalf("unmount with another CKFS_HOME: exit %d\n%s", code, out)
	}
	if w.mounted() {
		t.Fatal("still mounted")
	}
}
