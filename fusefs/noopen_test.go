package fusefs_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/ckfs-dev/ckfs/fusefs"
	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/internal/testenv"
	"golang.org/x/sys/unix"
)

// cachedMount mounts in place in the cached model, with go-fuse's request
// log on.
func cachedMount(t *testing.T) (*mounted, *testenv.RequestLog) {
	reqs := testenv.CaptureRequestLog(t)
	return mountWith(t, fusefs.Options{InPlace: true, Cached: true, Debug: true}), reqs
}

// A warm read of a file costs no request at all: no OPEN, no READ, no
// FLUSH, no RELEASE once the kernel has the file's pages.
func TestCachedWarmReadsSendNothing(t *testing.T) {
	m, reqs := cachedMount(t)
	if err := os.WriteFile(m.path("a.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	read := func() {
		t.Helper()
		if b, err := os.ReadFile(m.path("a.txt")); err != nil || string(b) != "hello\n" {
			t.Fatalf("read %q, %v", b, err)
		}
	}
	read()
	read() // the write left the attributes to fetch once
	before := map[string]int{}
	ops := []string{"OPEN", "READ", "FLUSH", "RELEASE", "GETATTR", "LOOKUP"}
	for _, op := range ops {
		before[op] = reqs.Count(op)
	}
	for range 10 {
		read()
	}
	for _, op := range ops {
		if n := reqs.Count(op) - before[op]; n != 0 {
			t.Errorf("10 warm reads sent %d %s requests", n, op)
		}
	}
	// A change through the mount shows at once.
	if err := os.WriteFile(m.path("a.txt"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(m.path("a.txt")); string(b) != "changed\n" {
		t.Errorf("after a write: %q", b)
	}
}

// A process that holds a file open goes on reading and writing it after
// its name is gone, renamed over or linked elsewhere, as it would natively;
// the daemon has no handle to serve it by, so it pins the file.
func TestCachedDescriptorsOutliveTheirNames(t *testing.T) {
	m, _ := cachedMount(t)
	write := func(f *os.File, s string) {
		t.Helper()
		if _, err := f.WriteString(s); err != nil {
			t.Fatalf("write %q through %s: %v", s, f.Name(), err)
		}
	}
	readAll := func(f *os.File) string {
		t.Helper()
		b := make([]byte, 100)
		n, err := f.ReadAt(b, 0)
		if n == 0 && err != nil {
			t.Fatalf("read through %s: %v", f.Name(), err)
		}
		return string(b[:n])
	}

	// Unlinked while open.
	f, err := os.OpenFile(m.path("tmp"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	write(f, "one ")
	if err := os.Remove(m.path("tmp")); err != nil {
		t.Fatal(err)
	}
	write(f, "two")
	if got := readAll(f); got != "one two" {
		t.Errorf("an unlinked file reads %q", got)
	}
	if err := f.Truncate(3); err != nil {
		t.Errorf("ftruncate of an unlinked file: %v", err)
	}
	if st, err := f.Stat(); err != nil || st.Size() != 3 {
		t.Errorf("fstat of an unlinked file: %v %v", st, err)
	}
	f.Close()

	// Renamed over while open: the descriptor keeps the old file.
	os.WriteFile(m.path("a"), []byte("old a"), 0o644)
	os.WriteFile(m.path("b"), []byte("new b"), 0o644)
	f, err = os.OpenFile(m.path("a"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(m.path("b"), m.path("a")); err != nil {
		t.Fatal(err)
	}
	if got := readAll(f); got != "old a" {
		t.Errorf("a file renamed over reads %q through its old descriptor", got)
	}
	if _, err := f.WriteAt([]byte("OLD"), 0); err != nil {
		t.Errorf("write to a file renamed over: %v", err)
	}
	f.Close()
	if b, _ := os.ReadFile(m.path("a")); string(b) != "new b" {
		t.Errorf("the name now reads %q, want the file renamed onto it", b)
	}

	// Linked elsewhere, then its first name removed.
	os.WriteFile(m.path("c"), []byte("c"), 0o644)
	f, err = os.OpenFile(m.path("c"), os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Link(m.path("c"), m.path("d")); err != nil {
		t.Fatal(err)
	}
	os.Remove(m.path("c"))
	write(f, "+more")
	f.Close()
	if b, _ := os.ReadFile(m.path("d")); string(b) != "c+more" {
		t.Errorf("the other link reads %q", b)
	}
}

// Writes through a descriptor opened before a window are the window's when
// made in it (the pre-image is taken at the first write, not the open),
// and a write through a shared memory mapping is captured once it reaches
// the daemon (msync, as the hooks' sync before a boundary does).
func TestCachedWritesAreCapturedAtTheirRequest(t *testing.T) {
	m, _ := cachedMount(t)
	os.WriteFile(m.path("held.txt"), []byte("before\n"), 0o644)
	os.WriteFile(m.path("mapped.bin"), bytes.Repeat([]byte{'a'}, 4096), 0o644)
	f, err := os.OpenFile(m.path("held.txt"), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	m.open("w1")
	f.WriteString("in w1\n")
	f.Close()
	mf, err := os.OpenFile(m.path("mapped.bin"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	mem, err := unix.Mmap(int(mf.Fd()), 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	copy(mem, "mapped write")
	if err := unix.Msync(mem, unix.MS_SYNC); err != nil {
		t.Fatal(err)
	}
	unix.Munmap(mem)
	mf.Close()
	m.close("w1")
	recs := m.records()
	w := index.Windows(recs)[0]
	before, after := index.StateAt(recs, w.Open.Seq), index.StateAt(recs, w.Close.Seq)
	// The open truncated held.txt before the window: that is the user's,
	// so the window found it empty.
	if got := m.get(after["held.txt"].Hash); got != "in w1\n" {
		t.Errorf("held.txt after w1 = %q", got)
	}
	if h := before["held.txt"].Hash; h != "" && m.get(h) != "" {
		t.Errorf("held.txt before w1 = %q, want the truncated file", m.get(h))
	}
	owners := map[string]string{}
	for _, r := range recs {
		if r.IsImage() && r.Seq > w.Open.Seq && r.Seq < w.Close.Seq {
			owners[r.Path] = r.Window
		}
	}
	if owners["held.txt"] != "w1" || owners["mapped.bin"] != "w1" {
		t.Errorf("images in w1 by path: %v", owners)
	}
	if got := m.get(after["mapped.bin"].Hash); got[:12] != "mapped write" {
		t.Errorf("mapped.bin after w1 starts %q", got[:12])
	}
}

// In place, the kernel caches each inode's POSIX ACLs: ls -l asks every
// file for system.posix_acl_access, and asking again sends nothing. An
// ACL set through the mount shows at once.
func TestInPlaceACLsAreCached(t *testing.T) {
	m, reqs := cachedMount(t)
	if err := os.WriteFile(m.path("a.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	acl := func() string {
		t.Helper()
		buf := make([]byte, 256)
		n, err := unix.Getxattr(m.path("a.txt"), "system.posix_acl_access", buf)
		if err != nil {
			return err.Error()
		}
		return string(buf[:n])
	}
	if got := acl(); got != unix.ENODATA.Error() {
		t.Fatalf("a fresh file's ACL: %q", got)
	}
	before := reqs.Count("GETXATTR")
	for range 10 {
		acl()
	}
	if n := reqs.Count("GETXATTR") - before; n != 0 {
		t.Errorf("10 reads of a file's ACL sent %d GETXATTR requests", n)
	}
	want := readerACL(1234)
	if err := unix.Setxattr(m.path("a.txt"), "system.posix_acl_access", want, 0); err != nil {
		t.Fatal(err)
	}
	if got := acl(); got != string(want) {
		t.Errorf("the ACL set through the mount reads back as %x, want %x", got, want)
	}
	var st unix.Stat_t
	if err := unix.Stat(m.path("a.txt"), &st); err != nil || st.Mode&0o777 != 0o640 {
		t.Errorf("mode after the ACL: %o, %v (want 640: the mask is the group bits)", st.Mode&0o777, err)
	}
}

// readerACL is a POSIX access ACL as system.posix_acl_access holds it
// (version 2, then tag, perm and id of each entry): user::rw-,
// user:uid:r--, group::r--, mask::r--, other::---.
func readerACL(uid uint32) []byte {
	b := []byte{2, 0, 0, 0}
	for _, e := range [][3]uint32{{0x01, 6, 0xffffffff}, {0x02, 4, uid}, {0x04, 4, 0xffffffff}, {0x10, 4, 0xffffffff}, {0x20, 0, 0xffffffff}} {
		b = append(b, byte(e[0]), byte(e[0]>>8), byte(e[1]), byte(e[1]>>8))
		b = append(b, byte(e[2]), byte(e[2]>>8), byte(e[2]>>16), byte(e[2]>>24))
	}
	return b
}

// The root's own extended attributes read and write through the mount as
// any directory's, whichever way the daemon reaches the backing directory.
func TestRootExtendedAttributes(t *testing.T) {
	for _, inPlace := range []bool{false, true} {
		m := mount(t, inPlace)
		if err := unix.Setxattr(m.mnt, "user.note", []byte("root"), 0); err != nil {
			t.Fatalf("in place %v: set the root's attribute: %v", inPlace, err)
		}
		buf := make([]byte, 64)
		if n, err := unix.Getxattr(m.mnt, "user.note", buf); err != nil || string(buf[:n]) != "root" {
			t.Errorf("in place %v: the root's attribute reads back %q, %v", inPlace, buf[:max(n, 0)], err)
		}
		if n, err := unix.Listxattr(m.mnt, buf); err != nil || !bytes.Contains(buf[:max(n, 0)], []byte("user.note\x00")) {
			t.Errorf("in place %v: the root's attribute list: %q, %v", inPlace, buf[:max(n, 0)], err)
		}
		if n, err := unix.Getxattr(m.backing, "user.note", buf); !inPlace && (err != nil || string(buf[:n]) != "root") {
			t.Errorf("the backing directory's attribute: %q, %v", buf[:max(n, 0)], err)
		}
		if err := unix.Removexattr(m.mnt, "user.note"); err != nil {
			t.Errorf("in place %v: remove the root's attribute: %v", inPlace, err)
		}
	}
}

// A file with no SELinux label answers "not supported" for it (the kernel
// only asks the daemon when no security module keeps labels), so ls -l,
// which stops asking a device that does not support labels, asks once for
// the whole mount instead of once a file. A label that is there reads
// back, and other attributes keep their answers.
func TestMissingSecurityLabelIsNotSupported(t *testing.T) {
	m, reqs := cachedMount(t)
	for _, name := range []string{"a.txt", "b.txt"} {
		if err := os.WriteFile(m.path(name), []byte("hello\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	buf := make([]byte, 256)
	for _, p := range []string{m.mnt, m.path("a.txt")} {
		if _, err := unix.Lgetxattr(p, "security.selinux", buf); err != unix.EOPNOTSUPP {
			t.Errorf("%s: security.selinux with no label: %v, want %v", p, err, unix.EOPNOTSUPP)
		}
	}
	if _, err := unix.Lgetxattr(m.path("a.txt"), "user.none", buf); err != unix.ENODATA {
		t.Errorf("a missing user attribute: %v, want %v", err, unix.ENODATA)
	}
	labels := func() int { return reqs.CountWith("GETXATTR", "security.selinux") }
	before := labels()
	out, err := exec.Command("ls", "-l", m.mnt).CombinedOutput()
	if err != nil {
		t.Fatalf("ls -l: %v\n%s", err, out)
	}
	if n := labels() - before; n != 1 {
		t.Errorf("ls -l of 2 files asked for security.selinux %d times, want once", n)
	}
	label := []byte("system_u:object_r:user_home_t:s0")
	if err := unix.Setxattr(m.path("b.txt"), "security.selinux", label, 0); err != nil {
		t.Skipf("this kernel does not let security.selinux be set: %v", err)
	}
	if n, err := unix.Lgetxattr(m.path("b.txt"), "security.selinux", buf); err != nil || string(buf[:n]) != string(label) {
		t.Errorf("a label set through the mount reads back %q, %v", buf[:max(n, 0)], err)
	}
}

// A file replaced behind the mount (renamed over from the backing
// directory, as a rewind does) while a process writes it through the
// mount: the cached model has no handle, and its next WRITE goes where
// the name now leads, as a new open of the name would, not to the
// replaced file the daemon kept a descriptor of.
func TestKeptWriteDescriptorFollowsAReplacement(t *testing.T) {
	m := mount(t, true)
	f, err := os.OpenFile(m.path("f"), os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte("one"), 0); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Openat(m.under, "f.new", unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	unix.Write(fd, []byte("xxxxx"))
	unix.Close(fd)
	if err := unix.Renameat(m.under, "f.new", m.under, "f"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("TWO"), 0); err != nil {
		t.Fatal(err)
	}
	fd, err = unix.Openat(m.under, "f", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	buf := make([]byte, 16)
	k, _ := unix.Read(fd, buf)
	if got := string(buf[:k]); got != "TWOxx" {
		t.Errorf("the file at the name after a write through the mount: %q, want %q", got, "TWOxx")
	}
}

// Every unlink of a file the kernel knows pins it (a process may hold it
// open), and the pin is closed when the kernel forgets the node: deleting
// files leaves the daemon no descriptor of them.
func TestPinsAreClosedWhenForgotten(t *testing.T) {
	m, _ := cachedMount(t)
	const n = 200
	for i := range n {
		if err := os.WriteFile(m.path(fmt.Sprintf("f%d", i)), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base := openFds(t)
	for i := range n {
		if err := os.Remove(m.path(fmt.Sprintf("f%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	// The kernel forgets an unlinked node once nothing uses it; its
	// FORGET comes after the unlink's reply.
	deadline := time.Now().Add(20 * time.Second)
	for openFds(t) > base && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := openFds(t); got > base {
		t.Errorf("%d descriptors open after deleting %d files, %d before", got, n, base)
	}
}

// openFds counts this process's open descriptors (the mount's daemon is
// this process).
func openFds(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}
