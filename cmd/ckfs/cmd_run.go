package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ckfs-dev/ckfs/capture"
	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/google/uuid"
	"github.com/spf13/cobra"
)

// runOptions are ckfs run's: the command and what its window records.
type runOptions struct {
	Store string   // --store, or "" to find it from the current directory
	Tool  string   // "" for the command's name
	Label string   // "" for the command line
	Args  []string // the command and its arguments
}

func newRunCmd() *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run [--label TEXT] -- CMD [ARGS...]",
		Short: "Run one command inside its own window",
		Long: `Open a window, run the command with this terminal, close the window, and
exit with the command's exit code. This is the integration for agents
without hooks: wrap each tool call, or the whole agent, in ckfs run.

The window owns the writes of the command and of every process it starts
(they carry CKFS_WINDOW in their environment), also of a background
process that writes after the command returned (shown in ckfs log as a
continuation of the window); a write by any other process while it runs
is recorded as your own edit. It refuses to run from a shell that was in the
repository when ckfs mounted over it: that shell still sees the directory
under the mount, and the command's writes would bypass ckfs (cd there again
first).`,
		Example: `  ckfs run -- sed -i 's/foo/bar/' main.go
  ckfs run --label "format" -- gofmt -w .`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Args = args
			var err error
			if o.Store, err = storeFlag(cmd); err != nil {
				return err
			}
			return runRun(cmd.Context(), o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&o.Label, "label", "", "label to record (default: the command line)")
	cmd.Flags().StringVar(&o.Tool, "tool", "", "tool name to record (default: the command's name)")
	cmd.Flags().SetInterspersed(false)
	return cmd
}

// runRun runs a command inside its own window and gives back its exit status.
func runRun(ctx context.Context, o runOptions, stdout, stderr io.Writer) error {
	ws, err := workspace.Locate(o.Store, ".")
	if err != nil {
		return err
	}
	if err := ws.RefuseHiddenCwd(); err != nil {
		return err
	}
	if o.Label == "" {
		o.Label = strings.Join(o.Args, " ")
	}
	if o.Tool == "" {
		o.Tool = filepath.Base(o.Args[0])
	}
	id := "run-" + uuid.NewString()[:8]
	if _, err := ws.Daemon().OpenWindow(workspace.Window{ID: id, Tool: o.Tool, Label: o.Label, Marked: true}); err != nil {
		return err
	}
	c := exec.CommandContext(ctx, o.Args[0], o.Args[1:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, stdout, stderr
	// The window owns the writes of the command and of every process it
	// starts, also of one that goes on in the background after it
	// returns; any other writer is the user's.
	c.Env = append(os.Environ(), capture.WindowEnv+"="+id)
	runErr := c.Run()
	reason := ""
	if runErr != nil {
		reason = index.ReasonFailed
	}
	if _, err := ws.Daemon().CloseWindow(id, reason); err != nil {
		return fmt.Errorf("the command ran, but closing its window failed: %w", err)
	}
	var ee *exec.ExitError
	switch {
	case runErr == nil:
		return nil
	case errors.As(runErr, &ee):
		code := ee.ExitCode()
		if code < 0 {
			code = 128 + 9 // killed by a signal
		}
		return &exitError{code: code, err: fmt.Errorf("%s exited with code %d", o.Args[0], code), silent: true}
	default:
		return &exitError{code: 127, err: fmt.Errorf("run %s: %w", o.Args[0], runErr)}
	}
}
