package main

import (
	"context"
	"fmt"
	"io"

	"github.com/ckfs-dev/ckfs/config"
	"github.com/ckfs-dev/ckfs/gc"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/spf13/cobra"
)

// duOptions are ckfs du's.
type duOptions struct {
	Store string // --store, or "" to find it from the directory
	Dir   string // the workspace
	JSON  bool
	Top   int
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
			o.Dir = "."
			if len(args) == 1 {
				o.Dir = args[0]
			}
			var err error
			if o.Store, err = storeFlag(cmd); err != nil {
				return err
			}
			return runDU(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	cmd.Flags().IntVar(&o.Top, "top", 10, "how many windows and files to list (0: all)")
	return cmd
}

func printDU(out io.Writer, u *gc.Usage, asJSON bool) {
	if asJSON {
		printJSON(out, u)
		return
	}
	sz := config.FormatSize
	fmt.Fprintf(out, "store %s\n", u.Store)
	fmt.Fprintf(out, "  %s in %d objects (%s of content, compression %.1fx) + %s timeline (%d records)\n",
		sz(u.StoredBytes), u.Objects, sz(u.ContentBytes), u.CompressionRatio, sz(u.TimelineBytes), u.Records)
	fmt.Fprintf(out, "  a full copy at every image would take %s: dedup %.1fx, store is %.1fx smaller\n",
		sz(u.FullCopyBytes), u.DedupRatio, u.SavingRatio)
	if u.Watermark > 0 {
		fmt.Fprintf(out, "  checkpoints before %d were collected (ckfs gc)\n", u.Watermark)
	}
	if len(u.Windows) > 0 {
		fmt.Fprintln(out, "largest windows (new content they stored):")
		for _, w := range u.Windows {
			fmt.Fprintf(out, "  %10s  %4d objects  %s %s\n", sz(w.StoredBytes), w.Objects, w.ID, w.Tool)
		}
	}
	if len(u.Sessions) > 0 {
		fmt.Fprintln(out, "per agent session:")
		for _, s := range u.Sessions {
			fmt.Fprintf(out, "  %10s  %4d objects  %s\n", sz(s.StoredBytes), s.Objects, s.ID)
		}
	}
	if len(u.Files) > 0 {
		fmt.Fprintln(out, "largest files (all their stored versions):")
		for _, f := range u.Files {
			fmt.Fprintf(out, "  %10s  %4d versions  %s\n", sz(f.StoredBytes), f.Versions, f.Path)
		}
	}
}

// runDU prints what the store holds.
func runDU(ctx context.Context, o duOptions, stdout io.Writer) error {
	v, err := openView(func() (string, *workspace.Meta, error) { return workspace.Find(o.Store, o.Dir) })
	if err != nil {
		return err
	}
	u, err := gc.Measure(v.Store, v.CAS, v.Records, o.Top, workspace.WindowSessions(v.Store))
	if err != nil {
		return err
	}
	printDU(stdout, u, o.JSON)
	return nil
}
