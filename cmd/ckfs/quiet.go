package main

import (
	"io"

	"github.com/spf13/cobra"
)

// quiet adds -q to a command whose output is a confirmation, not data:
// with it, the command prints nothing on success (errors still go to
// stderr).
func quiet(c *cobra.Command) *cobra.Command {
	c.Flags().BoolP("quiet", "q", false, "print nothing on success")
	pre := c.PreRunE
	c.PreRunE = func(cmd *cobra.Command, args []string) error {
		if q, _ := cmd.Flags().GetBool("quiet"); q {
			cmd.SetOut(io.Discard)
		}
		if pre != nil {
			return pre(cmd, args)
		}
		return nil
	}
	return c
}
