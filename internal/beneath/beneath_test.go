package beneath

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// The policy, with openat2 and with the element-by-element walk alike: a
// symlink or a file where a directory should be is ENOTDIR, a final
// symlink ELOOP (or the link itself with O_PATH), anything not plain and
// relative EINVAL, and nothing outside the root is ever reached.
func TestPolicy(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o600)
	os.MkdirAll(filepath.Join(dir, "a/b"), 0o755)
	os.WriteFile(filepath.Join(dir, "a/b/f"), []byte("f"), 0o644)
	os.Symlink(outside, filepath.Join(dir, "out"))
	os.Symlink("a", filepath.Join(dir, "in"))
	os.Symlink("f", filepath.Join(dir, "a/b/l"))
	root, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(root)
	cases := []struct {
		rel   string
		flags int
		want  error // nil: opens
	}{
		{"a/b/f", unix.O_RDONLY, nil},
		{"a/b", DirFlags, nil},
		{"out/secret", unix.O_RDONLY, unix.ENOTDIR},
		{"in/b/f", unix.O_RDONLY, unix.ENOTDIR},
		{"a/b/f/x", unix.O_RDONLY, unix.ENOTDIR},
		{"a/b/l", unix.O_RDONLY, unix.ELOOP},
		{"a/b/l", unix.O_PATH, nil},
		{"a/b/missing", unix.O_RDONLY, unix.ENOENT},
		{"../x", unix.O_RDONLY, unix.EINVAL},
		{"a/../../x", unix.O_RDONLY, unix.EINVAL},
		{"/etc/passwd", unix.O_RDONLY, unix.EINVAL},
		{"a//f", unix.O_RDONLY, unix.EINVAL},
		{"", unix.O_RDONLY, unix.EINVAL},
	}
	for _, walkOnly := range []bool{false, true} {
		noOpenat2.Store(walkOnly)
		for _, c := range cases {
			fd, err := Open(root, c.rel, c.flags)
			if fd >= 0 {
				unix.Close(fd)
			}
			if (c.want == nil) != (err == nil) || (c.want != nil && !errors.Is(err, c.want)) {
				t.Errorf("walk only %v: Open(%q) = %v, want %v", walkOnly, c.rel, err, c.want)
			}
		}
		pfd, base, err := Parent(root, "in/b/f")
		if !errors.Is(err, unix.ENOTDIR) {
			t.Errorf("walk only %v: Parent through a symlink: %d %q %v", walkOnly, pfd, base, err)
		}
		pfd, base, err = Parent(root, "a/b/f")
		if err != nil || base != "f" {
			t.Fatalf("walk only %v: Parent(a/b/f) = %q, %v", walkOnly, base, err)
		}
		var st unix.Stat_t
		if err := unix.Fstatat(pfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Size != 1 {
			t.Errorf("walk only %v: stat from the parent: %v", walkOnly, err)
		}
		unix.Close(pfd)
		for _, c := range []struct {
			rel  string
			mode uint32 // 0: err
			err  error
		}{
			{"a/b/f", unix.S_IFREG, nil},
			{"a/b/l", unix.S_IFLNK, nil},
			{"out", unix.S_IFLNK, nil},
			{"a", unix.S_IFDIR, nil},
			{"a/b/missing", 0, unix.ENOENT},
			{"out/secret", 0, unix.ENOTDIR},
			{"in/b/f", 0, unix.ENOTDIR},
			{"a/../../x", 0, unix.EINVAL},
		} {
			var st unix.Stat_t
			err := Lstat(root, c.rel, &st)
			if c.err != nil && !errors.Is(err, c.err) || c.err == nil && (err != nil || st.Mode&unix.S_IFMT != c.mode) {
				t.Errorf("walk only %v: Lstat(%q) = mode %o, %v; want mode %o, %v", walkOnly, c.rel, st.Mode&unix.S_IFMT, err, c.mode, c.err)
			}
		}
	}
	noOpenat2.Store(false)
}

// A walk over the FS lists a symlink as a symlink and never descends
// through it, even to a directory inside the root.
func TestFSWalk(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "a/b"), 0o755)
	os.WriteFile(filepath.Join(dir, "a/b/f"), []byte("f"), 0o644)
	os.Symlink("a", filepath.Join(dir, "in"))
	os.Symlink(t.TempDir(), filepath.Join(dir, "out"))
	root, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(root)
	fsys := NewFS(root)
	var got []string
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, err := fsys.Lstat(p)
		if err != nil {
			return err
		}
		got = append(got, p+":"+st.Mode().Type().String())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".:d---------", "a:d---------", "a/b:d---------", "a/b/f:----------", "in:L---------", "out:L---------"}
	if !slices.Equal(got, want) {
		t.Errorf("walk: %q, want %q", got, want)
	}
	if l, err := fsys.ReadLink("in"); err != nil || l != "a" {
		t.Errorf("ReadLink(in) = %q, %v", l, err)
	}
	if _, err := fsys.Open("in/b/f"); !errors.Is(err, unix.ENOTDIR) {
		t.Errorf("open through a symlink: %v", err)
	}
}
