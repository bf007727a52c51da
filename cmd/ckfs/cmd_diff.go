package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"

	"github.com/ckfs-dev/ckfs/index"
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

func (v *workspaceView) diffCheckpoints(out func(path string) io.Writer, a, b uint64, la, lb string) error {
	sa, sb := index.StateAt(v.Records, a), index.StateAt(v.Records, b)
	for _, p := range sortedStateKeys(sa) {
		ea, eb := sa[p], sb[p]
		if ea.SameContent(eb.State) {
			continue
		}
		if ea.Unknown || eb.Unknown {
			fmt.Fprintf(out(p), "%s: content not stored (%s%s)\n", index.Display(p), ea.Reason, eb.Reason)
			continue
		}
		from, err := v.Content(ea.State)
		if err != nil {
			return err
		}
		to, err := v.Content(eb.State)
		if err != nil {
			return err
		}
		v.printPathDiff(out(p), p, la, lb, ea.State, eb.State, from, to)
	}
	return nil
}

func (v *workspaceView) diffToDisk(out func(path string) io.Writer, a uint64, la string) error {
	sa := index.StateAt(v.Records, a)
	for _, p := range sortedStateKeys(sa) {
		ea := sa[p]
		now, typ, err := v.DiskContent(p)
		if err != nil {
			return err
		}
		if ea.Unknown {
			fmt.Fprintf(out(p), "%s: content at %s not stored (%s)\n", index.Display(p), la, ea.Reason)
			continue
		}
		then, err := v.Content(ea.State)
		if err != nil {
			return err
		}
		nowState := index.State{Type: typ, Mode: ea.Mode}
		v.printPathDiff(out(p), p, la, "now", ea.State, nowState, then, now)
	}
	return nil
}

func (v *workspaceView) printPathDiff(out io.Writer, p, la, lb string, sa, sb index.State, from, to []byte) {
	switch {
	case sa.Type != sb.Type && (sa.Type == index.TypeDir || sb.Type == index.TypeDir || sa.Type == index.TypeAbsent || sb.Type == index.TypeAbsent) && (sa.Type == index.TypeDir || sb.Type == index.TypeDir):
		fmt.Fprintf(out, "%s: %s at %s, %s at %s\n", index.Display(p), sa.Type, la, sb.Type, lb)
		return
	case sa.Type != sb.Type && sa.Type != index.TypeAbsent && sb.Type != index.TypeAbsent:
		fmt.Fprintf(out, "%s: %s at %s, %s at %s\n", index.Display(p), sa.Type, la, sb.Type, lb)
	}
	fmt.Fprint(out, colorDiff(unifiedDiff(index.Display(p), la, lb, from, to)))
}

func sortedStateKeys(m map[string]index.Entry) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// runDiff prints what changed between two checkpoints, or between one and now.
func runDiff(ctx context.Context, o diffOptions, stdout io.Writer) error {
	v, err := openView(func() (string, *workspace.Meta, error) { return workspace.Find(o.Store, ".") })
	if err != nil {
		return err
	}
	a, err := v.Checkpoint(o.A)
	if err != nil {
		return err
	}
	type pathDiff struct {
		Path string `json:"path"`
		Diff string `json:"diff"`
	}
	var diffs []*pathDiff
	bufs := map[string]*bytes.Buffer{}
	out := func(string) io.Writer { return stdout }
	if o.JSON {
		color.NoColor = true
		out = func(p string) io.Writer {
			if bufs[p] == nil {
				bufs[p] = &bytes.Buffer{}
				diffs = append(diffs, &pathDiff{Path: p})
			}
			return bufs[p]
		}
	}
	if o.B == "" {
		err = v.diffToDisk(out, a, o.A)
	} else {
		b, berr := v.Checkpoint(o.B)
		if berr != nil {
			return berr
		}
		err = v.diffCheckpoints(out, a, b, o.A, o.B)
	}
	if err != nil || !o.JSON {
		return err
	}
	for _, d := range diffs {
		d.Diff = bufs[d.Path].String()
	}
	if diffs == nil {
		diffs = []*pathDiff{}
	}
	return printJSON(stdout, diffs)
}
