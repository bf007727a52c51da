package pastfs_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/internal/testenv"
	"github.com/ckfs-dev/ckfs/pastfs"
	"github.com/ckfs-dev/ckfs/provenance"
	"golang.org/x/sys/unix"
)

// source serves content by path; a path it lacks fails as a live file
// changed since the tree was read would.
type source map[string]string

func (s source) Content(e provenance.TreeEntry) ([]byte, error) {
	b, ok := s[e.Path]
	if !ok {
		return nil, errors.New("changed since")
	}
	return []byte(b), nil
}

func file(p string, size int, mode uint32, from string) provenance.TreeEntry {
	return provenance.TreeEntry{Path: p, From: from, State: index.State{Type: index.TypeFile, Size: int64(size), Mode: mode}}
}

func TestViewServesTheTreeReadOnly(t *testing.T) {
	testenv.RequireFUSE(t)
	tree := []provenance.TreeEntry{
		file("a.txt", 4, 0o644, provenance.FromStore),
		{Path: "d", From: provenance.FromLive, State: index.State{Type: index.TypeDir, Mode: 0o750}},
		file("d/run.sh", 3, 0o755, provenance.FromLive),
		file("d/stale", 5, 0o644, provenance.FromLive),
		{Path: "gone", From: provenance.Unavailable, State: index.State{Type: index.TypeFile}},
		{Path: "link", From: provenance.FromStore, State: index.State{Type: index.TypeSymlink, Size: 5}},
	}
	src := source{"a.txt": "old\n", "d/run.sh": "#!\n", "link": "a.txt"}
	dir := t.TempDir()
	srv, err := pastfs.Mount(dir, tree, src, pastfs.Options{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Unmount()
	if b, err := os.ReadFile(filepath.Join(dir, "a.txt")); err != nil || string(b) != "old\n" {
		t.Errorf("a.txt: %q, %v", b, err)
	}
	if st, err := os.Stat(filepath.Join(dir, "d/run.sh")); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("d/run.sh: %v, %v", st, err)
	}
	if st, err := os.Stat(filepath.Join(dir, "d")); err != nil || !st.IsDir() || st.Mode().Perm() != 0o750 {
		t.Errorf("d: %v, %v", st, err)
	}
	if target, err := os.Readlink(filepath.Join(dir, "link")); err != nil || target != "a.txt" {
		t.Errorf("link: %q, %v", target, err)
	}
	for _, p := range []string{"gone", "d/stale"} {
		if _, err := os.ReadFile(filepath.Join(dir, p)); !errors.Is(err, syscall.EIO) {
			t.Errorf("read %s: %v, want EIO (never a guess)", p, err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "new"), nil, 0o644); !errors.Is(err, syscall.EROFS) {
		t.Errorf("create: %v, want EROFS", err)
	}
	if err := os.Remove(filepath.Join(dir, "a.txt")); !errors.Is(err, syscall.EROFS) {
		t.Errorf("remove: %v, want EROFS", err)
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if want := []string{"a.txt", "d", "gone", "link"}; !slices.Equal(names, want) {
		t.Errorf("listing %q, want %q", names, want)
	}
}

// A view keeps no extended attributes: the first getxattr tells the
// kernel so, and ls -l of every file asks the daemon nothing more. The
// list of attributes is empty, not an error.
func TestViewAsksNoAttributeTwice(t *testing.T) {
	testenv.RequireFUSE(t)
	reqs := testenv.CaptureRequestLog(t)
	var tree []provenance.TreeEntry
	src := source{}
	for i := range 20 {
		p := fmt.Sprintf("f%02d.txt", i)
		tree, src[p] = append(tree, file(p, 2, 0o644, provenance.FromStore)), "x\n"
	}
	dir := t.TempDir()
	srv, err := pastfs.Mount(dir, tree, src, pastfs.Options{Name: "test", Debug: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Unmount()
	buf := make([]byte, 64)
	if _, err := unix.Lgetxattr(filepath.Join(dir, "f00.txt"), "user.note", buf); err != unix.EOPNOTSUPP {
		t.Errorf("getxattr in a view: %v, want %v", err, unix.EOPNOTSUPP)
	}
	if n, err := unix.Llistxattr(filepath.Join(dir, "f00.txt"), buf); n != 0 || err != nil {
		t.Errorf("listxattr in a view: %d, %v, want an empty list", n, err)
	}
	if out, err := exec.Command("ls", "-l", dir).CombinedOutput(); err != nil {
		t.Fatalf("ls -l: %v\n%s", err, out)
	}
	if n := reqs.Count("GETXATTR"); n != 1 {
		t.Errorf("a getxattr and ls -l of 20 files sent %d GETXATTR requests, want 1", n)
	}
}
