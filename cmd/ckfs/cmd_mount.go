package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ckfs-dev/ckfs/capture"
	"github.com/ckfs-dev/ckfs/daemon"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/spf13/cobra"
)

type mountOptions struct {
	daemon.Options
	Foreground bool
}

func newMountCmd() *cobra.Command {
	var o mountOptions
	cmd := &cobra.Command{
		Use:   "mount REPO [MOUNTPOINT]",
		Short: "Mount a repository through ckfs (in place by default)",
		Long: `Mount REPO through the capturing passthrough. Without MOUNTPOINT the
repository directory itself becomes the mountpoint, so tools already working
in it keep their working directory. The command returns once the mount is
serving, with the daemon running in the background.`,
		Example: `  ckfs mount .                 # mount the current repository in place
  ckfs mount ~/src/app /mnt/app  # serve it at a separate mountpoint`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			root, err := workspace.AbsDir(args[0])
			if err != nil {
				return withCode(ExitUsage, "mount: %v", err)
			}
			if root == "/" {
				return withCode(ExitUsage, "mount: refusing to mount /: ckfs mounts one repository (cd into it and run ckfs mount .)")
			}
			o.Root, o.Mountpoint = root, root
			if len(args) == 2 {
				if o.Mountpoint, err = workspace.AbsDir(args[1]); err != nil {
					return withCode(ExitUsage, "mount: %v", err)
				}
				if o.Mountpoint == "/" {
					return withCode(ExitUsage, "mount: refusing to mount over /: choose an empty directory as the mountpoint")
				}
			}
			if o.Store, err = storeFor(cmd, root); err != nil {
				return err
			}
			cfg, _, err := loadConfig(root)
			if err != nil {
				return err
			}
			if !cfg.Capture.Enabled {
				return withCode(ExitRefused, "capture is disabled for %s (capture.enabled = false, set at %s): set it to true to mount", root, cfg.Sources["capture.enabled"])
			}
			o.Excludes = append(cfg.Capture.Exclude, o.Excludes...)
			if !cmd.Flags().Changed("max-file-size") {
				o.MaxFileSize = cfg.Capture.MaxFileSize
			}
			o.Retention = cfg.Retention
			return runMount(cmd.Context(), o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().BoolVar(&o.Foreground, "foreground", false, "serve in this process until interrupted (for debugging)")
	cmd.Flags().BoolVar(&o.AllowOther, "allow-other", false, "let other users use the mount, with the rights the files give them (the kernel checks permissions; needs user_allow_other for non-root)")
	cmd.Flags().BoolVar(&o.Debug, "debug", false, "log every FUSE request (with --foreground)")
	cmd.Flags().StringArrayVar(&o.Excludes, "exclude", nil, "glob of paths not to capture (repeatable); .git is always excluded")
	cmd.Flags().Int64Var(&o.MaxFileSize, "max-file-size", capture.DefaultMaxFileSize, "largest file, in bytes, whose content is stored (default: the configured capture.max_file_size)")
	return cmd
}

func runMount(ctx context.Context, o mountOptions, stdout, stderr io.Writer) error {
	if m, err := workspace.ReadMeta(o.Store); err == nil && m.Root != o.Root {
		return withCode(ExitRefused, "store %s serves %s, not %s: use another --store", o.Store, m.Root, o.Root)
	}
	if st, err := workspace.ReadDaemonState(o.Store); err == nil && workspace.ProcessAlive(st.PID) {
		return withCode(ExitBusy, "%s is already mounted at %s by daemon pid %d: ckfs unmount %s first", o.Root, st.Mountpoint, st.PID, st.Mountpoint)
	}
	if workspace.MountedAt(o.Mountpoint) {
		return withCode(ExitBusy, "%s has a ckfs mount whose daemon is gone: run ckfs unmount %s", o.Mountpoint, o.Mountpoint)
	}
	if o.Foreground {
		fmt.Fprintf(stderr, "serving %s at %s in the foreground (store %s); interrupt to unmount\n", o.Root, o.Mountpoint, o.Store)
		return daemon.Run(ctx, o.Options, stderr)
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	// A store this mount creates and that never served is removed when
	// the mount fails, so no later command resolves a path to it.
	_, serr := os.Stat(o.Store)
	fresh := errors.Is(serr, fs.ErrNotExist)
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	args := []string{"daemon", "--store", o.Store, "--ready-fd", "3", "--max-file-size", fmt.Sprint(o.MaxFileSize),
		"--keep", fmt.Sprint(o.Retention.Keep), "--max-age", o.Retention.MaxAge.String(), "--max-size", fmt.Sprint(o.Retention.MaxSize),
		"--auto-gc=" + fmt.Sprint(o.Retention.AutoGC)}
	if o.AllowOther {
		args = append(args, "--allow-other")
	}
	for _, e := range o.Excludes {
		args = append(args, "--exclude", e)
	}
	args = append(args, o.Root, o.Mountpoint)
	cmd := exec.Command(exe, args...)
	cmd.ExtraFiles = []*os.File{pw}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Dir = "/"
	if err := cmd.Start(); err != nil {
		pw.Close()
		pr.Close()
		return fmt.Errorf("start daemon: %w", err)
	}
	pw.Close()
	defer pr.Close()
	line, rerr := bufio.NewReader(pr).ReadString('\n')
	line = strings.TrimSpace(line)
	if line == "ok" {
		pid := cmd.Process.Pid
		cmd.Process.Release()
		fmt.Fprintf(stdout, "mounted %s at %s (daemon pid %d, store %s)\n", o.Root, o.Mountpoint, pid, o.Store)
		if o.Mountpoint == o.Root {
			fmt.Fprintf(stdout, "shells already in %s see the directory under the mount: run cd %q there\n", o.Root, o.Root)
		}
		return nil
	}
	// The daemon failed before serving: reap it, forget it, and report why.
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		<-done
	}
	logHint := fmt.Sprintf("; see %s/daemon.log", o.Store)
	if st, err := workspace.ReadDaemonState(o.Store); err == nil && st.PID == cmd.Process.Pid {
		os.Remove(filepath.Join(o.Store, "daemon.json"))
	}
	if fresh {
		os.RemoveAll(o.Store)
		logHint = ""
	}
	if msg, ok := strings.CutPrefix(line, "error: "); ok {
		code := ExitError
		if strings.Contains(msg, "already mounted") {
			code = ExitBusy
		}
		return withCode(code, "%s", explainMount(fmt.Sprintf("mount %s: %s", o.Root, msg), o.AllowOther))
	}
	return fmt.Errorf("mount %s: the daemon exited without serving (%v)%s", o.Root, rerr, logHint)
}

func joinLines(s []string) string { return strings.Join(s, "; ") }
