package main

import (
	"context"
	"io"

	"github.com/ckfs-dev/ckfs/gc"
	"github.com/ckfs-dev/ckfs/ui"
	"github.com/spf13/cobra"
)

// duOptions are ckfs du's.
type duOptions struct {
	workspaceArg
	JSON bool
	Top  int
}

func newDUCmd() *cobra.Command {
	var o duOptions
	cmd := &cobra.Command{
		Use:   "du [DIR]",
		Short: "Show what the store holds: size, dedup and compression, largest windows and files",
		Long: `Show the store's size on disk, its object count, how much compression and
deduplication save compared with keeping a full copy of a file at every
checkpoint, and which windows and files take the most space. ckfs gc frees
what the retention policy no longer keeps.`,
		Example: "  ckfs du\n  ckfs du --top 20\n  ckfs du --json | jq .saving_ratio",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.fill(cmd, args); err != nil {
				return err
			}
			return runDU(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	cmd.Flags().IntVar(&o.Top, "top", 10, "how many windows and files to list (0: all)")
	return cmd
}

// runDU prints what the store holds.
func runDU(ctx context.Context, o duOptions, stdout io.Writer) error {
	v, err := openView(o.Store, o.Dir)
	if err != nil {
		return err
	}
	u, err := gc.Measure(v.Store, v.CAS, v.Records, o.Top, v.WindowSessions())
	if err != nil {
		return err
	}
	if o.JSON {
		return ui.JSON(stdout, u)
	}
	ui.DU(stdout, u)
	return nil
}
