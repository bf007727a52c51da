package main

import (
	"io"
	"os"

	"github.com/ckfs-dev/ckfs/capture"
	"github.com/ckfs-dev/ckfs/daemon"
	"github.com/spf13/cobra"
)

func newDaemonCmd() *cobra.Command {
	var o daemon.Options
	var readyFd int
	cmd := &cobra.Command{
		Use:    "daemon ROOT MOUNTPOINT",
		Short:  "Serve a mount (started by ckfs mount)",
		Hidden: true,
		Args:   cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Root, o.Mountpoint = args[0], args[1]
			o.Store, _ = cmd.Flags().GetString("store")
			var ready io.Writer = io.Discard
			if readyFd > 0 {
				f := os.NewFile(uintptr(readyFd), "ready")
				defer f.Close()
				ready = f
			}
			// Never hold a reference into the mounted view.
			if err := os.Chdir("/"); err != nil {
				return err
			}
			return daemon.Run(cmd.Context(), o, ready)
		},
	}
	cmd.Flags().IntVar(&readyFd, "ready-fd", 0, "file descriptor to report readiness on")
	cmd.Flags().BoolVar(&o.AllowOther, "allow-other", false, "let other users see the mount")
	cmd.Flags().BoolVar(&o.Debug, "debug", false, "log every FUSE request")
	cmd.Flags().StringArrayVar(&o.Excludes, "exclude", nil, "glob of paths not to capture")
	cmd.Flags().Int64Var(&o.MaxFileSize, "max-file-size", capture.DefaultMaxFileSize, "largest file whose content is stored")
	cmd.Flags().IntVar(&o.Retention.Keep, "keep", 100, "retention: checkpoints kept restorable")
	cmd.Flags().DurationVar(&o.Retention.MaxAge, "max-age", 0, "retention: maximum checkpoint age (0: none)")
	cmd.Flags().Int64Var(&o.Retention.MaxSize, "max-size", 0, "retention: maximum store size in bytes (0: none)")
	cmd.Flags().BoolVar(&o.Retention.AutoGC, "auto-gc", false, "collect after unmount and when the store passes max-size")
	return cmd
}
