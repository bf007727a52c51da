package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// A user who is not root and cannot open /dev/fuse: ckfs mount says why
// (the device's mode and owner) and the fix that can work here, and
// leaves no store behind that later commands would resolve to; doctor
// gives the same fix.
func TestMountAsUserWithoutFUSE(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to act as another user")
	}
	var st unix.Stat_t
	if err := unix.Stat("/dev/fuse", &st); err != nil || st.Mode&0o006 == 0o006 {
		t.Skip("/dev/fuse is missing or open to every user here: nothing to explain")
	}
	dir := t.TempDir()
	for d := dir; d != "/" && d != "."; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o005 != 0o005 {
			os.Chmod(d, fi.Mode().Perm()|0o005)
			t.Cleanup(func() { os.Chmod(d, fi.Mode().Perm()) })
		}
	}
	repo, home := filepath.Join(dir, "repo"), filepath.Join(dir, "home")
	for _, d := range []string{repo, home} {
		os.Mkdir(d, 0o755)
		os.Chown(d, 65534, 65534)
	}
	// The test binary's directory is private: the other user gets a copy.
	bin := filepath.Join(dir, "ckfs")
	if b, err := os.ReadFile(ckfsBin); err != nil || os.WriteFile(bin, b, 0o755) != nil {
		t.Fatal("copy the ckfs binary")
	}
	run := func(args ...string) (string, int) {
		c := exec.Command(bin, args...)
		c.Dir = repo
		c.Env = []string{"HOME=" + home, "CKFS_HOME=" + filepath.Join(home, "stores"), "CKFS_CONFIG=" + filepath.Join(home, "c.toml"), "PATH=" + os.Getenv("PATH"), "NO_COLOR=1"}
		c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := c.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return string(out), ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}
	out, code := run("mount", repo)
	if code == 0 {
		run("unmount", repo)
		t.Fatalf("mount succeeded without access to /dev/fuse:\n%s", out)
	}
	for _, want := range []string{"why: /dev/fuse cannot be opened: permission denied (it is c", "fix: "} {
		if !strings.Contains(out, want) {
			t.Errorf("mount error lacks %q:\n%s", want, out)
		}
	}
	if st.Mode&0o060 == 0 && !strings.Contains(out, "run ckfs as root") {
		t.Errorf("only the owner can open /dev/fuse, but the fix is not to run as root:\n%s", out)
	}
	if strings.Contains(out, "add yourself to group") && st.Mode&0o060 == 0 {
		t.Errorf("advice that cannot work here (the group has no access):\n%s", out)
	}
	if entries, _ := os.ReadDir(filepath.Join(home, "stores")); len(entries) > 0 {
		t.Errorf("the failed mount left a store: %v", entries)
	}
	if out, _ := run("status"); !strings.Contains(out, "is not in a ckfs workspace") {
		t.Errorf("status after the failed mount:\n%s", out)
	}
	doc, _ := run("doctor")
	if !strings.Contains(doc, "FAIL  /dev/fuse: cannot be opened") || !strings.Contains(doc, "fix: run ckfs as root") && st.Mode&0o060 == 0 {
		t.Errorf("doctor:\n%s", doc)
	}
}
