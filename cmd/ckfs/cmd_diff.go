package main

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/ui"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/fatih/color"
	"github.com/spf13/cobra"
)

// diffOptions are ckfs diff's: the checkpoints and the flags.
type diffOptions struct {
	Store string   // --store, or "" to find it from the current directory
	A, B  string   // A is "" for the last window that wrote; B is "" for the files on disk now (or, when A is a window, its end)
	Paths []string // only these paths (after --)
	JSON  bool
	Stat  bool
	// NoDisk: the workspace is a remote's, with no files on this disk
	// ("now" is its last checkpoint).
	NoDisk bool
}

func newDiffCmd() *cobra.Command {
	var o diffOptions
	var rr remoteRead
	cmd := &cobra.Command{
		Use:   "diff [A [B]] [-- PATH...]",
		Short: "Show what a window changed, or what changed between two checkpoints or since one",
		Long: `Print, in git's form (git apply takes it), the change of every recorded file
that differs between checkpoint A and checkpoint B. A window id alone is
that window's own change (from just before it to its end); a seq alone is
checkpoint A against the files on disk now. A checkpoint is a seq from
ckfs log, a window id (just before that window) or "now". With no
checkpoint, it is the change of the last tool call that wrote something
(the newest window ckfs log lists).

--stat prints a line a file with its added and removed lines instead;
paths after -- narrow it to those paths (globs as in path.Match, against
each path and its parent directories, and their base names for a pattern
without a slash). Coloured on a terminal; NO_COLOR
turns colour off.`,
		Example: "  ckfs diff                        # what the last tool call changed\n  ckfs diff toolu_01ABC            # what that call changed\n  ckfs diff toolu_01ABC --stat\n  ckfs diff 14                     # checkpoint 14 against the disk now\n  ckfs diff 14 31 -- src/api\n  ckfs diff run-1575b31f | git apply -R   # take it out by hand\n  ckfs diff 14 --json | jq '.[].path'",
		RunE: func(cmd *cobra.Command, args []string) error {
			checkpoints := args
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				checkpoints, o.Paths = args[:dash], args[dash:]
			}
			if len(checkpoints) > 2 {
				return workspace.Errorf(workspace.ErrUsage, "give at most two checkpoints, then -- PATH... (ckfs diff [A [B]] [-- PATH...])")
			}
			if len(checkpoints) > 0 {
				o.A = checkpoints[0]
			}
			if len(checkpoints) == 2 {
				o.B = checkpoints[1]
			}
			o.NoDisk = rr.Remote != ""
			var err error
			if o.Store, err = rr.store(cmd); err != nil {
				return err
			}
			return runDiff(cmd.Context(), o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print a JSON list of {path, diff}")
	cmd.Flags().BoolVar(&o.Stat, "stat", false, "a line a file with its added and removed lines, and the totals")
	rr.add(cmd)
	return cmd
}

// runDiff prints what changed between two checkpoints, or between one and now.
func runDiff(ctx context.Context, o diffOptions, stdout, stderr io.Writer) error {
	v, err := openView(o.Store, ".")
	if err != nil {
		return err
	}
	keep, err := index.MatchPaths(o.Paths)
	if err != nil {
		return workspace.Errorf(workspace.ErrUsage, "%v", err)
	}
	var a, b uint64
	var toDisk bool
	if o.A == "" {
		w, err := lastWrote(v)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "the last tool call that wrote something: window %s (ckfs log lists the others; ckfs diff WINDOW shows one)\n", w.ID)
		a, b, toDisk = windowRange(w)
	} else if a, b, toDisk, err = diffRange(v, o.A, o.B); err != nil {
		return err
	}
	if toDisk && o.NoDisk {
		// A remote workspace has no files on this disk: its end instead.
		if b, err = v.Checkpoint("now"); err != nil {
			return err
		}
		toDisk = false
	}
	type pathDiff struct {
		Path string `json:"path"`
		Diff string `json:"diff"`
	}
	diffs := []pathDiff{}
	var stat []workspace.FileDiff
	color.NoColor = color.NoColor || o.JSON
	err = v.Diffs(a, b, toDisk, func(d workspace.FileDiff) error {
		switch {
		case !keep(d.Path) || (toDisk && sameOnDisk(d)):
		case o.Stat:
			stat = append(stat, d)
		case o.JSON:
			var buf bytes.Buffer
			ui.GitDiff(&buf, d)
			diffs = append(diffs, pathDiff{d.Path, buf.String()})
		default:
			ui.GitDiff(stdout, d)
		}
		return nil
	})
	switch {
	case err != nil:
		return err
	case o.Stat:
		ui.DiffStat(stdout, stat)
	case o.JSON:
		return ui.JSON(stdout, diffs)
	}
	return nil
}

// lastWrote is the newest window that wrote something.
func lastWrote(v *workspace.View) (*index.Window, error) {
	if _, w, err := v.BeforeLast(1); err == nil {
		return w, nil
	}
	return nil, workspace.Errorf(workspace.ErrUsage, "no tool call has written anything yet: name a checkpoint (ckfs diff A [B]); ckfs log lists them")
}

// diffRange resolves ckfs diff's checkpoints: A and B; a window alone, its
// own change; a seq alone, against the disk now.
func diffRange(v *workspace.View, sa, sb string) (a, b uint64, toDisk bool, err error) {
	if sb == "" {
		if w := v.Window(sa); w != nil {
			a, b, toDisk = windowRange(w)
			return a, b, toDisk, nil
		}
	}
	if a, err = v.Checkpoint(sa); err != nil {
		return 0, 0, false, err
	}
	if sb == "" {
		return a, 0, true, nil
	}
	b, err = v.Checkpoint(sb)
	return a, b, false, err
}

// windowRange is a window's own change: from just before it to its end,
// or, while it is open, to the disk now.
func windowRange(w *index.Window) (a, b uint64, toDisk bool) {
	if w.Close == nil {
		return w.Open.Seq, 0, true
	}
	return w.Open.Seq, w.Close.Seq, false
}

// sameOnDisk reports whether a path compared with the disk is unchanged
// (Diffs lists every recorded path then).
func sameOnDisk(d workspace.FileDiff) bool {
	return d.Unknown == "" && d.From.Type == d.To.Type && bytes.Equal(d.FromData, d.ToData) && (d.From.Type != index.TypeFile || d.From.Mode&0o111 == d.To.Mode&0o111)
}
