package main

import (
	"bytes"
	"context"
	"io"

	"github.com/ckfs-dev/ckfs/ui"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/fatih/color"
	"github.com/spf13/cobra"
)

// diffOptions are ckfs diff's: the checkpoints and the flags.
type diffOptions struct {
	Store string // --store, or "" to find it from the current directory
	A, B  string // B is "" for the files on disk now
	JSON  bool
}

func newDiffCmd() *cobra.Command {
	var o diffOptions
	var rr remoteRead
	cmd := &cobra.Command{
		Use:   "diff A [B]",
		Short: "Show what changed between two checkpoints, or between a checkpoint and now",
		Long: `Print unified diffs of every recorded file that differs between checkpoint A
and checkpoint B, or the files on disk now when B is omitted. A checkpoint is
a seq from ckfs log, a window id (just before that window) or "now".
Coloured on a terminal; NO_COLOR turns colour off.`,
		Example: "  ckfs diff 14\n  ckfs diff toolu_01ABC 31\n  ckfs diff 14 --json | jq '.[].path'",
		Args:    cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.A = args[0]
			if len(args) == 2 {
				o.B = args[1]
			}
			if rr.Remote != "" && o.B == "" {
				// A remote workspace has no files on this disk.
				o.B = "now"
			}
			var err error
			if o.Store, err = rr.store(cmd); err != nil {
				return err
			}
			return runDiff(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print a JSON list of {path, diff}")
	rr.add(cmd)
	return cmd
}

// runDiff prints what changed between two checkpoints, or between one and now.
func runDiff(ctx context.Context, o diffOptions, stdout io.Writer) error {
	v, err := openView(o.Store, ".")
	if err != nil {
		return err
	}
	a, err := v.Checkpoint(o.A)
	if err != nil {
		return err
	}
	b, lb := uint64(0), "now"
	if o.B != "" {
		if b, err = v.Checkpoint(o.B); err != nil {
			return err
		}
		lb = o.B
	}
	type pathDiff struct {
		Path string `json:"path"`
		Diff string `json:"diff"`
	}
	diffs := []pathDiff{}
	color.NoColor = color.NoColor || o.JSON
	err = v.Diffs(a, b, o.B == "", func(d workspace.FileDiff) error {
		if !o.JSON {
			ui.FileDiff(stdout, d, o.A, lb)
			return nil
		}
		var buf bytes.Buffer
		ui.FileDiff(&buf, d, o.A, lb)
		diffs = append(diffs, pathDiff{d.Path, buf.String()})
		return nil
	})
	if err != nil || !o.JSON {
		return err
	}
	return ui.JSON(stdout, diffs)
}
