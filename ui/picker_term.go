package ui

import (
	"bufio"
	"fmt"
	"os"

	"github.com/ckfs-dev/ckfs/workspace"
	"golang.org/x/term"
)

// Pick runs the picker over entries on the terminal (stdin and stdout,
// which must be one), and returns what the user chose: the action's kind
// (rewind-both, rewind-files, rewind-conversation, preview, revert) and
// its entry; ok is false when they quit. The terminal is back to normal
// when it returns.
func Pick(entries []workspace.LogEntry) (kind string, e workspace.LogEntry, ok bool, err error) {
	in, outFd := int(os.Stdin.Fd()), int(os.Stdout.Fd())
	m := newPickModel(entries)
	old, err := term.MakeRaw(in)
	if err != nil {
		return "", e, false, err
	}
	fmt.Fprint(os.Stdout, "\x1b[?1049h\x1b[?25l") // the alternate screen, no cursor
	defer func() {
		fmt.Fprint(os.Stdout, "\x1b[?25h\x1b[?1049l")
		term.Restore(in, old)
	}()
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
	if m.chosen == nil {
		return "", e, false, nil
	}
	return m.chosen.kind, m.chosen.entry, true, nil
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
