package main

import (
	"context"
	"io"
	"slices"

	"github.com/ckfs-dev/ckfs/ui"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/spf13/cobra"
)

// logOptions are ckfs log's.
type logOptions struct {
	Store string // --store, or "" to find it from the directory
	JSON  bool
	All   bool // also windows in which nothing was written
}

func newLogCmd() *cobra.Command {
	var o logOptions
	var rr remoteRead
	cmd := &cobra.Command{
		Use:   "log",
		Short: "List checkpoints, newest first, with the files each window changed",
		Long: `List the timeline newest first: every tool window with its checkpoints, tool,
label and time, and the files it changed with added and removed lines;
changes made outside any window (your own edits) and rewinds are listed as
such. Windows are grouped under the turns that marks delimit (the agent
hooks write a mark at every prompt). Rewind with ckfs rewind --to
CHECKPOINT (a seq shown here), --to ID (just before that window) or
--mark M (both timelines). Windows in which nothing was written (an
agent's Read, Grep or Glob calls) are left out unless --all.`,
		Example: "  ckfs log\n  ckfs log --json | jq '.[0]'",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if o.Store, err = rr.store(cmd); err != nil {
				return err
			}
			return runLog(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&o.All, "all", false, "also list windows in which nothing was written")
	rr.add(cmd)
	return cmd
}

// runLog lists the timeline, newest first.
func runLog(ctx context.Context, o logOptions, stdout io.Writer) error {
	v, err := openView(o.Store, ".")
	if err != nil {
		return err
	}
	entries := v.LogEntries()
	if !o.All {
		entries = slices.DeleteFunc(entries, func(e workspace.LogEntry) bool { return e.Kind == "window" && !e.Wrote })
	}
	if o.JSON {
		return ui.JSON(stdout, entries)
	}
	ui.Log(stdout, entries, v.Records)
	return nil
}
