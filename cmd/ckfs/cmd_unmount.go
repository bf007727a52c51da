package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/spf13/cobra"
)

// unmountOptions are ckfs unmount's.
type unmountOptions struct {
	Store string // --store, or "" to find it from Dir
	Dir   string // the mountpoint or workspace
}

func newUnmountCmd() *cobra.Command {
	var o unmountOptions
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
			o.Dir = args[0]
			var err error
			if o.Store, err = storeFlag(cmd); err != nil {
				return err
			}
			return runUnmount(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
}

// runUnmount stops the daemon serving a workspace (or cleans up a dead mount) and says what it did.
func runUnmount(ctx context.Context, o unmountOptions, stdout io.Writer) error {
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return err
	}
	ws, err := workspace.Locate(o.Store, dir)
	if err != nil {
		return err
	}
	// Our own working directory may be inside the mount.
	os.Chdir("/")
	msg, err := ws.Unmount()
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, msg)
	return nil
}
