package main

import (
	"os"

	"github.com/ckfs-dev/ckfs/demo"
	"github.com/spf13/cobra"
)

func newDemoCmd() *cobra.Command {
	var keep bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Show ckfs at work on a scratch repository, end to end",
		Long: `Create a scratch repository, mount it in place, run two tool windows of real
shell edits (sed, a script that creates and deletes files), show ckfs log,
preview and perform a rewind, undo it, check every byte, then unmount and
clean up. Needs what ckfs mount needs (see ckfs doctor).`,
		Example: "  ckfs demo",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			return demo.Run(cmd.OutOrStdout(), exe, keep)
		},
	}
	cmd.Flags().BoolVar(&keep, "keep", false, "keep the scratch directory (it is unmounted either way)")
	return cmd
}
