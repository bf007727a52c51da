package workspace

import (
	"fmt"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Unmount closes the workspace's views, stops the daemon serving the
// workspace and waits for it to exit, or cleans up a mount whose daemon is gone. It
// returns what happened, for the user.
func (w *Workspace) Unmount() (string, error) {
	store, root := w.Store, w.Root()
	if _, err := w.CloseView(""); err != nil {
		return "", fmt.Errorf("close the workspace's views first: %w", err)
	}
	st, err := ReadDaemonState(store)
	if err != nil {
		if MountedAt(root) {
			return CleanDeadMount(store, root)
		}
		return "", Errorf(ErrNotMounted, "%s is not mounted", root)
	}
	if !ProcessAlive(st.PID) {
		return CleanDeadMount(store, st.Mountpoint)
	}
	if err := DaemonOf(store).Unmount(); err != nil {
		if inside(parentCwd(), st.Mountpoint) {
			return "", fmt.Errorf("%w\nthe shell you ran ckfs unmount from (pid %d) is itself inside %s: cd out of it first (cd /), then run ckfs unmount %s again", err, os.Getppid(), st.Mountpoint, st.Mountpoint)
		}
		return "", err
	}
	// Wait for the daemon to exit so the caller can rely on it being gone
	// (it records the last post-images and syncs the store first).
	for i := 0; i < 4800 && ProcessAlive(st.PID); i++ {
		time.Sleep(25 * time.Millisecond)
	}
	if ProcessAlive(st.PID) {
		return "", fmt.Errorf("daemon pid %d did not exit after unmounting %s; see %s", st.PID, st.Mountpoint, Layout(store).DaemonLog())
	}
	// The daemon made its last push on the way out; what is still
	// missing from a remote is said, since nothing will push it now.
	return strings.Join(append([]string{"unmounted " + st.Mountpoint}, w.UnpushedWarnings()...), "\n"), nil
}

// CleanDeadMount removes a mount whose daemon is gone ("transport endpoint
// is not connected") and the daemon's leftover state.
func CleanDeadMount(store, mnt string) (string, error) {
	if mnt == "/" {
		// Detaching "/" would take the machine's root file system with it.
		return "", Errorf(ErrRefused, "refusing to unmount /: a ckfs mount over / can only go with a reboot (or the end of its mount namespace); ckfs mount no longer mounts /")
	}
	if MountedAt(mnt) {
		if err := unix.Unmount(mnt, 0); err != nil {
			if err := Detach(mnt); err != nil {
				return "", fmt.Errorf("unmount dead mount %s: %v; try: fusermount3 -uz %s", mnt, err, mnt)
			}
		}
	}
	os.Remove(Layout(store).DaemonState())
	os.Remove(SocketPath(store))
	return fmt.Sprintf("cleaned up %s (its daemon was not running)", mnt), nil
}

// parentCwd is the working directory of the process that started ckfs
// (the user's shell), "" when it cannot be read.
func parentCwd() string {
	d, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", os.Getppid()))
	if err != nil {
		return ""
	}
	return d
}

func inside(p, dir string) bool {
	return p != "" && (p == dir || strings.HasPrefix(p, dir+"/"))
}
