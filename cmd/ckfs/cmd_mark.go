package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/ckfs-dev/ckfs/ui"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/spf13/cobra"
)

// markOptions are ckfs mark's.
type markOptions struct {
	Store string // --store, or "" to find it from the current directory
	Label string
	JSON  bool
}

func newMarkCmd() *cobra.Command {
	var o markOptions
	cmd := &cobra.Command{
		Use:   "mark",
		Short: "Bookmark this moment on both timelines (agent hooks do it at every prompt)",
		Long: `Write a mark: the file timeline's checkpoint now and, if an agent session
is registered (by its hooks), where its conversation stands, paired. ckfs
rewind --mark N uses each side on its own: --files restores the files,
--conversation forks the conversation, both do both, neither previews.`,
		Example: `  ckfs mark --label "before the refactor"
  ckfs rewind --mark 3 --files --conversation`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if o.Store, err = storeFlag(cmd); err != nil {
				return err
			}
			return runMark(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&o.Label, "label", "", "what the mark is for")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the mark as JSON")
	return cmd
}

// runMark writes a mark by hand and prints it.
func runMark(ctx context.Context, o markOptions, stdout io.Writer) error {
	ws, err := workspace.Locate(o.Store, ".")
	if err != nil {
		return err
	}
	m, err := ws.Mark(o.Label, time.Now())
	if err != nil {
		return err
	}
	if o.JSON {
		return ui.JSON(stdout, m)
	}
	fmt.Fprintf(stdout, "mark %d: files at checkpoint %d", m.Mark, m.Files)
	if c := m.Conversation; c != nil {
		fmt.Fprintf(stdout, ", conversation %s at event %d", c.Session, c.Seq)
	}
	fmt.Fprintln(stdout)
	return nil
}
