package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/ckfs-dev/ckfs/config"
	"github.com/ckfs-dev/ckfs/gc"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/spf13/cobra"
)

type gcOptions struct {
	DryRun    bool
	KeepLast  int
	OlderThan string
	MaxSize   string
	JSON      bool
}

func newGCCmd() *cobra.Command {
	var o gcOptions
	cmd := &cobra.Command{
		Use:   "gc [DIR]",
		Short: "Apply the retention policy: free what no kept checkpoint needs",
		Long: `Keep the checkpoints the retention policy keeps restorable and delete every
object that none of them needs. Pending rewind journals and the undo of the
last rewind are always kept. A watermark record in the timeline says where
restorability begins; ckfs log and ckfs rewind explain a checkpoint below
it. The policy comes from the configuration file ([retention]: keep,
max_age, max_size; ckfs config show) and the flags override it. Safe while
mounted (the daemon runs it) and safe to interrupt: running it again
completes it.`,
		Example: `  ckfs gc --dry-run
  ckfs gc --keep-last 20
  ckfs gc --older-than 7d --max-size 2GiB --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			return runGC(cmd, dir, o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.DryRun, "dry-run", false, "say what would be freed, change nothing")
	f.IntVar(&o.KeepLast, "keep-last", 0, "keep the last N checkpoints restorable (default: the configured retention.keep)")
	f.StringVar(&o.OlderThan, "older-than", "", "drop checkpoints older than this (30d, 12h)")
	f.StringVar(&o.MaxSize, "max-size", "", "drop the oldest checkpoints until the store fits (10GiB)")
	f.BoolVar(&o.JSON, "json", false, "print JSON")
	return cmd
}

func runGC(cmd *cobra.Command, dir string, o gcOptions, out io.Writer) error {
	store, meta, err := findStore(cmd, dir)
	if err != nil {
		return err
	}
	cfg, _, err := loadConfig(meta.Root)
	if err != nil {
		return err
	}
	p := retentionPolicy(cfg)
	if o.KeepLast != 0 {
		if o.KeepLast < 1 {
			return workspace.Errorf(workspace.ErrUsage, "--keep-last %d: keep at least 1 checkpoint", o.KeepLast)
		}
		p.Keep = o.KeepLast
	}
	if o.OlderThan != "" {
		if p.MaxAge, err = config.ParseDuration(o.OlderThan); err != nil {
			return workspace.Errorf(workspace.ErrUsage, "--older-than: %v", err)
		}
	}
	if o.MaxSize != "" {
		if p.MaxSize, err = config.ParseSize(o.MaxSize); err != nil {
			return workspace.Errorf(workspace.ErrUsage, "--max-size: %v", err)
		}
	}
	res, err := workspace.Collect(store, p, o.DryRun)
	if err != nil {
		return err
	}
	printGC(out, res, o.JSON)
	return nil
}

func printGC(out io.Writer, r *gc.Result, asJSON bool) {
	if asJSON {
		printJSON(out, r)
		return
	}
	verb, freed := "deleted", "freed"
	if r.DryRun {
		verb, freed = "would delete", "would free"
	}
	fmt.Fprintf(out, "policy: %s\n", r.Policy)
	switch {
	case r.Missing > 0 || r.Damaged > 0:
		fmt.Fprintf(out, "checkpoints from %d on are kept, but not all can be restored: %d objects they need are missing and %d are damaged; run ckfs verify (--repair recovers what it can)\n", max(r.Watermark, 1), r.Missing, r.Damaged)
	case r.Watermark == 0:
		fmt.Fprintf(out, "all %d checkpoints stay restorable\n", r.Checkpoints)
	case r.Watermark > r.Previous:
		fmt.Fprintf(out, "checkpoints from %d on stay restorable (%d of %d): %s\n", r.Watermark, r.Restorable, r.Checkpoints, joinReasons(r.Reasons))
	default:
		fmt.Fprintf(out, "checkpoints from %d on stay restorable (%d of %d), as before\n", r.Watermark, r.Restorable, r.Checkpoints)
	}
	for _, why := range r.Reasons {
		if strings.HasPrefix(why, "held back: ") && r.Watermark <= r.Previous {
			fmt.Fprintln(out, why)
		}
	}
	fmt.Fprintf(out, "%s %d of %d objects, %s %s; %d objects (%s) kept\n", verb, r.Deleted, r.Objects, freed,
		config.FormatSize(r.Freed), r.Live, config.FormatSize(r.Needed))
	if r.KeptRecent > 0 {
		fmt.Fprintf(out, "kept %d objects stored while collecting\n", r.KeptRecent)
	}
	if r.TempsRemoved > 0 {
		fmt.Fprintf(out, "removed %d temp files left by a crash\n", r.TempsRemoved)
	}
}

func joinReasons(rs []string) string {
	s := ""
	for i, r := range rs {
		if i > 0 {
			s += "; "
		}
		s += r
	}
	return s
}
