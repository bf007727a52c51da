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
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := storeFlag(cmd)
			if err != nil {
				return err
			}
			return runFlush(cmd.Context(), store)
		},
	}
}

// runFlush asks the daemon of the workspace here (or of store) to record
// the post-images of files still being written.
func runFlush(ctx context.Context, store string) error {
	store, _, err := workspace.Find(store, ".")
	if err != nil {
		return err
	}
	_, err = workspace.Call(store, workspace.Request{Op: "flush"})
	return err
}
