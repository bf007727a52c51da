package main

import (
	"fmt"
	"os"
	"time"

	"github.com/ckfs-dev/ckfs/capture"
	"github.com/ckfs-dev/ckfs/config"
	"github.com/ckfs-dev/ckfs/remote"
	"github.com/ckfs-dev/ckfs/ui"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/spf13/cobra"
)

func newRemoteCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "remote",
		Short:   "Name the S3-compatible buckets this workspace pushes its checkpoints to",
		Example: "  ckfs remote add team s3://agents/ckfs\n  ckfs remote list",
		Long: `A remote is an S3-compatible bucket (AWS S3, SeaweedFS, MinIO, ...) and a
prefix in it, where ckfs push ships this workspace's checkpoints so that
they outlive the machine: ckfs restore brings any of them back anywhere.
Remotes are kept per workspace, in its store. Credentials come from the
usual AWS environment variables (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)
or the shared credentials file (AWS_PROFILE); the endpoint from --endpoint,
else AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL, else AWS.`,
	}
	var endpoint string
	add := &cobra.Command{
		Use:     "add NAME s3://BUCKET[/PREFIX]",
		Short:   "Add a remote to this workspace",
		Example: "  ckfs remote add team s3://agents/ckfs --endpoint http://127.0.0.1:8333",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, _, err := findStore(cmd, ".")
			if err != nil {
				return err
			}
			if !workspace.ValidRemoteName(args[0]) {
				return workspace.Errorf(workspace.ErrUsage, "remote name %q: use letters, digits, '.', '_' and '-'", args[0])
			}
			if _, _, err := remote.ParseURL(args[1]); err != nil {
				return workspace.Errorf(workspace.ErrUsage, "%v", err)
			}
			c, err := workspace.UpdateRemotes(store, func(c *workspace.Remotes) error {
				c.Remotes[args[0]] = workspace.RemoteConfig{URL: args[1], Endpoint: endpoint}
				return nil
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "remote %s: %s; this workspace is %s there (ckfs push ships it)\n", args[0], args[1], c.Workspace)
			return nil
		},
	}
	add.Flags().StringVar(&endpoint, "endpoint", "", "where the bucket is served (host:port or http(s)://host:port)")
	list := &cobra.Command{
		Use:     "list",
		Short:   "List this workspace's remotes and its id in them",
		Example: "  ckfs remote list",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			store, _, err := findStore(cmd, ".")
			if err != nil {
				return err
			}
			c, err := workspace.LoadRemotes(store)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if len(c.Remotes) == 0 {
				fmt.Fprintln(out, "no remotes (ckfs remote add NAME s3://BUCKET/PREFIX adds one)")
				return nil
			}
			fmt.Fprintf(out, "workspace id: %s\n", c.Workspace)
			for _, n := range c.Names() {
				r := c.Remotes[n]
				fmt.Fprintf(out, "%s\t%s\t%s\n", n, r.URL, r.Endpoint)
			}
			return nil
		},
	}
	remove := &cobra.Command{
		Use:   "remove NAME",
		Short: "Stop pushing to a remote (what it holds stays there)",
		Long: `Forget a remote: the daemon stops pushing to it, and a local ckfs gc no
longer keeps checkpoints for it (while a remote is configured, a local
collection keeps every checkpoint it does not have yet). The bucket is not
touched.`,
		Example: "  ckfs remote remove team",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, _, err := findStore(cmd, ".")
			if err != nil {
				return err
			}
			_, err = workspace.UpdateRemotes(store, func(c *workspace.Remotes) error {
				if _, ok := c.Remotes[args[0]]; !ok {
					return workspace.Errorf(workspace.ErrUsage, "no remote %q (ckfs remote list shows them)", args[0])
				}
				delete(c.Remotes, args[0])
				return nil
			})
			if err == nil {
				fmt.Fprintf(cmd.OutOrStdout(), "removed remote %s; what it holds stays in the bucket\n", args[0])
			}
			return err
		},
	}
	cmd.AddCommand(add, list, remove)
	return cmd
}

// remoteFlags are the flags of the commands that reach a remote.
type remoteFlags struct {
	Remote   string
	Endpoint string
}

func (f *remoteFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.Remote, "remote", "", "a remote's name (ckfs remote list), or an s3://BUCKET/PREFIX URL")
	cmd.Flags().StringVar(&f.Endpoint, "endpoint", "", "where the bucket is served (default: the remote's, else AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL)")
}

// open opens the remote the flags name, and returns its name in the
// store's remotes ("" for a URL); store may be "" (no workspace here: the
// flag must then be a URL).
func (f *remoteFlags) open(store string) (*remote.Bucket, string, error) {
	c := &workspace.Remotes{Remotes: map[string]workspace.RemoteConfig{}}
	if store != "" {
		var err error
		if c, err = workspace.LoadRemotes(store); err != nil {
			return nil, "", err
		}
	}
	r, name, err := remote.Resolve(c, f.Remote, f.Endpoint)
	if err != nil {
		return nil, "", err
	}
	b, err := remote.Open(r)
	return b, name, err
}

func newPushCmd() *cobra.Command {
	var f remoteFlags
	var asJSON bool
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
		RunE: func(cmd *cobra.Command, args []string) error {
			store, meta, err := findStore(cmd, ".")
			if err != nil {
				return err
			}
			b, name, err := f.open(store)
			if err != nil {
				return err
			}
			// The workspace gets its id at the first push to a URL.
			c, err := workspace.UpdateRemotes(store, func(*workspace.Remotes) error { return nil })
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
			res, err := remote.Push(cmd.Context(), b, remote.PushOptions{
				Store: store, Name: name, Workspace: c.Workspace, Root: meta.Root, Host: host,
				Excluded: ex.Excluded, MaxFileSize: cfg.Capture.MaxFileSize,
				Flush: func() error {
					_, err := workspace.Flush(store)
					return err
				},
			})
			if err != nil {
				return err
			}
			if asJSON {
				return ui.JSON(cmd.OutOrStdout(), res)
			}
			ui.Push(cmd.OutOrStdout(), b.String(), res)
			return nil
		},
	}
	f.add(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newWorkspacesCmd() *cobra.Command {
	var f remoteFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "workspaces --remote NAME",
		Short:   "List the workspaces a remote holds",
		Example: "  ckfs workspaces --remote s3://agents/ckfs --endpoint http://127.0.0.1:8333",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			store, _, _ := findStore(cmd, ".")
			b, _, err := f.open(store)
			if err != nil {
				return err
			}
			hs, err := remote.Workspaces(cmd.Context(), b)
			out := cmd.OutOrStdout()
			if asJSON {
				if jerr := ui.JSON(out, hs); jerr != nil {
					return jerr
				}
				return err
			}
			ui.Workspaces(out, b.String(), hs, err)
			return err
		},
	}
	f.add(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newRestoreCmd() *cobra.Command {
	var f remoteFlags
	var o remote.RestoreOptions
	var asJSON bool
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
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Workspace == "" {
				return workspace.Errorf(workspace.ErrUsage, "name the workspace with --workspace ID (ckfs workspaces --remote lists them)")
			}
			o.Dir = args[0]
			store, _, _ := findStore(cmd, ".")
			b, _, err := f.open(store)
			if err != nil {
				return err
			}
			start := time.Now()
			res, err := remote.Restore(cmd.Context(), b, o)
			if err != nil {
				return err
			}
			if asJSON {
				return ui.JSON(cmd.OutOrStdout(), res)
			}
			ui.Restore(cmd.OutOrStdout(), res, time.Since(start))
			return nil
		},
	}
	f.add(cmd)
	cmd.Flags().StringVar(&o.Workspace, "workspace", "", "the workspace's id (ckfs workspaces --remote lists them)")
	cmd.Flags().StringVar(&o.Checkpoint, "to", "", "checkpoint: a seq, or a window id (just before it); default: the last")
	cmd.Flags().BoolVar(&o.Partial, "partial", false, "restore what can be, and list the paths that cannot")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// remoteRead lets a command that reads a store (log, show, diff) read a
// workspace of a remote instead, through a copy in the user's cache.
type remoteRead struct {
	remoteFlags
	Workspace string
}

func (r *remoteRead) add(cmd *cobra.Command) {
	r.remoteFlags.add(cmd)
	cmd.Flags().StringVar(&r.Workspace, "workspace", "", "with --remote: the workspace to read (ckfs workspaces --remote lists them)")
}

// store returns the store to read: --store or "" (found from the
// directory), or with --remote a copy of the remote workspace, brought up
// to date first.
func (r *remoteRead) store(cmd *cobra.Command) (string, error) {
	if r.Remote == "" {
		if r.Workspace != "" {
			return "", workspace.Errorf(workspace.ErrUsage, "--workspace reads a workspace of a remote: give --remote too")
		}
		return storeFlag(cmd)
	}
	if r.Workspace == "" {
		return "", workspace.Errorf(workspace.ErrUsage, "--remote: name the workspace with --workspace ID (ckfs workspaces --remote lists them)")
	}
	local, _, _ := findStore(cmd, ".")
	b, _, err := r.open(local)
	if err != nil {
		return "", err
	}
	dir, err := remote.MirrorDir(b, r.Workspace)
	if err != nil {
		return "", err
	}
	return dir, remote.Mirror(cmd.Context(), b, r.Workspace, dir)
}
