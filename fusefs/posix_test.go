package fusefs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ckfs-dev/ckfs/index"
	"github.com/hanwen/go-fuse/v2/posixtest"
	"golang.org/x/sys/unix"
)

// go-fuse's POSIX suite, run against a ckfs mount inside an open window
// (every operation is captured while it runs).
func TestPosix(t *testing.T) {
	names := make([]string, 0, len(posixtest.All))
	for n := range posixtest.All {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			m := mount(t, false)
			m.open("posix")
			posixtest.All[name](t, m.mnt)
			m.close("posix")
		})
	}
}

func isMounted(t *testing.T, dir string) bool {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) > 4 && f[4] == dir && strings.Contains(l, "ckfs") {
			return true
		}
	}
	return false
}

func TestInPlaceServesTheDirectoryItself(t *testing.T) {
	m := mount(t, true)
	if !isMounted(t, m.mnt) {
		t.Fatalf("%s is not a ckfs mount", m.mnt)
	}
	os.WriteFile(m.path("x"), []byte("through the mount"), 0o644)
	names, _ := os.ReadDir(m.mnt)
	if len(names) != 1 || names[0].Name() != "x" {
		t.Errorf("listing %v", names)
	}
}

// Created files and directories get exactly the modes they get natively:
// setuid/setgid/sticky kept, the caller's umask applied once.
func TestModesAsNative(t *testing.T) {
	m := mount(t, false)
	native := t.TempDir()
	for _, umask := range []int{0, 0o022, 0o077} {
		old := unix.Umask(umask)
		for _, dir := range []string{native, m.mnt} {
			sub := filepath.Join(dir, fmt.Sprintf("u%o", umask))
			if err := unix.Mkdir(sub, 0o777); err != nil {
				t.Fatal(err)
			}
			for name, mode := range map[string]uint32{"sticky": 0o1777, "sgid": 0o2775, "plain": 0o777} {
				if err := unix.Mkdir(filepath.Join(sub, name), mode); err != nil {
					t.Fatal(err)
				}
			}
			for name, mode := range map[string]uint32{"suid": 0o4755, "sgidfile": 0o2755, "gw": 0o666} {
				fd, err := unix.Open(filepath.Join(sub, name), unix.O_CREAT|unix.O_WRONLY, mode)
				if err != nil {
					t.Fatal(err)
				}
				unix.Close(fd)
			}
		}
		unix.Umask(old)
		for _, name := range []string{"sticky", "sgid", "plain", "suid", "sgidfile", "gw"} {
			var want, got unix.Stat_t
			rel := filepath.Join(fmt.Sprintf("u%o", umask), name)
			unix.Lstat(filepath.Join(native, rel), &want)
			unix.Lstat(filepath.Join(m.backing, rel), &got)
			if got.Mode != want.Mode {
				t.Errorf("%s: mode %o through ckfs, %o natively", rel, got.Mode, want.Mode)
			}
		}
	}
}

func TestRenameExchangeAndNoReplace(t *testing.T) {
	m := mount(t, false)
	os.WriteFile(m.path("a"), []byte("A"), 0o644)
	os.WriteFile(m.path("b"), []byte("B"), 0o644)
	m.open("w")
	if err := unix.Renameat2(unix.AT_FDCWD, m.path("a"), unix.AT_FDCWD, m.path("b"), unix.RENAME_EXCHANGE); err != nil {
		t.Fatal(err)
	}
	if err := unix.Renameat2(unix.AT_FDCWD, m.path("a"), unix.AT_FDCWD, m.path("b"), unix.RENAME_NOREPLACE); err != unix.EEXIST {
		t.Fatalf("RENAME_NOREPLACE over an existing file: %v", err)
	}
	if err := unix.Renameat2(unix.AT_FDCWD, m.path("a"), unix.AT_FDCWD, m.path("c"), unix.RENAME_NOREPLACE); err != nil {
		t.Fatal(err)
	}
	m.close("w")
	recs := m.records()
	w := index.Windows(recs)[len(index.Windows(recs))-1]
	before, after := index.StateAt(recs, w.Open.Seq), index.StateAt(recs, w.Close.Seq)
	if m.get(before["a"].Hash) != "A" || m.get(before["b"].Hash) != "B" || before["c"].Exists() {
		t.Errorf("before: %+v", before)
	}
	if after["a"].Exists() || m.get(after["b"].Hash) != "A" || m.get(after["c"].Hash) != "B" {
		t.Errorf("after: %+v", after)
	}
}

func TestTruncateUnlinkSymlinkLink(t *testing.T) {
	m := mount(t, false)
	os.WriteFile(m.path("t"), []byte("0123456789"), 0o644)
	os.WriteFile(m.path("gone"), []byte("bye"), 0o644)
	m.open("w")
	if err := os.Truncate(m.path("t"), 3); err != nil {
		t.Fatal(err)
	}
	os.Remove(m.path("gone"))
	os.Symlink("t", m.path("l"))
	os.Link(m.path("t"), m.path("hard"))
	os.Chmod(m.path("t"), 0o600)
	m.close("w")
	recs := m.records()
	w := index.Windows(recs)[0]
	before, after := index.StateAt(recs, w.Open.Seq), index.StateAt(recs, w.Close.Seq)
	if m.get(before["t"].Hash) != "0123456789" || m.get(after["t"].Hash) != "012" || after["t"].Mode != 0o600 || before["t"].Mode != 0o644 {
		t.Errorf("truncate/chmod: %+v -> %+v", before["t"], after["t"])
	}
	if m.get(before["gone"].Hash) != "bye" || after["gone"].Exists() {
		t.Errorf("unlink: %+v -> %+v", before["gone"], after["gone"])
	}
	if before["l"].Exists() || after["l"].Type != index.TypeSymlink || m.get(after["l"].Hash) != "t" {
		t.Errorf("symlink: %+v -> %+v", before["l"], after["l"])
	}
	if before["hard"].Exists() || m.get(after["hard"].Hash) != "012" {
		t.Errorf("link: %+v -> %+v", before["hard"], after["hard"])
	}
}

// The root's own attributes are not recorded, but changing them works
// (cp -a sets the times of the directory it copies into).
func TestRootSetattr(t *testing.T) {
	m := mount(t, true)
	m.open("w")
	if err := os.Chtimes(m.mnt, time.Unix(1, 0), time.Unix(2, 0)); err != nil {
		t.Fatalf("utimes on the mount root: %v", err)
	}
	if err := os.Chmod(m.mnt, 0o750); err != nil {
		t.Fatalf("chmod on the mount root: %v", err)
	}
	m.close("w")
}

// Deep paths work: the file is created, captured and read back through a
// path of nearly PATH_MAX bytes (the loopback adds the short
// /proc/self/fd/N prefix to each path, so the last few bytes below
// PATH_MAX are not reachable; see the README's limits).
func TestLongPaths(t *testing.T) {
	m := mount(t, false)
	m.open("w")
	comp := strings.Repeat("d", 200)
	rel := ""
	for len(rel)+len(comp)+1 < 4000 {
		if rel != "" {
			rel += "/"
		}
		rel += comp
		if err := os.Mkdir(m.path(rel), 0o755); err != nil {
			t.Fatalf("mkdir at depth %d (%d bytes): %v", strings.Count(rel, "/")+1, len(rel), err)
		}
	}
	// Open relative to a deep directory: a single path argument is
	// limited to PATH_MAX by the kernel, natively too.
	dir, err := os.Open(m.path(rel))
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	fd, err := unix.Openat(int(dir.Fd()), "f.txt", unix.O_CREAT|unix.O_WRONLY, 0o644)
	if err != nil {
		t.Fatalf("create at %d bytes: %v", len(rel)+6, err)
	}
	unix.Write(fd, []byte("deep"))
	unix.Close(fd)
	m.close("w")
	var found bool
	for _, r := range m.records() {
		if r.Path == rel+"/f.txt" && r.Kind == index.KindAfter && m.get(r.Hash) == "deep" {
			found = true
		}
	}
	if !found {
		t.Errorf("the deep file's post-image was not recorded")
	}
}
