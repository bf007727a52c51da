package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/ckfs-dev/ckfs/ui"
	"github.com/ckfs-dev/ckfs/workspace"
	"golang.org/x/term"
)

// runPicker lets the user choose in the picker, then does what was
// chosen, through the ordinary commands, with the terminal back to normal.
func runPicker(ctx context.Context, o rewindOptions, out io.Writer) error {
	if !term.IsTerminal(int(os.Stdin.Fd())) || !term.IsTerminal(int(os.Stdout.Fd())) {
		return workspace.Errorf(workspace.ErrUsage, "rewind -i needs a terminal; without one use ckfs log, then ckfs rewind --to or --mark")
	}
	v, err := openView(o.Store, ".")
	if err != nil {
		return err
	}
	kind, e, ok, err := ui.Pick(v.LogEntries())
	if err != nil {
		return fmt.Errorf("rewind -i: %w", err)
	}
	if !ok {
		fmt.Fprintln(out, "nothing was changed")
		return nil
	}
	o.Interactive = false
	if kind == "revert" {
		return runRevert(ctx, revertOptions{Store: o.Store, Windows: []string{e.ID}, Conflict: "refuse", Limit: o.Limit}, out)
	}
	if e.Kind == "mark" {
		o.Mark = strconv.Itoa(e.Mark)
	} else {
		o.To = e.ID
	}
	switch kind {
	case "rewind-both":
		o.Files, o.Conversation = true, true
	case "rewind-files":
		o.Files = true
	case "rewind-conversation":
		o.Conversation = true
	}
	return runRewind(ctx, o, out)
}
