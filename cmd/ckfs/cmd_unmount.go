package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"
)

func newUnmountCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "unmount REPO|MOUNTPOINT",
		Aliases: []string{"umount"},
		Short:   "Unmount a workspace and stop its daemon",
		Long: `Unmount the workspace cleanly: the daemon records the last post-images,
unmounts and exits. If the mount is busy the command says which processes
keep it busy. If the daemon died, it cleans up the dead mount.`,
		Example: `  ckfs unmount .`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := filepath.Abs(args[0])
			if err != nil {
				return err
			}
			store, meta, err := findStore(cmd, dir)
			if err != nil {
				return err
			}
			// Our own working directory may be inside the mount.
			os.Chdir("/")
			return runUnmount(store, meta.Root, cmd.OutOrStdout())
		},
	}
}

func runUnmount(store, root string, out interface{ Write([]byte) (int, error) }) error {
	st, err := workspace.ReadDaemonState(store)
	if err != nil {
		if workspace.MountedAt(root) {
			return cleanDeadMount(store, root, out)
		}
		return withCode(ExitNotMounted, "%s is not mounted", root)
	}
	if !workspace.ProcessAlive(st.PID) {
		return cleanDeadMount(store, st.Mountpoint, out)
	}
	if _, err := workspace.Call(store, workspace.Request{Op: "unmount"}); err != nil {
		if inside(parentCwd(), st.Mountpoint) {
			return fmt.Errorf("%w\nthe shell you ran ckfs unmount from (pid %d) is itself inside %s: cd out of it first (cd /), then run ckfs unmount %s again", err, os.Getppid(), st.Mountpoint, st.Mountpoint)
		}
		return err
	}
	// Wait for the daemon to exit so the caller can rely on it being gone
	// (it records the last post-images and syncs the store first).
	for i := 0; i < 4800 && workspace.ProcessAlive(st.PID); i++ {
		time.Sleep(25 * time.Millisecond)
	}
	if workspace.ProcessAlive(st.PID) {
		return fmt.Errorf("daemon pid %d did not exit after unmounting %s; see %s", st.PID, st.Mountpoint, filepath.Join(store, "daemon.log"))
	}
	fmt.Fprintf(out, "unmounted %s\n", st.Mountpoint)
	return nil
}

// cleanDeadMount removes a mount whose daemon is gone ("transport endpoint
// is not connected") and the daemon's leftover state.
func cleanDeadMount(store, mnt string, out interface{ Write([]byte) (int, error) }) error {
	if mnt == "/" {
		// Detaching "/" would take the machine's root file system with it.
		return withCode(ExitRefused, "refusing to unmount /: a ckfs mount over / can only go with a reboot (or the end of its mount namespace); ckfs mount no longer mounts /")
	}
	if workspace.MountedAt(mnt) {
		if err := unix.Unmount(mnt, 0); err != nil {
			if err := workspace.Detach(mnt); err != nil {
				return fmt.Errorf("unmount dead mount %s: %v; try: fusermount3 -uz %s", mnt, err, mnt)
			}
		}
	}
	os.Remove(filepath.Join(store, "daemon.json"))
	os.Remove(workspace.SocketPath(store))
	fmt.Fprintf(out, "cleaned up %s (its daemon was not running)\n", mnt)
	return nil
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
