package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ckfs-dev/ckfs/rewind"
	"github.com/ckfs-dev/ckfs/workspace"
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
