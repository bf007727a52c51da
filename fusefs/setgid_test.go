package fusefs_test

import (
	"os"
	"testing"

	"github.com/ckfs-dev/ckfs/fusefs"
	"golang.org/x/sys/unix"
)

// A file, directory, symbolic link or special file made through the mount
// in a setgid directory takes that directory's group, as it does on the
// disk itself; the daemon, running as root, must not hand it the group of
// the process that made it instead. In both I/O models.
func TestNewNodesInASetgidDirectoryTakeItsGroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the daemon chowns new nodes only as root")
	}
	const group = 4242 // not the test's own group
	inBothModels(t, fusefs.Options{}, func(t *testing.T, m *mounted) {
		d := m.path("shared")
		if err := os.Mkdir(d, 0o775); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(d, 0, group); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o2775|os.ModeSetgid); err != nil {
			t.Fatal(err)
		}
		makers := map[string]func(string) error{
			"file":    func(p string) error { return os.WriteFile(p, []byte("x"), 0o644) },
			"dir":     func(p string) error { return os.Mkdir(p, 0o755) },
			"symlink": func(p string) error { return os.Symlink("file", p) },
			"fifo":    func(p string) error { return unix.Mkfifo(p, 0o644) },
		}
		for name, mk := range makers {
			p := d + "/" + name
			if err := mk(p); err != nil {
				t.Fatalf("make %s: %v", name, err)
			}
			var st unix.Stat_t
			if err := unix.Lstat(p, &st); err != nil {
				t.Fatal(err)
			}
			if st.Gid != group {
				t.Errorf("%s made in a setgid directory of group %d has group %d", name, group, st.Gid)
			}
		}
	})
}

// Another user's new files (with --allow-other) are theirs: their uid,
// their group outside a setgid directory, the directory's inside one.
func TestAnotherUsersNewFilesTakeTheirOwnerAndTheDisksGroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to act as another user")
	}
	const group = 4242
	m := mountWith(t, fusefs.Options{InPlace: true, Cached: true, AllowOther: true})
	reachable(t, m.mnt)
	for dir, mode := range map[string]os.FileMode{"open": 0o777, "shared": 0o777 | os.ModeSetgid} {
		if err := os.Mkdir(m.path(dir), 0o777); err != nil {
			t.Fatal(err)
		}
		os.Chown(m.path(dir), 0, group)
		if err := os.Chmod(m.path(dir), mode); err != nil {
			t.Fatal(err)
		}
	}
	if out, ok := asNobody(t, m.mnt, "echo x > open/f && mkdir open/d && echo x > shared/f && mkdir shared/d"); !ok {
		t.Fatalf("another user making files: %s", out)
	}
	for p, wantGid := range map[string]uint32{"open/f": 65534, "open/d": 65534, "shared/f": group, "shared/d": group} {
		var st unix.Stat_t
		if err := unix.Lstat(m.path(p), &st); err != nil {
			t.Fatal(err)
		}
		if st.Uid != 65534 || st.Gid != wantGid {
			t.Errorf("%s made by uid 65534: owner %d:%d, want 65534:%d", p, st.Uid, st.Gid, wantGid)
		}
	}
}
