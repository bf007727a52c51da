package integration

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// posixACL encodes a POSIX access ACL as the kernel stores it in
// system.posix_acl_access: version 2, then (tag, perm, id) entries.
func posixACL(userID uint32) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, uint32(2))
	for _, e := range []struct {
		tag, perm uint16
		id        uint32
	}{{0x01, 6, 0xffffffff}, {0x02, 4, userID}, {0x04, 4, 0xffffffff}, {0x10, 4, 0xffffffff}, {0x20, 0, 0xffffffff}} {
		binary.Write(&b, binary.LittleEndian, e.tag)
		binary.Write(&b, binary.LittleEndian, e.perm)
		binary.Write(&b, binary.LittleEndian, e.id)
	}
	return b.Bytes()
}

func getxattr(t *testing.T, p, name string) string {
	t.Helper()
	buf := make([]byte, 4096)
	n, err := unix.Lgetxattr(p, name, buf)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(buf[:n])
}

// A rewind puts back what "put it back" means beyond the bytes: extended
// attributes (user namespace and POSIX ACLs, also through --rollback),
// holes of sparse files, and owners; and it says in the preview which
// hard links it cannot keep.
func TestRewindRestoresMetadata(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to chown")
	}
	w := mountWorkspace(t, `printf 'a0\n' > a.txt && mkdir d`)
	p := filepath.Join(w.root, "a.txt")
	// Window 1 (through the mount): attributes, an ACL, an owner, and a
	// sparse file.
	w.ckfs("window", "open", "--id", "meta")
	must(t, unix.Setxattr(p, "user.note", []byte("keep me"), 0))
	must(t, unix.Setxattr(p, "system.posix_acl_access", posixACL(1234), 0))
	must(t, unix.Setxattr(filepath.Join(w.root, "d"), "user.dirnote", []byte("dir"), 0))
	must(t, os.Chown(p, 4321, 4321))
	sparse := filepath.Join(w.root, "sparse.img")
	f, err := os.Create(sparse)
	must(t, err)
	f.WriteAt([]byte("head"), 0)
	f.WriteAt([]byte("tail"), 8<<20)
	f.Close()
	w.ckfs("window", "close", "--id", "meta")
	acl := getxattr(t, p, "system.posix_acl_access")

	// Window 2 changes all of it.
	w.ckfs("window", "open", "--id", "wreck")
	must(t, unix.Removexattr(p, "user.note"))
	must(t, unix.Removexattr(p, "system.posix_acl_access"))
	must(t, unix.Setxattr(filepath.Join(w.root, "d"), "user.dirnote", []byte("changed"), 0))
	must(t, os.Chown(p, 0, 0))
	must(t, os.WriteFile(p, []byte("a1\n"), 0o644))
	must(t, os.Remove(sparse))
	w.ckfs("window", "close", "--id", "wreck")

	w.ckfs("rewind", "--files", "--to", "wreck")
	check := func(when string) {
		t.Helper()
		if got := getxattr(t, p, "user.note"); got != "keep me" {
			t.Errorf("%s: user.note = %q", when, got)
		}
		if got := getxattr(t, p, "system.posix_acl_access"); got != acl {
			t.Errorf("%s: the ACL was not restored", when)
		}
		if got := getxattr(t, filepath.Join(w.root, "d"), "user.dirnote"); got != "dir" {
			t.Errorf("%s: d's user.dirnote = %q", when, got)
		}
		var st unix.Stat_t
		must(t, unix.Lstat(p, &st))
		if st.Uid != 4321 || st.Gid != 4321 {
			t.Errorf("%s: a.txt owned by %d:%d, want 4321:4321", when, st.Uid, st.Gid)
		}
		must(t, unix.Lstat(sparse, &st))
		if st.Size != 8<<20+4 || st.Blocks*512 > 64<<10 {
			t.Errorf("%s: sparse.img is %d bytes in %d blocks: the holes were filled", when, st.Size, st.Blocks)
		}
		if b, _ := os.ReadFile(sparse); !bytes.HasPrefix(b, []byte("head")) || !bytes.HasSuffix(b, []byte("tail")) {
			t.Errorf("%s: sparse.img content is wrong", when)
		}
	}
	check("after the rewind")

	// --rollback brings them all back too: a rewind to before the first
	// window, killed part way (unmounted, with the test kill hook), is
	// rolled back.
	w.unmount()
	out, code := w.exitCode([]string{"CKFS_TEST_REWIND_KILL_AT=1"}, "rewind", "--files", "--to", "meta")
	ents, _ := os.ReadDir(filepath.Join(w.store, "journal"))
	if code == 0 || len(ents) != 1 {
		t.Fatalf("the rewind killed part way: exit %d, %d journals\n%s", code, len(ents), out)
	}
	if got := getxattr(t, p, "user.note"); got == "keep me" {
		t.Fatalf("the kill hook stopped nothing: a.txt still has its attributes")
	}
	w.ckfs("rewind", "--rollback", strings.TrimSuffix(ents[0].Name(), ".json"))
	check("after --rollback")
	w.mount()

	// Hard links: the preview says what the rewind cannot keep.
	// (Writing a.txt also changed hard.txt, a change ckfs never saw as
	// such: the preview is refused for it, and says so.)
	w.window("link", `ln a.txt hard.txt && printf 'a2\n' > a.txt`)
	out, _ = w.exitCode(nil, "rewind", "--to", "link")
	if !strings.Contains(out, "hard links") || !strings.Contains(out, "a.txt (2 names)") {
		t.Errorf("the preview does not warn about the hard link:\n%s", out)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
