package main

import (
	"context"
	"fmt"
	"io"

	"github.com/ckfs-dev/ckfs/ui"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/spf13/cobra"
)

// statusOptions are ckfs status's.
type statusOptions struct {
	workspaceArg
	JSON bool
}

func newStatusCmd() *cobra.Command {
	var o statusOptions
	cmd := &cobra.Command{
		Use:     "status [DIR]",
		Short:   "Show whether the workspace is mounted, its open windows and its store",
		Example: "  ckfs status\n  ckfs status --json ~/src/app",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.fill(cmd, args); err != nil {
				return err
			}
			return runStatus(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	return cmd
}

// runStatus prints whether the workspace is mounted, its windows and its store.
func runStatus(ctx context.Context, o statusOptions, stdout io.Writer) error {
	ws, err := workspace.Locate(o.Store, o.Dir)
	if err != nil {
		return err
	}
	r := ws.Status()
	if dir, hidden := ws.HiddenCwd(); hidden && r.State == "mounted" && r.Hint == "" {
		r.Hint = fmt.Sprintf("this shell is in the directory under the mount (it was there before ckfs mount), and what it writes bypasses ckfs: run cd %q", dir)
	}
	if o.JSON {
		return ui.JSON(stdout, r)
	}
	ui.Status(stdout, r)
	return nil
}
