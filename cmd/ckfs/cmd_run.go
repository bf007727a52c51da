package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/google/uuid"
	"github.com/spf13/cobra"
)

func newRunCmd() *cobra.Command {
	var label, tool string
	cmd := &cobra.Command{
		Use:   "run [--label TEXT] -- CMD [ARGS...]",
		Short: "Run one command inside its own window",
		Long: `Open a window, run the command with this terminal, close the window, and
exit with the command's exit code. This is the integration for agents
without hooks: wrap each tool call, or the whole agent, in ckfs run.`,
		Example: `  ckfs run -- sed -i 's/foo/bar/' main.go
  ckfs run --label "format" -- gofmt -w .`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, _, err := findStore(cmd, ".")
			if err != nil {
				return err
			}
			if label == "" {
				label = strings.Join(args, " ")
			}
			if tool == "" {
				tool = filepath.Base(args[0])
			}
			id := "run-" + uuid.NewString()[:8]
			if _, err := workspace.Call(store, workspace.Request{Op: "open", ID: id, Tool: tool, Label: label}); err != nil {
				return err
			}
			c := exec.CommandContext(cmd.Context(), args[0], args[1:]...)
			c.Stdin, c.Stdout, c.Stderr = os.Stdin, cmd.OutOrStdout(), cmd.ErrOrStderr()
			runErr := c.Run()
			if _, err := workspace.Call(store, workspace.Request{Op: "close", ID: id}); err != nil {
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
				return &exitError{code: code, err: fmt.Errorf("%s exited with code %d", args[0], code), silent: true}
			default:
				return &exitError{code: 127, err: fmt.Errorf("run %s: %w", args[0], runErr)}
			}
		},
	}
	cmd.Flags().StringVar(&label, "label", "", "label to record (default: the command line)")
	cmd.Flags().StringVar(&tool, "tool", "", "tool name to record (default: the command's name)")
	cmd.Flags().SetInterspersed(false)
	return cmd
}
