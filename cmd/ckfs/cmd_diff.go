package main

import (
	"fmt"
	"io"
	"sort"

	"github.com/ckfs-dev/ckfs/index"
	"github.com/spf13/cobra"
)

func newDiffCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "diff A [B]",
		Short: "Show what changed between two checkpoints, or between a checkpoint and now",
		Long: `Print unified diffs of every recorded file that differs between checkpoint A
and checkpoint B, or the files on disk now when B is omitted. A checkpoint is
a seq from ckfs log, a window id (just before that window) or "now".
Coloured on a terminal; NO_COLOR turns colour off.`,
		Example: "  ckfs diff 14\n  ckfs diff toolu_01ABC 31",
		Args:    cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, err := openView(func() (string, *storeMeta, error) { return findStore(cmd, ".") })
			if err != nil {
				return err
			}
			a, err := v.checkpoint(args[0])
			if err != nil {
				return err
			}
			if len(args) == 1 {
				return v.diffToDisk(cmd.OutOrStdout(), a, args[0])
			}
			b, err := v.checkpoint(args[1])
			if err != nil {
				return err
			}
			return v.diffCheckpoints(cmd.OutOrStdout(), a, b, args[0], args[1])
		},
	}
}

func (v *workspaceView) diffCheckpoints(out io.Writer, a, b uint64, la, lb string) error {
	sa, sb := index.StateAt(v.records, a), index.StateAt(v.records, b)
	for _, p := range sortedStateKeys(sa) {
		ea, eb := sa[p], sb[p]
		if ea.SameContent(eb.State) {
			continue
		}
		if ea.Unknown || eb.Unknown {
			fmt.Fprintf(out, "%s: content not stored (%s%s)\n", p, ea.Reason, eb.Reason)
			continue
		}
		from, err := v.content(ea.State)
		if err != nil {
			return err
		}
		to, err := v.content(eb.State)
		if err != nil {
			return err
		}
		v.printPathDiff(out, p, la, lb, ea.State, eb.State, from, to)
	}
	return nil
}

func (v *workspaceView) diffToDisk(out io.Writer, a uint64, la string) error {
	sa := index.StateAt(v.records, a)
	for _, p := range sortedStateKeys(sa) {
		ea := sa[p]
		now, typ, err := v.diskContent(p)
		if err != nil {
			return err
		}
		if ea.Unknown {
			fmt.Fprintf(out, "%s: content at %s not stored (%s)\n", p, la, ea.Reason)
			continue
		}
		then, err := v.content(ea.State)
		if err != nil {
			return err
		}
		nowState := index.State{Type: typ, Mode: ea.Mode}
		v.printPathDiff(out, p, la, "now", ea.State, nowState, then, now)
	}
	return nil
}

func (v *workspaceView) printPathDiff(out io.Writer, p, la, lb string, sa, sb index.State, from, to []byte) {
	switch {
	case sa.Type != sb.Type && (sa.Type == index.TypeDir || sb.Type == index.TypeDir || sa.Type == index.TypeAbsent || sb.Type == index.TypeAbsent) && (sa.Type == index.TypeDir || sb.Type == index.TypeDir):
		fmt.Fprintf(out, "%s: %s at %s, %s at %s\n", p, sa.Type, la, sb.Type, lb)
		return
	case sa.Type != sb.Type && sa.Type != index.TypeAbsent && sb.Type != index.TypeAbsent:
		fmt.Fprintf(out, "%s: %s at %s, %s at %s\n", p, sa.Type, la, sb.Type, lb)
	}
	fmt.Fprint(out, colorDiff(unifiedDiff(p, la, lb, from, to)))
}

func sortedStateKeys(m map[string]index.Entry) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
