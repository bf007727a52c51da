package main

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/ckfs-dev/ckfs/ui"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/spf13/cobra"
)

// bisectOptions are ckfs bisect's.
type bisectOptions struct {
	Store string
	workspace.BisectOptions
	JSON bool
}

func newBisectCmd() *cobra.Command {
	var o bisectOptions
	cmd := &cobra.Command{
		Use:   "bisect --test CMD",
		Short: "Find the tool call that broke a test, without touching the workspace",
		Long: `Binary-search the tool-call windows between a good and a bad checkpoint for
the first one after which the test fails. Each step writes the whole tree
as it was after a window into a scratch directory (the first step all of
it, later steps only what differs) and runs the test there with sh -c;
the workspace itself is only read. Both ends are tested first.

The test's exit code says, as for git bisect run: 0 good, 125 cannot tell
(skip), 1-127 bad, above 127 stop the search. A run over --timeout counts
as bad. CKFS_BISECT_CHECKPOINT holds the checkpoint under test.

--good defaults to the start of the timeline (before the first window),
--bad to its end. A checkpoint is a seq from ckfs log or a window id
(just before that window). At the end it prints the first bad window (its
tool, turn, prompt, command and diff) and the commands that take it out.
Paths the timeline cannot vouch for at a checkpoint (never recorded and
changed since) are left out of its tree, and the step says how many.`,
		Example: "  ckfs bisect --test 'go test ./...'\n  ckfs bisect --test 'make check' --good toolu_01ABC --timeout 2m\n  ckfs bisect --test './run.sh' --dir /tmp/bisect   # keep the last tree tested",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if o.Store, err = storeFlag(cmd); err != nil {
				return err
			}
			return runBisect(cmd.Context(), o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&o.Test, "test", "", "the test command (run with sh -c in the scratch tree)")
	cmd.Flags().StringVar(&o.Good, "good", "", "a checkpoint where the test passes (default: the start of the timeline)")
	cmd.Flags().StringVar(&o.Bad, "bad", "", "a checkpoint where it fails (default: the end of the timeline)")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", 10*time.Minute, "a run longer than this counts as bad")
	cmd.Flags().StringVar(&o.Dir, "dir", "", "write the trees here (an empty or new directory) and keep it; default: a temporary directory, removed")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the steps and the first bad window as JSON")
	cmd.MarkFlagRequired("test")
	return cmd
}

// runBisect searches, printing each step on stderr and the answer on
// stdout.
func runBisect(ctx context.Context, o bisectOptions, stdout, stderr io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	v, err := openView(o.Store, ".")
	if err != nil {
		return err
	}
	o.Output = os.Stderr
	o.Progress = func(s workspace.BisectStep) { ui.BisectStep(stderr, s) }
	res, err := v.Bisect(ctx, o.BisectOptions)
	if err != nil {
		return err
	}
	if o.JSON {
		return ui.JSON(stdout, res)
	}
	return ui.Bisect(stdout, v, res)
}
