package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// runPicker runs the picker on the terminal, then does what was chosen
// with the terminal back to normal.
func runPicker(cmd *cobra.Command, o rewindOptions, out io.Writer) error {
	in, outFd := int(os.Stdin.Fd()), int(os.Stdout.Fd())
	if !term.IsTerminal(in) || !term.IsTerminal(outFd) {
		return workspace.Errorf(workspace.ErrUsage, "rewind -i needs a terminal; without one use ckfs log, then ckfs rewind --to or --mark")
	}
	v, err := openView(func() (string, *workspace.Meta, error) { return findStore(cmd, ".") })
	if err != nil {
		return err
	}
	m := newPickModel(v.LogEntries())
	old, err := term.MakeRaw(in)
	if err != nil {
		return fmt.Errorf("rewind -i: %w", err)
	}
	fmt.Fprint(os.Stdout, "\x1b[?1049h\x1b[?25l") // the alternate screen, no cursor
	restore := func() {
		fmt.Fprint(os.Stdout, "\x1b[?25h\x1b[?1049l")
		term.Restore(in, old)
	}
	keys := bufio.NewReader(os.Stdin)
	for !m.done {
		w, h, err := term.GetSize(outFd)
		if err != nil || h < 5 {
			w, h = 80, 24
		}
		fmt.Fprint(os.Stdout, "\x1b[H\x1b[2J"+m.view(w, h))
		k, err := readKey(keys)
		if err != nil {
			break
		}
		m.key(k)
	}
	restore()
	if m.chosen == nil {
		fmt.Fprintln(out, "nothing was changed")
		return nil
	}
	return doPicked(cmd, o, *m.chosen, out)
}

// readKey reads one key press: arrows, enter, escape, q, j/k.
func readKey(r *bufio.Reader) (string, error) {
	b, err := r.ReadByte()
	if err != nil {
		return "", err
	}
	switch b {
	case '\r', '\n':
		return "enter", nil
	case 'q', 3: // q, ctrl-c
		return "quit", nil
	case 'k':
		return "up", nil
	case 'j':
		return "down", nil
	case 0x1b:
		if r.Buffered() == 0 {
			return "back", nil // a lone escape
		}
		if n, _ := r.ReadByte(); n != '[' && n != 'O' {
			return "back", nil
		}
		switch c, _ := r.ReadByte(); c {
		case 'A':
			return "up", nil
		case 'B':
			return "down", nil
		case 'D':
			return "back", nil
		case 'C':
			return "enter", nil
		}
	}
	return "", nil
}

// doPicked carries out the chosen action through the ordinary commands.
func doPicked(cmd *cobra.Command, o rewindOptions, a pickAction, out io.Writer) error {
	o.Interactive = false
	e := a.entry
	if a.kind == "revert" {
		return runRevert(cmd, revertOptions{Windows: []string{e.ID}, Conflict: "refuse", Limit: o.Limit}, out)
	}
	if e.Kind == "mark" {
		o.Mark = strconv.Itoa(e.Mark)
	} else {
		o.To = e.ID
	}
	switch a.kind {
	case "rewind-both":
		o.Files, o.Conversation = true, true
	case "rewind-files":
		o.Files = true
	case "rewind-conversation":
		o.Conversation = true
	}
	return runRewind(cmd, o, out)
}
