package main

import (
	"github.com/ckfs-dev/ckfs/internal/gendocs"
	"github.com/spf13/cobra"
)

func newGenDocsCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "gen-docs REPO",
		Short:   "Regenerate docs/cli.md and docs/man/ from the command tree",
		Example: "  go run ./cmd/ckfs gen-docs .",
		Hidden:  true,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return gendocs.Write(newRootCmd(), args[0])
		},
	}
}
