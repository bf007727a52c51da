package ui

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/ckfs-dev/ckfs/workspace"
	"golang.org/x/term"
)

// Picker is the picker of ckfs rewind -i on the terminal (stdin and
// stdout, which must be one). It keeps its place between runs, so that
// after a preview or a refusal the user is back where they chose.
type Picker struct {
	m *pickModel
}

// NewPicker returns a picker over entries (newest first).
func NewPicker(entries []workspace.LogEntry) *Picker {
	return &Picker{m: newPickModel(entries)}
}

// Run lets the user choose, and returns the action's kind (rewind-both,
// rewind-files, rewind-conversation, preview, revert) and its entry; ok
// is false when they quit. A second Run opens where the last one ended
// (the menu of the entry chosen). The terminal is back to normal when it
// returns.
func (p *Picker) Run() (kind string, e workspace.LogEntry, ok bool, err error) {
	in, outFd := int(os.Stdin.Fd()), int(os.Stdout.Fd())
	m := p.m
	m.done, m.chosen = false, nil
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

// Show shows text on the terminal until the user leaves it, to go back
// to the picker: through the pager (CKFS_PAGER, else PAGER, else less -RX,
// which stays open even when the text fits, so that it can be read), or,
// with no pager, printed and followed by a prompt for a key.
func (p *Picker) Show(text string) error {
	const back = "(q returns to the menu)"
	line, ok := os.LookupEnv("CKFS_PAGER")
	if !ok {
		line, ok = os.LookupEnv("PAGER")
	}
	if !ok {
		line = "less -RX"
	}
	if line = strings.TrimSpace(line); line != "" && line != "cat" {
		c := exec.Command("sh", "-c", line)
		c.Stdin = strings.NewReader(text + "\n" + back + "\n")
		c.Stdout, c.Stderr = os.Stdout, os.Stderr
		c.Env = append(os.Environ(), "LESS=RX", "LV=-c")
		if err := c.Run(); err == nil {
			return nil
		}
	}
	fmt.Fprint(os.Stdout, text+"\npress a key to return to the menu ")
	return anyKey(os.Stdin)
}

// anyKey waits for one key press on the terminal in.
func anyKey(in *os.File) error {
	old, err := term.MakeRaw(int(in.Fd()))
	if err != nil {
		return err
	}
	defer term.Restore(int(in.Fd()), old)
	_, err = io.ReadFull(in, make([]byte, 1))
	fmt.Fprint(os.Stdout, "\r\n")
	return err
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
