package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/ui"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/spf13/cobra"
)

// showOptions are ckfs show's: CHECKPOINT:PATH and the flags.
type showOptions struct {
	Store string // --store, or "" to find it from the current directory
	Arg   string // CHECKPOINT:PATH
	JSON  bool
}

func newShowCmd() *cobra.Command {
	var o showOptions
	var rr remoteRead
	cmd := &cobra.Command{
		Use:   "show CHECKPOINT:PATH | CHECKPOINT PATH",
		Short: "Print a file as it was at a checkpoint",
		Long: `Print the bytes of PATH (relative to the workspace root) as they were at
CHECKPOINT: a seq from ckfs log, a window id (just before that window) or
"now"; CHECKPOINT and PATH may also be two arguments. For a symlink, its
target is printed. --json prints the state too, with the content as text
when it is valid UTF-8 and as base64 otherwise.`,
		Example: "  ckfs show 14:src/main.go\n  ckfs show toolu_01ABC:README.md > README.before\n  ckfs show 14:logo.png --json | jq .mode",
		Args:    cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Arg = strings.Join(args, ":") // a checkpoint has no colon: the first is the separator
			var err error
			if o.Store, err = rr.store(cmd); err != nil {
				return err
			}
			return runShow(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the state and the content as JSON")
	rr.add(cmd)
	return cmd
}

// runShow prints a file as it was at a checkpoint.
func runShow(ctx context.Context, o showOptions, stdout io.Writer) error {
	cp, path, ok := strings.Cut(o.Arg, ":")
	if !ok {
		return workspace.Errorf(workspace.ErrUsage, "name the checkpoint too: ckfs show CHECKPOINT:%s or ckfs show CHECKPOINT %s (a seq or a window id from ckfs log)", o.Arg, o.Arg)
	}
	if err := index.ValidatePath(path); err != nil {
		return workspace.Errorf(workspace.ErrUsage, "%v", err)
	}
	v, err := openView(o.Store, ".")
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
	if o.JSON {
		out := showJSON{Checkpoint: seq, Path: path, Type: e.Type, Mode: e.Mode, Size: e.Size, Hash: e.Hash}
		if utf8.Valid(b) {
			out.Content = new(string(b))
		} else {
			out.ContentBase64 = base64.StdEncoding.EncodeToString(b)
		}
		return ui.JSON(stdout, out)
	}
	_, err = stdout.Write(b)
	return err
}

// showJSON is ckfs show --json: the file's entry at the checkpoint and its
// content, as text when it is UTF-8 (empty included), else in base64.
type showJSON struct {
	Checkpoint    uint64         `json:"checkpoint"`
	Path          string         `json:"path"`
	Type          index.FileType `json:"type"`
	Mode          uint32         `json:"mode"`
	Size          int64          `json:"size"`
	Hash          index.Hash     `json:"hash"`
	Content       *string        `json:"content,omitempty"`
	ContentBase64 string         `json:"content_base64,omitempty"`
}
