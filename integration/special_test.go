package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckfs-dev/ckfs/cas"
	"golang.org/x/sys/unix"
)

func statOf(t *testing.T, p string) unix.Stat_t {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		t.Fatalf("lstat %s: %v", p, err)
	}
	return st
}

// FIFOs and device nodes are recorded as what they are (type, mode, device
// number) and rewound like any file: removed, recreated, and never a
// reason for a rewind or preview of other paths to fail.
func TestSpecialFilesAreRecordedAndRestored(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("mknod of a device node needs root")
	}
	w := mountWorkspace(t, `printf 'a0\n' > a.txt`)
	w.window("w1", `mkfifo -m 640 pipe && mknod -m 600 null c 1 3 && printf 'a1\n' > a.txt`)
	w.window("w2", `printf 'b\n' > b.txt`)
	// A window that never touched the special files previews and rewinds.
	if out, code := w.exitCode(nil, "rewind", "--to", "w2"); code != 0 {
		t.Fatalf("preview of a window that never touched the FIFO: exit %d\n%s", code, out)
	}
	w.ckfs("rewind", "--files", "--to", "w2")
	if got := w.read("b.txt"); !strings.Contains(got, "no such file") {
		t.Fatalf("b.txt after rewinding w2: %q", got)
	}
	// Back to before w1: both nodes go.
	w.ckfs("rewind", "--files", "--to", "w1")
	for _, p := range []string{"pipe", "null"} {
		if _, err := os.Lstat(filepath.Join(w.root, p)); !os.IsNotExist(err) {
			t.Errorf("%s still exists after rewinding the window that made it: %v", p, err)
		}
	}
	// Undo brings them back as they were.
	w.ckfs("rewind", "--files", "--undo")
	if st := statOf(t, filepath.Join(w.root, "pipe")); st.Mode&unix.S_IFMT != unix.S_IFIFO || st.Mode&0o7777 != 0o640 {
		t.Errorf("pipe after undo: mode %o", st.Mode)
	}
	if st := statOf(t, filepath.Join(w.root, "null")); st.Mode&unix.S_IFMT != unix.S_IFCHR || st.Rdev != unix.Mkdev(1, 3) || st.Mode&0o7777 != 0o600 {
		t.Errorf("null after undo: mode %o rdev %d:%d", st.Mode, unix.Major(st.Rdev), unix.Minor(st.Rdev))
	}
	// A deleted FIFO comes back.
	w.window("w3", `rm pipe`)
	w.ckfs("rewind", "--files", "--to", "w3")
	if st := statOf(t, filepath.Join(w.root, "pipe")); st.Mode&unix.S_IFMT != unix.S_IFIFO {
		t.Errorf("pipe after rewinding its removal: mode %o", st.Mode)
	}
	if out, code := w.exitCode(nil, "verify"); code != 0 {
		t.Errorf("verify: exit %d\n%s", code, out)
	}
}

// A directory replaced by a symlink to a directory outside the workspace
// never makes ckfs read a file out there: not when it records the window,
// not when it previews a rewind.
func TestNoReadsThroughASymlinkedDirectory(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "f"), []byte("SECRET outside the workspace\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := mountWorkspace(t, `mkdir d && printf 'inside\n' > d/f`)
	// One window edits d/f, then swaps d for a symlink to the outside
	// directory: the post-image of d/f at the close must not follow it.
	w.window("w1", `printf 'edited\n' > d/f && rm -r d && ln -s `+outside+` d`)
	recs := w.records()
	for _, r := range recs {
		if r.Path == "d/f" && r.State != nil && r.Hash != "" {
			if b := w.objectContent(string(r.Hash)); strings.Contains(b, "SECRET") {
				t.Fatalf("capture stored the outside file's bytes for d/f (record %d)", r.Seq)
			}
		}
	}
	out, _ := w.exitCode(nil, "rewind", "--to", "w1")
	if strings.Contains(out, "SECRET") {
		t.Fatalf("the preview printed a file outside the workspace:\n%s", out)
	}
	out, _ = w.exitCode(nil, "diff", "1") // checkpoint 1 against the disk now
	if strings.Contains(out, "SECRET") {
		t.Fatalf("diff printed a file outside the workspace:\n%s", out)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "f")); string(b) != "SECRET outside the workspace\n" {
		t.Fatalf("the outside file changed: %q", b)
	}
}

// objectContent returns the stored content named by a record hash.
func (w *workspace) objectContent(hash string) string {
	w.t.Helper()
	h, err := cas.ParseHash(hash)
	if err != nil {
		w.t.Fatal(err)
	}
	s, err := cas.Open(w.store, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	b, err := s.Get(h)
	if err != nil {
		w.t.Fatal(err)
	}
	return string(b)
}
