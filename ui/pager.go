package ui

import (
	"io"
	"os"
	"os/exec"
	"strings"

	"golang.org/x/term"
)

// Pager is a running pager that a command's output goes to.
type Pager struct {
	cmd *exec.Cmd
	in  io.WriteCloser
}

// StartPager starts a pager when stdout is a terminal: CKFS_PAGER, else
// PAGER, else less -FRX (which quits at once when the output fits on the
// screen); "" or "cat" means none. It returns nil when there is no pager.
func StartPager() *Pager {
	if !term.IsTerminal(int(os.Stdout.Fd())) {
		return nil
	}
	line, ok := os.LookupEnv("CKFS_PAGER")
	if !ok {
		line, ok = os.LookupEnv("PAGER")
	}
	if !ok {
		line = "less -FRX"
	}
	if line = strings.TrimSpace(line); line == "" || line == "cat" {
		return nil
	}
	c := exec.Command("sh", "-c", line)
	c.Stdout, c.Stderr = os.Stdout, os.Stderr
	c.Env = append(os.Environ(), "LESS=FRX", "LV=-c")
	in, err := c.StdinPipe()
	if err != nil {
		return nil
	}
	if err := c.Start(); err != nil {
		return nil // no pager: print straight to the terminal
	}
	return &Pager{cmd: c, in: in}
}

// Writer is where the output goes.
func (p *Pager) Writer() io.Writer { return p.in }

// Wait ends the output and waits for the user to leave the pager.
func (p *Pager) Wait() {
	if p == nil {
		return
	}
	p.in.Close()
	p.cmd.Wait()
}
