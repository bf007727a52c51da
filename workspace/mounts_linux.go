package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ckfs-dev/ckfs/internal/proc"
	"golang.org/x/sys/unix"
)

func OpenRoot(root string) (int, error) {
	return unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
}

// BusyProcesses lists the processes whose working directory, root or open
// files are under mnt, on the mount there, read from /proc without a
// request to the mount.
func BusyProcesses(mnt string) []string {
	ents, _ := os.ReadDir("/proc")
	self := os.Getpid()
	mntID := topMountID(mnt)
	var out []string
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		dir := filepath.Join("/proc", e.Name())
		links := []string{filepath.Join(dir, "cwd"), filepath.Join(dir, "root")}
		if fds, err := os.ReadDir(filepath.Join(dir, "fd")); err == nil {
			for _, fd := range fds {
				links = append(links, filepath.Join(dir, "fd", fd.Name()))
			}
		}
		for _, l := range links {
			t, err := os.Readlink(l)
			if err == nil && Within(t, mnt) && onMount(l, mntID) {
				comm, _ := os.ReadFile(filepath.Join(dir, "comm"))
				out = append(out, fmt.Sprintf("pid %d (%s) uses %s", pid, strings.TrimSpace(string(comm)), t))
				break
			}
		}
	}
	return out
}

// topMountID is the id of the mount on top at mnt (the first field of
// /proc/self/mountinfo), or 0 if none is known.
func topMountID(mnt string) uint64 {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return 0
	}
	var id uint64
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 4 && unescapeMount(f[4]) == mnt {
			id, _ = strconv.ParseUint(f[0], 10, 64) // a later line is mounted over an earlier one
		}
	}
	return id
}

// onMount reports whether the file a /proc link names lies on the mount
// with id mntID, not merely at a path under it: a mount in place serves
// the directory it covers, and a descriptor opened beneath it (the
// supervisor's, or one taken before the mount) has the same path but
// holds nothing of the mount. It asks without a request to the file
// system (AT_STATX_DONT_SYNC); where it cannot tell, the path decides.
func onMount(link string, mntID uint64) bool {
	if mntID == 0 {
		return true
	}
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, link, unix.AT_STATX_DONT_SYNC, unix.STATX_MNT_ID, &st); err != nil || st.Mask&unix.STATX_MNT_ID == 0 {
		return true
	}
	return st.Mnt_id == mntID
}

// MountedAt reports whether a FUSE file system of ckfs is mounted at mnt.
func MountedAt(mnt string) bool {
	for _, m := range Mounts() {
		if m.point == mnt {
			return true
		}
	}
	return false
}

// MountEntry is a ckfs mount in /proc/self/mountinfo: its mountpoint and
// the store its daemon named as the mount's source ("" for a daemon that
// did not).
type MountEntry struct{ point, store string }

func Mounts() []MountEntry {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var out []MountEntry
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		for i, x := range f {
			if x != "-" || i+2 >= len(f) || len(f) < 10 || !strings.HasPrefix(f[i+1], "fuse") {
				continue
			}
			src := unescapeMount(f[i+2])
			if store, ok := strings.CutPrefix(src, SourcePrefix); ok || src == "ckfs" {
				out = append(out, MountEntry{point: unescapeMount(f[4]), store: store})
			}
		}
	}
	return out
}

// SourcePrefix starts the mount source a daemon gives its mount: the
// store follows.
const SourcePrefix = "ckfs:"

// ServingStore returns the store named by the ckfs mount nearest at or
// above path: the daemon's own record of which store serves it.
func ServingStore(path string) (string, bool) {
	best := MountEntry{}
	for _, m := range Mounts() {
		if m.store != "" && Within(path, m.point) && len(m.point) > len(best.point) {
			best = m
		}
	}
	return best.store, best.store != ""
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space, ...).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Detach unmounts lazily: the mount disappears now, and is released when
// its last user lets go.
func Detach(mnt string) error { return unix.Unmount(mnt, unix.MNT_DETACH) }

// ProcessAlive reports whether pid runs (a zombie, killed but not yet
// reaped, does not).
func ProcessAlive(pid int) bool {
	return pid > 0 && unix.Kill(pid, 0) == nil && !proc.Exited(pid)
}

// AdoptOrphans makes this process the reaper of the daemons its children
// start (a daemon is orphaned when ckfs mount returns), so that they are
// reaped here and never linger as zombies.
func AdoptOrphans() { unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }

// ReapChildren collects every child that has exited.
func ReapChildren() {
	for {
		var ws unix.WaitStatus
		if pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil); pid <= 0 || err != nil {
			return
		}
	}
}
