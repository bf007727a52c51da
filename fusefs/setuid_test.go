package fusefs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ckfs-dev/ckfs/fusefs"
	"golang.org/x/sys/unix"
)

// specialModes are modes with setuid, setgid or sticky that a new file
// keeps on the disk itself.
var specialModes = []uint32{0o4755, 0o2755, 0o6755, 0o1755, 0o4644}

// A file created with setuid, setgid or sticky in its mode has them, as it
// does on the disk itself: running as root, the loopback's chown of each
// new node to its maker cleared setuid and setgid (chown does, for root
// too), in the cached model, where files are made with MKNOD.
func TestNewFilesKeepSetuidAndSetgid(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the daemon chowns new nodes only as root")
	}
	native := t.TempDir()
	want := map[string]uint32{}
	for _, mode := range specialModes {
		name := fmt.Sprintf("f%o", mode)
		want[name] = createMode(t, filepath.Join(native, name), mode)
		if want[name]&0o7000 == 0 {
			t.Fatalf("the disk itself made %s without its special bits (%o)", name, want[name])
		}
	}
	inBothModels(t, fusefs.Options{}, func(t *testing.T, m *mounted) {
		for name, w := range want {
			mode := uint32(0)
			fmt.Sscanf(name, "f%o", &mode)
			if got := createMode(t, m.path(name), mode); got != w {
				t.Errorf("open(O_CREAT, %04o) through the mount made mode %04o, the disk itself %04o", mode, got, w)
			}
		}
	})
}

// inBothModels runs f on a fresh in-place mount with the options o in
// each I/O model (the passthrough model makes files with CREATE, the
// cached one with MKNOD).
func inBothModels(t *testing.T, o fusefs.Options, f func(t *testing.T, m *mounted)) {
	t.Helper()
	for _, model := range []string{"cached", "passthrough"} {
		t.Run(model, func(t *testing.T) {
			o := o
			o.InPlace, o.Cached = true, model == "cached"
			f(t, mountWith(t, o))
		})
	}
}

// createMode creates p with open(O_CREAT) in mode and returns the mode it got.
func createMode(t *testing.T, p string, mode uint32) uint32 {
	t.Helper()
	fd, err := unix.Open(p, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, mode)
	if err != nil {
		t.Fatalf("create %s: %v", p, err)
	}
	unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		t.Fatal(err)
	}
	return st.Mode & 0o7777
}

// Another user's new setuid or setgid file keeps those bits, though the
// daemon chowns it to them after making it.
func TestAnotherUsersNewFilesKeepSetuidAndSetgid(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to act as another user")
	}
	if _, err := os.Stat("/usr/bin/perl"); err != nil {
		t.Skip("needs perl to create a file with a given mode as another user")
	}
	create := `perl -e 'use Fcntl; umask 022; for (@ARGV) { sysopen(F, "f$_", O_CREAT|O_EXCL|O_WRONLY, oct($_)) or die "f$_: $!"; close F }' 4755 2755 6755 1755 4644`
	native := t.TempDir()
	reachable(t, native)
	os.Chmod(native, 0o777)
	if out, ok := asNobody(t, native, create); !ok {
		t.Fatalf("another user creating files natively: %s", out)
	}
	inBothModels(t, fusefs.Options{AllowOther: true}, func(t *testing.T, m *mounted) {
		reachable(t, m.mnt)
		if err := os.Mkdir(m.path("open"), 0o777); err != nil {
			t.Fatal(err)
		}
		os.Chmod(m.path("open"), 0o777)
		if out, ok := asNobody(t, m.path("open"), create); !ok {
			t.Fatalf("another user creating files through the mount: %s", out)
		}
		for _, mode := range specialModes {
			name := fmt.Sprintf("f%o", mode)
			var nst, mst unix.Stat_t
			if err := unix.Lstat(filepath.Join(native, name), &nst); err != nil {
				t.Fatal(err)
			}
			if err := unix.Lstat(m.path("open/"+name), &mst); err != nil {
				t.Fatal(err)
			}
			if mst.Mode != nst.Mode || mst.Uid != nst.Uid || mst.Gid != nst.Gid {
				t.Errorf("uid 65534's open(O_CREAT, %04o) through the mount: mode %06o, owner %d:%d; the disk itself: mode %06o, owner %d:%d",
					mode, mst.Mode, mst.Uid, mst.Gid, nst.Mode, nst.Uid, nst.Gid)
			}
		}
	})
}

// A sticky directory made in a setgid directory is sticky and setgid, as
// on the disk itself: putting back the sticky bit os.Mkdir drops must not
// take away the setgid bit the disk gave it.
func TestStickyDirectoryInASetgidDirectoryKeepsBoth(t *testing.T) {
	mkdirIn := func(root string) uint32 {
		t.Helper()
		shared := filepath.Join(root, "shared")
		if err := os.Mkdir(shared, 0o775); err != nil {
			t.Fatal(err)
		}
		if err := unix.Chmod(shared, 0o2775); err != nil {
			t.Fatal(err)
		}
		if err := unix.Mkdir(filepath.Join(shared, "tmp"), 0o1777); err != nil {
			t.Fatal(err)
		}
		var st unix.Stat_t
		if err := unix.Lstat(filepath.Join(shared, "tmp"), &st); err != nil {
			t.Fatal(err)
		}
		return st.Mode & 0o7777
	}
	want := mkdirIn(t.TempDir())
	if want&0o3000 != 0o3000 {
		t.Fatalf("the disk itself made %04o", want)
	}
	inBothModels(t, fusefs.Options{}, func(t *testing.T, m *mounted) {
		if got := mkdirIn(m.mnt); got != want {
			t.Errorf("mkdir(01777) in a setgid directory through the mount made %04o, the disk itself %04o", got, want)
		}
	})
}
