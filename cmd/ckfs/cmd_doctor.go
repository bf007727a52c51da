package main

import (
	"context"
	"fmt"
	"io"

	"github.com/ckfs-dev/ckfs/doctor"
	"github.com/ckfs-dev/ckfs/ui"
	"github.com/spf13/cobra"
)

// doctorOptions are ckfs doctor's.
type doctorOptions struct {
	workspaceArg
	JSON bool
}

func newDoctorCmd() *cobra.Command {
	var o doctorOptions
	cmd := &cobra.Command{
		Use:   "doctor [DIR]",
		Short: "Check everything a mount needs and explain how to fix what is missing",
		Long: `Check /dev/fuse, the permission to mount (root, or fusermount3 from the
fuse3 package), kernel FUSE passthrough, the configuration file, the store
directory and its permissions, and the workspace DIR (default: the current
directory): a mount whose daemon is gone, a dead daemon, an unfinished
rewind, a shell still in the directory under the mount. Each problem comes with the command that fixes it. Exit code 1
when a check fails.`,
		Example: "  ckfs doctor\n  ckfs doctor ~/src/app --json",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.fill(cmd, args); err != nil {
				return err
			}
			return runDoctor(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	return cmd
}

// runDoctor runs every check and prints them.
func runDoctor(ctx context.Context, o doctorOptions, stdout io.Writer) error {
	ds := doctor.Diagnose(o.Dir, o.Store)
	failed := 0
	for _, d := range ds {
		if d.Status == "fail" {
			failed++
		}
	}
	if o.JSON {
		ui.JSON(stdout, ds)
	} else {
		ui.Diagnoses(stdout, ds)
	}
	if failed > 0 {
		return &exitError{code: ExitError, err: fmt.Errorf("%d checks failed", failed), silent: o.JSON}
	}
	return nil
}
