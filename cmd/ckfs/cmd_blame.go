package main

import (
	"io"
	"strconv"
	"strings"

	"github.com/ckfs-dev/ckfs/ui"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/fatih/color"
	"github.com/spf13/cobra"
)

// blameOptions are ckfs blame's.
type blameOptions struct {
	Store string
	Path  string // as given: relative to the current directory
	At    string // a checkpoint, or "" for the file on disk now
	Lines string // -L FROM,TO
	JSON  bool
}

func newBlameCmd() *cobra.Command {
	var o blameOptions
	cmd := &cobra.Command{
		Use:   "blame PATH",
		Short: "Show which tool call, turn or edit of yours wrote each line of a file",
		Long: `For each line of PATH, as it is on disk now or as it was at a checkpoint
(--at: a seq from ckfs log, or a window id meaning just before that window),
print the change that last wrote it: the tool-call window (its id, tool,
turn and time, and below, its command and the turn's prompt), "you" for an
edit made outside any window ("you (unrecorded)": on disk now and not in
the timeline yet), or "before ckfs" for a line older than ckfs's first
record of the file. A line a rewind or revert brought back keeps the window
that first wrote it, marked "*". A file a window renamed (both names
recorded) keeps the history of its old name.

Lines are tracked across versions by a line diff; a block the diff shows
moved keeps its origin. Binary files are refused.`,
		Example: "  ckfs blame main.go\n  ckfs blame -L 10,40 internal/api/handler.go\n  ckfs blame --at toolu_01ABC main.go\n  ckfs blame --json main.go | jq '.[] | select(.origin.by == \"window\")'",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Path = args[0]
			var err error
			if o.Store, err = storeFlag(cmd); err != nil {
				return err
			}
			return runBlame(o, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&o.At, "at", "", "the file as it was at this checkpoint (a seq or a window id) instead of on disk now")
	cmd.Flags().StringVarP(&o.Lines, "lines", "L", "", "only lines FROM,TO (1-based, inclusive)")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print a JSON list of lines with their origins")
	return cmd
}

// runBlame prints the origin of each line of a file.
func runBlame(o blameOptions, stdout io.Writer) error {
	from, to, err := lineRange(o.Lines)
	if err != nil {
		return err
	}
	ws, err := workspace.Locate(o.Store, ".")
	if err != nil {
		return err
	}
	rel, err := ws.RelPath(o.Path)
	if err != nil {
		return err
	}
	v, err := ws.View()
	if err != nil {
		return err
	}
	lines, err := v.Blame(rel, o.At)
	if err != nil {
		return err
	}
	if from > len(lines) {
		return workspace.Errorf(workspace.ErrUsage, "-L %s: %s has %d lines", o.Lines, rel, len(lines))
	}
	lines = lines[from-1 : min(to, len(lines))]
	if o.JSON {
		return ui.JSON(stdout, lines)
	}
	color.NoColor = color.NoColor || o.JSON
	ui.Blame(stdout, rel, lines)
	return nil
}

// lineRange parses -L FROM,TO (either may be left out: "10," or ",40");
// "" is every line.
func lineRange(s string) (from, to int, err error) {
	from, to = 1, int(^uint(0)>>1)
	if s == "" {
		return from, to, nil
	}
	a, b, ok := strings.Cut(s, ",")
	bad := workspace.Errorf(workspace.ErrUsage, "-L %q: give FROM,TO, line numbers from 1 (ckfs blame -L 10,40 FILE)", s)
	if !ok {
		b = a
	}
	if a != "" {
		if from, err = strconv.Atoi(a); err != nil || from < 1 {
			return 0, 0, bad
		}
	}
	if b != "" {
		if to, err = strconv.Atoi(b); err != nil || to < from {
			return 0, 0, bad
		}
	}
	return from, to, nil
}
