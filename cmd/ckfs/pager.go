package main

import (
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// pagedCommands are the commands whose output can run long; on a terminal
// it goes through a pager, as git does.
var pagedCommands = []string{"log", "diff", "show", "rewind", "revert", "du", "verify"}

// pager is a running pager that the command's output goes to.
type pager struct {
	cmd *exec.Cmd
	in  io.WriteCloser
}

// startPager starts the pager for the command args name when stdout is a
// terminal: CKFS_PAGER, else PAGER, else less -FRX (which quits at once
// when the output fits on the screen); "" or "cat" means none, as does
// --no-pager or --json. It returns nil when there is no pager.
func startPager(root *cobra.Command, args []string) *pager {
	cmd, _, err := root.Find(args)
	if err != nil || cmd == root || !slices.Contains(pagedCommands, cmd.Name()) || !term.IsTerminal(int(os.Stdout.Fd())) {
		return nil
	}
	if slices.ContainsFunc(args, func(a string) bool { return a == "--no-pager" || a == "--json" || a == "-i" || a == "--interactive" }) {
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
	root.SetOut(in)
	return &pager{cmd: c, in: in}
}

// wait ends the output and waits for the user to leave the pager.
func (p *pager) wait() {
	if p == nil {
		return
	}
	p.in.Close()
	p.cmd.Wait()
}
