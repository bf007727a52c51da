package main

import (
	"io"

	"github.com/ckfs-dev/ckfs/ui"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/spf13/cobra"
)

func newStatusCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "status [DIR]",
		Short:   "Show whether the workspace is mounted, its open windows and its store",
		Example: "  ckfs status\n  ckfs status --json ~/src/app",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			store, meta, err := findStore(cmd, dir)
			if err != nil {
				return err
			}
			return runStatus(store, meta, asJSON, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func runStatus(store string, meta *workspace.Meta, asJSON bool, out io.Writer) error {
	r := workspace.Status(store, meta)
	if asJSON {
		return ui.JSON(out, r)
	}
	ui.Status(out, r)
	return nil
}
