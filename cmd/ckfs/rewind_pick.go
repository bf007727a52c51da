package main

import (
	"bytes"
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
// A preview, and a rewind or revert that a check refused, are shown in the
// pager, and the user is back in the picker's menu afterwards; a change
// made, or leaving the picker, ends the command.
func runPicker(ctx context.Context, o rewindOptions, out io.Writer) error {
	if !term.IsTerminal(int(os.Stdin.Fd())) || !term.IsTerminal(int(os.Stdout.Fd())) {
		return workspace.Errorf(workspace.ErrUsage, "rewind -i needs a terminal; without one use ckfs log, then ckfs rewind --to or --mark")
	}
	v, err := openView(o.Store, ".")
	if err != nil {
		return err
	}
	p := ui.NewPicker(v.LogEntries())
	for {
		kind, e, ok, err := p.Run()
		if err != nil {
			return fmt.Errorf("rewind -i: %w", err)
		}
		if !ok {
			fmt.Fprintln(out, "nothing was changed")
			return nil
		}
		var buf bytes.Buffer
		err = pickedAction(ctx, o, kind, e, &buf)
		if kind != "preview" && exitCode(err) != ExitRefused {
			out.Write(buf.Bytes())
			return err
		}
		if err != nil {
			fmt.Fprintf(&buf, "refused: %v\n", err)
		}
		if err := p.Show(buf.String()); err != nil {
			return fmt.Errorf("rewind -i: %w", err)
		}
	}
}

// pickedAction does what the picker chose, writing to out.
func pickedAction(ctx context.Context, o rewindOptions, kind string, e workspace.LogEntry, out io.Writer) error {
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
