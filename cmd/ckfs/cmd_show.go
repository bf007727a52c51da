package main

import (
	"encoding/base64"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/spf13/cobra"
)

func newShowCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show CHECKPOINT:PATH",
		Short: "Print a file as it was at a checkpoint",
		Long: `Print the bytes of PATH (relative to the workspace root) as they were at
CHECKPOINT: a seq from ckfs log, a window id (just before that window) or
"now". For a symlink, its target is printed. --json prints the state too,
with the content as text when it is valid UTF-8 and as base64 otherwise.`,
		Example: "  ckfs show 14:src/main.go\n  ckfs show toolu_01ABC:README.md > README.before\n  ckfs show 14:logo.png --json | jq .mode",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cp, path, ok := strings.Cut(args[0], ":")
			if !ok {
				return workspace.Errorf(workspace.ErrUsage, "want CHECKPOINT:PATH, got %q", args[0])
			}
			if err := index.ValidatePath(path); err != nil {
				return workspace.Errorf(workspace.ErrUsage, "%v", err)
			}
			v, err := openView(func() (string, *workspace.Meta, error) { return findStore(cmd, ".") })
			if err != nil {
				return err
			}
			seq, err := v.Checkpoint(cp)
			if err != nil {
				return err
			}
			e, known := index.NewHistory(v.Records).At(path, seq)
			switch {
			case !known:
				return fmt.Errorf("%s was never recorded: ckfs knows only files written through the mount", path)
			case e.Unknown:
				return fmt.Errorf("%s at checkpoint %d: content not stored (%s)", path, seq, e.Reason)
			case e.Type == index.TypeAbsent:
				return fmt.Errorf("%s did not exist at checkpoint %d", path, seq)
			case e.Type == index.TypeDir:
				return fmt.Errorf("%s was a directory at checkpoint %d", path, seq)
			}
			b, err := v.Content(e.State)
			if err != nil {
				return err
			}
			if asJSON {
				out := map[string]any{"checkpoint": seq, "path": path, "type": e.Type, "mode": e.Mode, "size": e.Size, "hash": e.Hash}
				if utf8.Valid(b) {
					out["content"] = string(b)
				} else {
					out["content_base64"] = base64.StdEncoding.EncodeToString(b)
				}
				return printJSON(cmd.OutOrStdout(), out)
			}
			_, err = cmd.OutOrStdout().Write(b)
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the state and the content as JSON")
	return cmd
}
