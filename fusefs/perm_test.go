package fusefs_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ckfs-dev/ckfs/fusefs"
	"golang.org/x/sys/unix"
)

// asNobody runs a shell command in dir as uid/gid 65534 and returns its
// output and whether it succeeded. The child starts in / and enters dir
// only once it runs sh: the mount is served by this very process, which
// must not have to answer FUSE requests from a child it is still forking.
func asNobody(t *testing.T, dir, script string) (string, bool) {
	t.Helper()
	c := exec.Command("sh", "-c", `cd "$1" && `+script, "sh", dir)
	c.Dir = "/"
	c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := c.CombinedOutput()
	return string(out), err == nil
}

// The kernel checks permissions on every mount: with --allow-other, a
// local user must get exactly the rights the files give them, never the
// daemon's (root's). Modes are reported exactly, 0000 included.
func TestKernelChecksPermissions(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to act as another user")
	}
	m := mountWith(t, fusefs.Options{AllowOther: true})
	// Let the other user reach the mountpoint and the backing directory's
	// root (the mount's root shows the backing directory's mode).
	reachable(t, m.mnt)
	reachable(t, m.backing)
	if err := os.WriteFile(m.path("secret"), []byte("root's only\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(m.path("public"), []byte("anyone may read\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, ok := asNobody(t, m.mnt, "cat public"); !ok || out != "anyone may read\n" {
		t.Fatalf("another user cannot read a 0644 file through the mount (the test cannot tell anything): %q", out)
	}
	for what, script := range map[string]string{
		"read a 0600 file":                           "cat secret",
		"append to a 0600 file":                      "echo more >> secret",
		"chmod a file it does not own":               "chmod 666 secret",
		"create in a 0755 directory it does not own": "echo x > mine",
	} {
		if out, ok := asNobody(t, m.mnt, script); ok {
			t.Errorf("another user could %s through the mount: %q", what, out)
		} else if !strings.Contains(out, "ermission denied") && !strings.Contains(out, "not permitted") {
			t.Errorf("%s: want permission denied, got %q", what, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(m.backing, "secret")); string(b) != "root's only\n" {
		t.Errorf("secret changed: %q", b)
	}

	fd, err := syscall.Open(m.path("zero"), syscall.O_CREAT|syscall.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	syscall.Close(fd)
	if fi, err := os.Stat(m.path("zero")); err != nil || fi.Mode().Perm() != 0 {
		t.Errorf("a file created with mode 0000 reads back as %v (%v)", fi.Mode(), err)
	}
}

// Mounted in place, the kernel grants what a file's ACL grants, as
// natively: another user named in the ACL of a 0600 file may read it.
func TestKernelHonoursACLs(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to act as another user")
	}
	m := mountWith(t, fusefs.Options{InPlace: true, Cached: true, AllowOther: true})
	reachable(t, m.mnt)
	if err := os.WriteFile(m.path("shared"), []byte("for nobody too\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setxattr(m.path("shared"), "system.posix_acl_access", readerACL(65534), 0); err != nil {
		t.Fatal(err)
	}
	if out, ok := asNobody(t, m.mnt, "cat shared"); !ok || out != "for nobody too\n" {
		t.Errorf("a user the ACL lets read a file cannot read it through the mount: %q", out)
	}
	if out, ok := asNobody(t, m.mnt, "echo more >> shared"); ok {
		t.Errorf("a user the ACL lets only read a file could write it: %q", out)
	}
}

// reachable lets every user search dir and each directory above it,
// putting the modes back when the test ends.
func reachable(t *testing.T, dir string) {
	for d := dir; d != "/" && d != "."; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil || fi.Mode().Perm()&0o005 == 0o005 {
			continue
		}
		old := fi.Mode().Perm()
		if err := os.Chmod(d, old|0o005); err == nil {
			t.Cleanup(func() { os.Chmod(d, old) })
		}
	}
}
