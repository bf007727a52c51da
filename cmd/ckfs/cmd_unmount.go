package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/spf13/cobra"
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
			msg, err := workspace.Unmount(store, meta.Root)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), msg)
			return nil
		},
	}
}
