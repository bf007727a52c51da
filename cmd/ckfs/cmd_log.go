package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/ckfs-dev/ckfs/ui"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/spf13/cobra"
)

// logOptions are ckfs log's.
type logOptions struct {
	Store string // --store, or "" to find it from the directory
	JSON  bool
	workspace.LogFilter
	ui.LogStyle
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
agent's Read, Grep or Glob calls) are left out unless --all.

-n N lists the N newest entries; -- PATH... only the entries that changed
those paths (globs as in path.Match, against each path and its parent
directories, and their base names for a pattern without a slash), each
with only those files; --oneline one line an entry; --stat each entry's
files as git log --stat shows them.
An entry lists at most --files files (20 by default) and says how many
more there are.`,
		Example: "  ckfs log\n  ckfs log -n 5 --oneline\n  ckfs log --stat -n 3\n  ckfs log -- src/api '*.md'\n  ckfs log --json | jq '.[0]'",
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 0 && len(args) > 0 {
				return workspace.Errorf(workspace.ErrUsage, "unexpected argument %q: paths go after -- (ckfs log -- PATH...)", args[0])
			}
			o.Paths = args
			var err error
			if o.Store, err = rr.store(cmd); err != nil {
				return err
			}
			return runLog(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&o.All, "all", false, "also list windows in which nothing was written")
	cmd.Flags().IntVarP(&o.Max, "max-count", "n", 0, "list at most N entries, newest first (0: all)")
	cmd.Flags().BoolVar(&o.Oneline, "oneline", false, "one line an entry: its checkpoints, how many files, lines added and removed")
	cmd.Flags().BoolVar(&o.Stat, "stat", false, "each entry's files as git's --stat: a line a file with a +/- graph, then the totals")
	cmd.Flags().IntVar(&o.Files, "files", 20, "list at most N files of an entry (0: all)")
	rr.add(cmd)
	return cmd
}

// runLog lists the timeline, newest first.
func runLog(ctx context.Context, o logOptions, stdout io.Writer) error {
	v, err := openView(o.Store, ".")
	if err != nil {
		return err
	}
	entries, err := v.Log(o.LogFilter)
	if err != nil {
		return err
	}
	if o.JSON {
		return ui.JSON(stdout, entries)
	}
	if len(entries) == 0 && len(v.Records) > 0 && len(o.Paths) > 0 {
		fmt.Fprintf(stdout, "no entry of the log changed %s\n", strings.Join(o.Paths, " "))
		return nil
	}
	ui.LogStyled(stdout, entries, v.Records, o.LogStyle)
	return nil
}
