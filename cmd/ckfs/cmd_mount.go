package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/ckfs-dev/ckfs/capture"
	"github.com/ckfs-dev/ckfs/config"
	"github.com/ckfs-dev/ckfs/daemon"
	"github.com/ckfs-dev/ckfs/doctor"
	"github.com/ckfs-dev/ckfs/remote"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/spf13/cobra"
)

type mountOptions struct {
	daemon.Options
	Foreground bool
	// Remote is the configured remote a new workspace gets, with where
	// its URL was set.
	Remote       config.Remote
	RemoteSource string
	// ForAgent: the mount ends with the agent ckfs agent starts in it,
	// so shells outside need no hint to re-enter it.
	ForAgent bool
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
				return workspace.Errorf(workspace.ErrUsage, "mount: %v", err)
			}
			if root == "/" {
				return workspace.Errorf(workspace.ErrUsage, "mount: refusing to mount /: ckfs mounts one repository (cd into it and run ckfs mount .)")
			}
			o.Root, o.Mountpoint = root, root
			if len(args) == 2 {
				if o.Mountpoint, err = workspace.AbsDir(args[1]); err != nil {
					return workspace.Errorf(workspace.ErrUsage, "mount: %v", err)
				}
				if o.Mountpoint == "/" {
					return workspace.Errorf(workspace.ErrUsage, "mount: refusing to mount over /: choose an empty directory as the mountpoint")
				}
			}
			if o.Store, err = storeFor(cmd, root); err != nil {
				return err
			}
			if err := o.configure(cmd.Flags().Changed); err != nil {
				return err
			}
			return runMount(cmd.Context(), o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().BoolVar(&o.Foreground, "foreground", false, "serve in this process until interrupted (for debugging)")
	cmd.Flags().BoolVar(&o.AllowOther, "allow-other", false, "let other users use the mount, with the rights the files give them (the kernel checks permissions; needs user_allow_other for non-root)")
	cmd.Flags().BoolVar(&o.Debug, "debug", false, "log every FUSE request (with --foreground)")
	cmd.Flags().StringArrayVar(&o.Excludes, "exclude", nil, "glob of paths not to capture (repeatable); .git is always excluded")
	cmd.Flags().Int64Var(&o.MaxFileSize, "max-file-size", capture.DefaultMaxFileSize, "largest file, in bytes, whose content is stored (default: the configured capture.max_file_size)")
	cmd.Flags().StringVar(&o.IO, "io", config.IOCached, "how a mount in place serves files: cached (the kernel opens files and keeps their pages without asking the daemon) or passthrough (every open asks the daemon, with kernel passthrough); default: the configured capture.io")
	return cmd
}

// configure completes the options of a mount of o.Root from the
// configuration that applies there; set(flag) says whether a flag was given
// on the command line, which then wins.
func (o *mountOptions) configure(set func(flag string) bool) error {
	cfg, _, err := config.For(o.Root)
	if err != nil {
		return err
	}
	if !cfg.Capture.Enabled {
		return workspace.Errorf(workspace.ErrRefused, "capture is disabled for %s (capture.enabled = false, set at %s): set it to true to mount", o.Root, cfg.Sources["capture.enabled"])
	}
	o.Excludes = append(cfg.Capture.Exclude, o.Excludes...)
	if !set("max-file-size") {
		o.MaxFileSize = cfg.Capture.MaxFileSize
	}
	o.Retention = cfg.Retention
	o.Remote, o.RemoteSource = cfg.Remote, cfg.Sources["remote.url"]
	if !set("io") {
		o.IO = cfg.Capture.IO
	}
	if o.IO != config.IOCached && o.IO != config.IOPassthrough {
		return workspace.Errorf(workspace.ErrUsage, "mount: --io %q: want %s or %s", o.IO, config.IOCached, config.IOPassthrough)
	}
	return nil
}

func runMount(ctx context.Context, o mountOptions, stdout, stderr io.Writer) error {
	err := workspace.CheckMountable(o.Store, o.Root, o.Mountpoint)
	if dead := (*workspace.DeadMountError)(nil); errors.As(err, &dead) {
		// A daemon that died (killed, crashed, out of memory) left its
		// mount: it serves nothing, so it is detached and mounted again;
		// what the dead daemon was writing is reconciled by the new one.
		if _, err := workspace.CleanDeadMount(o.Store, dead.Mountpoint); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "the daemon of the mount at %s was gone: detached that mount, mounting again (a shell or process still inside the old mount must cd %q again)\n", dead.Mountpoint, dead.Mountpoint)
		err = workspace.CheckMountable(o.Store, o.Root, o.Mountpoint)
	}
	if err != nil {
		return err
	}
	if o.Foreground {
		fmt.Fprintf(stderr, "serving %s at %s in the foreground (store %s); interrupt to unmount\n", o.Root, o.Mountpoint, o.Store)
		// Never hold a reference into the mounted view.
		if err := os.Chdir("/"); err != nil {
			return err
		}
		o.OwnProcess = true
		return daemon.Run(ctx, o.Options, stderr)
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	_, err = workspace.ReadMeta(o.Store)
	isNew := errors.Is(err, fs.ErrNotExist)
	pid, err := daemon.Spawn(exe, o.Options)
	var de *daemon.ReportedError
	if errors.As(err, &de) {
		msg := doctor.ExplainMount(fmt.Sprintf("mount %s: %s", o.Root, de.Msg), o.AllowOther)
		if de.Busy {
			return workspace.Errorf(workspace.ErrBusy, "%s", msg)
		}
		return errors.New(msg)
	}
	if err != nil {
		return err
	}
	who := fmt.Sprintf("daemon pid %d", pid)
	if st, err := workspace.ReadDaemonState(o.Store); err == nil && st.PID != pid && st.PID > 0 {
		// The process started is the supervisor; the daemon is its worker.
		who = fmt.Sprintf("daemon pid %d, supervisor pid %d", st.PID, pid)
	}
	fmt.Fprintf(stdout, "mounted %s at %s (%s, store %s)\n", o.Root, o.Mountpoint, who, o.Store)
	if isNew && o.Remote.URL != "" {
		addConfiguredRemote(ctx, o, stdout, stderr)
	}
	if o.Mountpoint == o.Root && !o.ForAgent {
		fmt.Fprintf(stdout, "shells already in %s see the directory under the mount: run cd %q there\n", o.Root, o.Root)
	}
	return nil
}

// addConfiguredRemote gives a workspace mounted for the first time the
// remote the configuration names ([remote] url). A bucket that does not
// answer is added all the same, with a warning: the daemon pushes once
// it does.
func addConfiguredRemote(ctx context.Context, o mountOptions, stdout, stderr io.Writer) {
	r := o.Remote
	c, err := workspace.UpdateRemotes(o.Store, func(c *workspace.Remotes) error {
		if _, ok := c.Remotes[r.Name]; !ok {
			c.Remotes[r.Name] = workspace.RemoteConfig{URL: r.URL, Endpoint: r.Endpoint}
		}
		return nil
	})
	if err != nil {
		fmt.Fprintf(stderr, "warning: the configured remote %s (%s) was not added: %v; ckfs remote add %s %s adds it\n", r.Name, r.URL, err, r.Name, r.URL)
		return
	}
	fmt.Fprintf(stdout, "remote %s: %s (set at %s); this workspace is %s there, and the daemon pushes to it\n", r.Name, r.URL, o.RemoteSource, c.Workspace)
	b, err := remote.Open(remote.Remote{URL: r.URL, Endpoint: r.Endpoint})
	if err == nil {
		err = remote.Check(ctx, b, remoteCheckTimeout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "warning: %v\n(the daemon pushes once the bucket answers; ckfs status says how far it got)\n", err)
	}
}
