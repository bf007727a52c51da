//go:build gendocs

// The generator (cobra's doc package and the markdown and man renderers
// it links) stays out of the binary an agent's hook starts on every tool
// call: build it with -tags gendocs.

package main

import (
	"github.com/ckfs-dev/ckfs/internal/gendocs"
	"github.com/spf13/cobra"
)

func init() { extraCmds = append(extraCmds, newGenDocsCmd) }

func newGenDocsCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "gen-docs REPO",
		Short:   "Regenerate docs/cli.md and docs/man/ from the command tree",
		Example: "  go run -tags gendocs ./cmd/ckfs gen-docs .",
		Hidden:  true,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return gendocs.Write(newRootCmd(), args[0])
		},
	}
}
