package doctor

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// DevFuse opens /dev/fuse as the mount will and, when it cannot, says
// why and gives the one fix that can work on this machine (from the
// device's owner, group and mode, and the user's groups).
func DevFuse() (status, detail, fix string) {
	fd, err := unix.Open("/dev/fuse", unix.O_RDWR|unix.O_CLOEXEC, 0)
	switch {
	case err == nil:
		unix.Close(fd)
		return "ok", "present, readable and writable", ""
	case err == unix.ENOENT:
		return "fail", "missing: the kernel's FUSE module is not loaded, or this container has no access to it",
			"modprobe fuse (as root); in a container, run it with --device /dev/fuse --cap-add SYS_ADMIN"
	}
	var st unix.Stat_t
	if serr := unix.Stat("/dev/fuse", &st); serr != nil {
		return "fail", fmt.Sprintf("cannot be opened: %v", err), "run ckfs as root"
	}
	perm := os.FileMode(st.Mode & 0o777)
	group := strconv.Itoa(int(st.Gid))
	if g, gerr := user.LookupGroupId(group); gerr == nil {
		group = g.Name
	}
	owner := strconv.Itoa(int(st.Uid))
	if u, uerr := user.LookupId(owner); uerr == nil {
		owner = u.Username
	}
	detail = fmt.Sprintf("cannot be opened: %v (it is c%s %s:%s)", err, perm.String()[1:], owner, group)
	gids, _ := os.Getgroups()
	inGroup := slices.Contains(gids, int(st.Gid)) || os.Getegid() == int(st.Gid)
	switch {
	case err == unix.EPERM || perm&0o006 == 0o006 || (inGroup && perm&0o060 == 0o060):
		// The mode allows it: a container's device rules refuse it.
		return "fail", detail + "; the mode allows it, so the container or a security policy refuses it",
			"run the container with --device /dev/fuse (and --cap-add SYS_ADMIN to mount as root)"
	case perm&0o060 == 0o060 && !inGroup:
		return "fail", detail, fmt.Sprintf("add yourself to group %s (sudo usermod -aG %s $USER), then log in again; or run ckfs as root", group, group)
	default:
		return "fail", detail + ": only " + owner + " can open it here",
			"run ckfs as root (sudo ckfs mount ...); or, as an administrator, let users open it: chmod 0666 /dev/fuse (the usual mode; a udev rule KERNEL==\"fuse\", MODE=\"0666\" keeps it)"
	}
}

// ExplainMount adds to a failed mount's message what doctor would say
// about the permission to mount, when that is where it failed: fusermount
// reports only its exit code.
func ExplainMount(msg string, allowOther bool) string {
	if os.Geteuid() == 0 || !strings.Contains(msg, "fusermount") {
		return msg
	}
	var why []string
	if status, detail, fix := DevFuse(); status != "ok" {
		why = append(why, fmt.Sprintf("/dev/fuse %s\n  fix: %s", detail, fix))
	}
	if _, err := exec.LookPath("fusermount3"); err != nil {
		if _, err2 := exec.LookPath("fusermount"); err2 != nil {
			why = append(why, "no fusermount3 (it mounts for users who are not root)\n  fix: apt-get install fuse3 (or your distribution's fuse3 package)")
		}
	}
	if allowOther {
		if b, err := os.ReadFile("/etc/fuse.conf"); err != nil || !strings.Contains(uncomment(string(b)), "user_allow_other") {
			why = append(why, "--allow-other needs user_allow_other in /etc/fuse.conf\n  fix: add the line user_allow_other to /etc/fuse.conf (as root), or mount without --allow-other")
		}
	}
	if len(why) == 0 {
		return msg + "\n  ckfs doctor checks everything a mount needs"
	}
	return msg + "\nwhy: " + strings.Join(why, "\nwhy: ")
}
