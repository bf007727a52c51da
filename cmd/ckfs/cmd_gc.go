package main

import (
	"context"
	"io"

	"github.com/ckfs-dev/ckfs/config"
	"github.com/ckfs-dev/ckfs/gc"
	"github.com/ckfs-dev/ckfs/remote"
	"github.com/ckfs-dev/ckfs/ui"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/spf13/cobra"
)

// gcOptions are ckfs gc's.
type gcOptions struct {
	remoteFlags
	workspaceArg
	DropAfter string
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
completes it.

With --remote, the collection is of a shared bucket instead: each
workspace's retention comes from --keep-last and --older-than (default:
keep every checkpoint), --drop-after removes whole workspaces nobody has
pushed to for that long, and an object is deleted only when no kept
checkpoint of any workspace needs it and it is older than the grace
period (24 hours), so agents can push meanwhile.`,
		Example: `  ckfs gc --dry-run
  ckfs gc --keep-last 20
  ckfs gc --older-than 7d --max-size 2GiB --json
  ckfs gc --remote team --keep-last 50 --drop-after 30d`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.fill(cmd, args); err != nil {
				return err
			}
			if o.Remote != "" {
				return runRemoteGC(cmd.Context(), o, cmd.OutOrStdout())
			}
			return runGC(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.DryRun, "dry-run", false, "say what would be freed, change nothing")
	f.IntVar(&o.KeepLast, "keep-last", 0, "keep the last N checkpoints restorable (default: the configured retention.keep)")
	f.StringVar(&o.OlderThan, "older-than", "", "drop checkpoints older than this (30d, 12h)")
	f.StringVar(&o.MaxSize, "max-size", "", "drop the oldest checkpoints until the store fits (10GiB)")
	f.BoolVar(&o.JSON, "json", false, "print JSON")
	o.remoteFlags.add(cmd)
	f.StringVar(&o.DropAfter, "drop-after", "", "--remote: remove workspaces not pushed to for this long (30d)")
	return cmd
}

// runRemoteGC collects a shared bucket.
func runRemoteGC(ctx context.Context, o gcOptions, out io.Writer) error {
	if o.MaxSize != "" {
		return workspace.Errorf(workspace.ErrUsage, "--max-size is for a local store; a bucket's workspaces are kept by --keep-last, --older-than and --drop-after")
	}
	ro := remote.CollectOptions{DryRun: o.DryRun, Policy: gc.Policy{Keep: o.KeepLast}}
	var err error
	if o.OlderThan != "" {
		if ro.Policy.MaxAge, err = config.ParseDuration(o.OlderThan); err != nil {
			return workspace.Errorf(workspace.ErrUsage, "--older-than: %v", err)
		}
	}
	if o.DropAfter != "" {
		if ro.DropAfter, err = config.ParseDuration(o.DropAfter); err != nil {
			return workspace.Errorf(workspace.ErrUsage, "--drop-after: %v", err)
		}
	}
	store := storeIfAny(o.Store) // none here: the remote must be a URL
	b, _, err := o.remoteFlags.open(store)
	if err != nil {
		return err
	}
	res, err := remote.Collect(ctx, b, ro)
	if err != nil {
		return err
	}
	if o.JSON {
		return ui.JSON(out, res)
	}
	ui.RemoteGC(out, b.String(), res, ro.Policy, o.DropAfter)
	return nil
}

// runGC applies the retention policy to the workspace's store.
func runGC(ctx context.Context, o gcOptions, out io.Writer) error {
	ws, err := workspace.Locate(o.Store, o.Dir)
	if err != nil {
		return err
	}
	cfg, _, err := config.For(ws.Root())
	if err != nil {
		return err
	}
	p := gc.RetentionPolicy(cfg.Retention)
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
	res, err := ws.Collect(p, o.DryRun)
	if err != nil {
		return err
	}
	if o.JSON {
		return ui.JSON(out, res)
	}
	ui.GC(out, res)
	return nil
}
