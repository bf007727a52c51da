package main

import (
	"context"

	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/spf13/cobra"
)

func newFlushCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "flush",
		Short: "Record the post-images of files still being written",
		Long: `Ask the daemon to record now the post-image of every path changed since the
last window boundary, without waiting for their handles to be released.
Commands that read the timeline while mounted do this themselves.`,
		Example: "  ckfs flush",
		Hidden:  true,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			var o flushOptions
			if o.Store, err = storeFlag(cmd); err != nil {
				return err
			}
			return runFlush(cmd.Context(), o)
		},
	}
}

// flushOptions are ckfs flush's.
type flushOptions struct {
	Store string // --store, or "" to find it from the current directory
}

// runFlush asks the daemon of the workspace to record the post-images of
// files still being written.
func runFlush(ctx context.Context, o flushOptions) error {
	ws, err := workspace.Locate(o.Store, ".")
	if err != nil {
		return err
	}
	_, err = ws.Daemon().Flush()
	return err
}
