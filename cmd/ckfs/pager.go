package main

import (
	"slices"

	"github.com/ckfs-dev/ckfs/ui"
	"github.com/spf13/cobra"
)

// pagedCommands are the commands whose output can run long; on a terminal
// it goes through a pager, as git does.
var pagedCommands = []string{"log", "diff", "show", "blame", "rewind", "revert", "du", "verify"}

// startPager starts the pager for the command args name, when it is one
// of pagedCommands and neither --no-pager, --json nor the picker is asked
// for; it returns nil when there is no pager.
func startPager(root *cobra.Command, args []string) *ui.Pager {
	cmd, _, err := root.Find(args)
	if err != nil || cmd == root || !slices.Contains(pagedCommands, cmd.Name()) {
		return nil
	}
	if slices.ContainsFunc(args, func(a string) bool { return a == "--no-pager" || a == "--json" || a == "-i" || a == "--interactive" }) {
		return nil
	}
	p := ui.StartPager()
	if p != nil {
		root.SetOut(p.Writer())
	}
	return p
}
