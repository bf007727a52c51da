package main

import (
	"context"
	"io"

	"github.com/ckfs-dev/ckfs/config"
	"github.com/ckfs-dev/ckfs/ui"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/spf13/cobra"
)

func newConfigCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show the configuration",
	}
	var o configShowOptions
	show := &cobra.Command{
		Use:   "show [DIR]",
		Short: "Print the effective configuration for a repository and where each value comes from",
		Long: `Print every setting in effect for the repository DIR (default: the current
directory): its value and where it was set — "default", or the file and
line of the global configuration or of a [repo."PATH"] table for DIR. The
file is $CKFS_CONFIG, else $XDG_CONFIG_HOME/ckfs/config.toml, else
~/.config/ckfs/config.toml; docs/configuration.md describes every key.`,
		Example: "  ckfs config show\n  ckfs config show ~/src/app --json",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Dir = "."
			if len(args) == 1 {
				o.Dir = args[0]
			}
			return runConfigShow(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	show.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	cmd.AddCommand(show)
	return cmd
}

// configShowOptions are ckfs config show's.
type configShowOptions struct {
	Dir  string // the repository
	JSON bool
}

// runConfigShow prints the configuration in effect for a repository.
func runConfigShow(ctx context.Context, o configShowOptions, stdout io.Writer) error {
	root, err := workspace.AbsDir(o.Dir)
	if err != nil {
		return workspace.Errorf(workspace.ErrUsage, "config show: %v", err)
	}
	c, path, err := config.For(root)
	if err != nil {
		return err
	}
	ui.Config(stdout, c, path, root, o.JSON)
	return nil
}
