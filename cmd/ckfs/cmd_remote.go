package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/ckfs-dev/ckfs/remote"
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
	var o remoteOptions
	fill := func(cmd *cobra.Command, args []string) (err error) {
		if len(args) > 0 {
			o.Name = args[0]
		}
		if len(args) > 1 {
			o.URL = args[1]
		}
		o.Store, err = storeFlag(cmd)
		return err
	}
	add := &cobra.Command{
		Use:     "add NAME s3://BUCKET[/PREFIX]",
		Short:   "Add a remote to this workspace",
		Example: "  ckfs remote add team s3://agents/ckfs --endpoint http://127.0.0.1:8333",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := fill(cmd, args); err != nil {
				return err
			}
			return runRemoteAdd(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	add.Flags().StringVar(&o.Endpoint, "endpoint", "", "where the bucket is served (host:port or http(s)://host:port)")
	add.Flags().BoolVar(&o.NoCheck, "no-check", false, "add the remote without asking the bucket first (a server not started yet)")
	list := &cobra.Command{
		Use:     "list",
		Short:   "List this workspace's remotes and its id in them",
		Example: "  ckfs remote list",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := fill(cmd, args); err != nil {
				return err
			}
			return runRemoteList(cmd.Context(), o, cmd.OutOrStdout())
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
			if err := fill(cmd, args); err != nil {
				return err
			}
			return runRemoteRemove(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	cmd.AddCommand(add, list, remove)
	return cmd
}

// remoteOptions are ckfs remote add's, list's and remove's.
type remoteOptions struct {
	Store    string // --store, or "" to find it from the current directory
	Name     string // the remote's name
	URL      string // add: s3://BUCKET[/PREFIX]
	Endpoint string // add: where the bucket is served
	NoCheck  bool   // add: do not ask the bucket first
}

// remoteCheckTimeout bounds remote add's question to the bucket.
const remoteCheckTimeout = 10 * time.Second

// runRemoteAdd adds a remote to the workspace's remotes.
func runRemoteAdd(ctx context.Context, o remoteOptions, stdout io.Writer) error {
	ws, err := workspace.Locate(o.Store, ".")
	if err != nil {
		return err
	}
	if !workspace.ValidRemoteName(o.Name) {
		return workspace.Errorf(workspace.ErrUsage, "remote name %q: use letters, digits, '.', '_' and '-'", o.Name)
	}
	if _, _, err := remote.ParseURL(o.URL); err != nil {
		return workspace.Errorf(workspace.ErrUsage, "%v", err)
	}
	if !o.NoCheck {
		b, err := remote.Open(remote.Remote{URL: o.URL, Endpoint: o.Endpoint})
		if err != nil {
			return workspace.Errorf(workspace.ErrUsage, "%v", err)
		}
		if err := remote.Check(ctx, b, remoteCheckTimeout); err != nil {
			return workspace.Errorf(workspace.ErrRefused, "remote add %s: %v\nnothing was added (--no-check adds it without asking the bucket)", o.Name, err)
		}
	}
	c, err := ws.UpdateRemotes(func(c *workspace.Remotes) error {
		c.Remotes[o.Name] = workspace.RemoteConfig{URL: o.URL, Endpoint: o.Endpoint}
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "remote %s: %s; this workspace is %s there (ckfs push ships it)\n", o.Name, o.URL, c.Workspace)
	return nil
}

// runRemoteList lists the workspace's remotes.
func runRemoteList(ctx context.Context, o remoteOptions, stdout io.Writer) error {
	ws, err := workspace.Locate(o.Store, ".")
	if err != nil {
		return err
	}
	c, err := ws.Remotes()
	if err != nil {
		return err
	}
	if len(c.Remotes) == 0 {
		fmt.Fprintln(stdout, "no remotes (ckfs remote add NAME s3://BUCKET/PREFIX adds one)")
		return nil
	}
	fmt.Fprintf(stdout, "workspace id: %s\n", c.Workspace)
	for _, n := range c.Names() {
		r := c.Remotes[n]
		fmt.Fprintf(stdout, "%s\t%s\t%s\n", n, r.URL, r.Endpoint)
	}
	return nil
}

// runRemoteRemove forgets a remote; the bucket is not touched.
func runRemoteRemove(ctx context.Context, o remoteOptions, stdout io.Writer) error {
	ws, err := workspace.Locate(o.Store, ".")
	if err != nil {
		return err
	}
	_, err = ws.UpdateRemotes(func(c *workspace.Remotes) error {
		if _, ok := c.Remotes[o.Name]; !ok {
			return workspace.Errorf(workspace.ErrUsage, "no remote %q (ckfs remote list shows them)", o.Name)
		}
		delete(c.Remotes, o.Name)
		return nil
	})
	if err == nil {
		fmt.Fprintf(stdout, "removed remote %s; what it holds stays in the bucket\n", o.Name)
	}
	return err
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

// open opens the remote the flags name for the workspace whose store is
// store ("" for none: the flag must then be a URL).
func (f *remoteFlags) open(store string) (*remote.Bucket, string, error) {
	return remote.OpenFor(store, f.Remote, f.Endpoint)
}

// remoteRead lets a command that reads a store (log, show, diff) read a
// workspace of a remote instead, through a copy in the user's cache.
type remoteRead struct {
	remoteFlags
	Workspace string
}

func (r *remoteRead) add(cmd *cobra.Command) {
	r.remoteFlags.add(cmd)
	cmd.Flags().StringVar(&r.Workspace, "workspace", "", "with --remote: the workspace to read (ckfs workspaces --remote lists them); default: this workspace's own, else the bucket's only one")
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
	s, err := storeFlag(cmd)
	if err != nil {
		return "", err
	}
	local := storeIfAny(s) // none here: the remote must be a URL
	b, _, err := r.open(local)
	if err != nil {
		return "", err
	}
	id := r.Workspace
	if id == "" {
		if id, err = remote.OnlyWorkspace(cmd.Context(), b, ownWorkspace(local)); err != nil {
			return "", workspace.Errorf(workspace.ErrUsage, "--remote: %v", err)
		}
	}
	return remote.MirrorCopy(cmd.Context(), b, id)
}

// ownWorkspace is the id in its remotes of the workspace whose store is
// store, "" for none.
func ownWorkspace(store string) string {
	if store == "" {
		return ""
	}
	c, err := workspace.LoadRemotes(store)
	if err != nil {
		return ""
	}
	return c.Workspace
}
