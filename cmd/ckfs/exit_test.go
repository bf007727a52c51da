package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ckfs-dev/ckfs/rewind"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/spf13/cobra"
)

// Every kind of error exits with its documented code, wrapped or not.
func TestExitCodes(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, ExitOK},
		{errors.New("plain"), ExitError},
		{workspace.Errorf(workspace.ErrUsage, "x"), ExitUsage},
		{workspace.Errorf(workspace.ErrRefused, "x"), ExitRefused},
		{fmt.Errorf("wrapped: %w", rewind.ErrRefused), ExitRefused},
		{fmt.Errorf("wrapped: %w", workspace.Errorf(workspace.ErrNotMounted, "x")), ExitNotMounted},
		{workspace.Errorf(workspace.ErrBusy, "x"), ExitBusy},
		{&exitError{code: 7, err: errors.New("child")}, 7},
	} {
		if got := exitCode(c.err); got != c.want {
			t.Errorf("exitCode(%v) = %d, want %d", c.err, got, c.want)
		}
	}
	// A kind's message is the message alone.
	if got := workspace.Errorf(workspace.ErrBusy, "store %s in use", "s").Error(); got != "store s in use" {
		t.Errorf("message %q", got)
	}
}

// Every command that needs arguments, given none, says which (its usage
// line) and shows its first example, as a usage error (exit code 2),
// instead of cobra's "accepts 1 arg(s), received 0".
func TestMissingArgumentsShowUsage(t *testing.T) {
	checked := 0
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		for _, s := range c.Commands() {
			walk(s)
		}
		if c.Args == nil || c.Args(c, nil) == nil {
			return
		}
		checked++
		err := c.Args(c, nil)
		if code := exitCode(err); code != ExitUsage {
			t.Errorf("%s with no arguments: exit code %d, want %d", c.CommandPath(), code, ExitUsage)
		}
		msg := err.Error()
		if strings.Contains(msg, "arg(s)") || !strings.HasPrefix(msg, c.CommandPath()+": ") {
			t.Errorf("%s with no arguments says %q: want what is missing, in the command's words or its usage line", c.CommandPath(), msg)
		}
		if strings.Contains(msg, "missing arguments") && !strings.Contains(msg, ": missing arguments: "+c.CommandPath()+" ") {
			t.Errorf("%s with no arguments says %q: want its usage line", c.CommandPath(), msg)
		}
		if strings.Contains(msg, "missing arguments") && c.Example != "" && !strings.Contains(msg, "for example: ") {
			t.Errorf("%s with no arguments says %q: want its first example", c.CommandPath(), msg)
		}
	}
	walk(newRootCmd())
	if checked < 10 {
		t.Errorf("only %d commands need arguments: the walk missed them", checked)
	}
}
