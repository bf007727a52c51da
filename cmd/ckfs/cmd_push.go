package main

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/ckfs-dev/ckfs/capture"
	"github.com/ckfs-dev/ckfs/config"
	"github.com/ckfs-dev/ckfs/remote"
	"github.com/ckfs-dev/ckfs/ui"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/spf13/cobra"
)

// pushOptions are ckfs push's.
type pushOptions struct {
	remoteFlags
	Store string // --store, or "" to find it from the current directory
	JSON  bool
}

func newPushCmd() *cobra.Command {
	var o pushOptions
	cmd := &cobra.Command{
		Use:   "push [--remote NAME]",
		Short: "Ship this workspace's checkpoints to a remote",
		Long: `Upload what the remote does not have yet: the objects the new timeline
records need, the timeline since the last push, the workspace's files on
the first push (its baseline, following the capture's exclusions), and the
session logs and marks. Content addressing makes every upload idempotent
and shares it with every workspace using the bucket; an interrupted push is
completed by the next one. Safe while mounted and while agents work.`,
		Example: "  ckfs push\n  ckfs push --remote team",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if o.Store, err = storeFlag(cmd); err != nil {
				return err
			}
			return runPush(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	o.remoteFlags.add(cmd)
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	return cmd
}

// runPush ships the workspace's checkpoints to a remote.
func runPush(ctx context.Context, o pushOptions, stdout io.Writer) error {
	ws, err := workspace.Locate(o.Store, ".")
	if err != nil {
		return err
	}
	store, meta := ws.Store, ws.Meta
	b, name, err := o.open(store)
	if err != nil {
		return err
	}
	// The workspace gets its id at the first push to a URL.
	c, err := ws.UpdateRemotes(func(*workspace.Remotes) error { return nil })
	if err != nil {
		return err
	}
	cfg, _, err := config.For(meta.Root)
	if err != nil {
		return err
	}
	ex, err := capture.NewExcluder(append(append([]string(nil), capture.DefaultExcludes...), cfg.Capture.Exclude...))
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	res, err := remote.Push(ctx, b, remote.PushOptions{
		Store: store, Name: name, Workspace: c.Workspace, Root: meta.Root, Host: host,
		Excluded: ex.Excluded, MaxFileSize: cfg.Capture.MaxFileSize,
		Flush: func() error {
			_, err := ws.Flush()
			return err
		},
	})
	if err != nil {
		return err
	}
	if o.JSON {
		return ui.JSON(stdout, res)
	}
	ui.Push(stdout, b.String(), res)
	return nil
}

// workspacesOptions are ckfs workspaces'.
type workspacesOptions struct {
	remoteFlags
	Store string // --store, or "" to find it (the remote's name is looked up there)
	JSON  bool
}

func newWorkspacesCmd() *cobra.Command {
	var o workspacesOptions
	cmd := &cobra.Command{
		Use:     "workspaces --remote NAME",
		Short:   "List the workspaces a remote holds",
		Example: "  ckfs workspaces --remote s3://agents/ckfs --endpoint http://127.0.0.1:8333",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if o.Store, err = storeFlag(cmd); err != nil {
				return err
			}
			return runWorkspaces(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	o.remoteFlags.add(cmd)
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	return cmd
}

// runWorkspaces lists the workspaces a remote holds.
func runWorkspaces(ctx context.Context, o workspacesOptions, stdout io.Writer) error {
	store := storeIfAny(o.Store) // none here: the remote must be a URL
	b, _, err := o.open(store)
	if err != nil {
		return err
	}
	hs, err := remote.Workspaces(ctx, b)
	if o.JSON {
		if jerr := ui.JSON(stdout, hs); jerr != nil {
			return jerr
		}
		return err
	}
	ui.Workspaces(stdout, b.String(), hs, err)
	return err
}

// restoreOptions are ckfs restore's.
type restoreOptions struct {
	remoteFlags
	remote.RestoreOptions
	Store string // --store, or "" to find it (the remote's name is looked up there)
	JSON  bool
}

func newRestoreCmd() *cobra.Command {
	var o restoreOptions
	cmd := &cobra.Command{
		Use:   "restore --remote NAME --workspace ID [--to CHECKPOINT] DIR",
		Short: "Materialize a checkpoint of any workspace in a remote into a new directory",
		Long: `Write the files of a workspace as they were at a checkpoint (a seq or a
window id, as ckfs log shows them; default: its last) into DIR, which must
be new or empty. Every content is checked against its address as it
arrives; the tree is built beside DIR and renamed into place when whole,
so DIR is either complete or untouched. A checkpoint where a path's content
is not known (a file over the capture size limit, a collected object) is
refused, naming the paths, unless --partial. Owners and extended
attributes are not restored (the machine may have other users), and
neither is .git: clone the repository and restore into a new directory.`,
		Example: "  ckfs restore --remote s3://agents/ckfs --workspace 0193... --to 42 ./restored",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			o.Dir = args[0]
			if o.Store, err = storeFlag(cmd); err != nil {
				return err
			}
			return runRestore(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	o.remoteFlags.add(cmd)
	cmd.Flags().StringVar(&o.Workspace, "workspace", "", "the workspace's id (ckfs workspaces --remote lists them); default: this workspace's own, else the bucket's only one")
	cmd.Flags().StringVar(&o.Checkpoint, "to", "", "checkpoint: a seq, or a window id (just before it); default: the last")
	cmd.Flags().BoolVar(&o.Partial, "partial", false, "restore what can be, and list the paths that cannot")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	return cmd
}

// runRestore writes a checkpoint of a remote's workspace into a new
// directory.
func runRestore(ctx context.Context, o restoreOptions, stdout io.Writer) error {
	store := storeIfAny(o.Store) // none here: the remote must be a URL
	b, _, err := o.open(store)
	if err != nil {
		return err
	}
	if o.Workspace == "" {
		if o.Workspace, err = remote.OnlyWorkspace(ctx, b, ownWorkspace(store)); err != nil {
			return workspace.Errorf(workspace.ErrUsage, "restore: %v", err)
		}
	}
	start := time.Now()
	res, err := remote.Restore(ctx, b, o.RestoreOptions)
	if err != nil {
		return err
	}
	if o.JSON {
		return ui.JSON(stdout, res)
	}
	ui.Restore(stdout, res, time.Since(start))
	return nil
}
