package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ckfs-dev/ckfs/ui"
	"github.com/ckfs-dev/ckfs/verify"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/spf13/cobra"
)

// verifyOptions are ckfs verify's.
type verifyOptions struct {
	workspaceArg
	JSON   bool
	Repair bool
}

func newVerifyCmd() *cobra.Command {
	var o verifyOptions
	cmd := &cobra.Command{
		Use:   "verify [DIR]",
		Short: "Check the store: rehash every object, check every reference",
		Long: `Rehash every object, check that every record's object exists, and report a
torn or bad timeline line, a pack whose index is damaged, temp files left
by a crash, unfinished rewinds, and the checkpoints that can no longer be
fully restored. Safe while mounted. --repair recovers a corrupt or missing
object from any workspace file that still holds its content (and moves a
corrupt one no file holds, and a damaged pack, to quarantine/ in the
store), removes orphan temp files, and moves every bad timeline line (a
torn append, garbage, a duplicate seq, an oversized line) verbatim to
quarantine/ in the store so that the good records load again (when the
store is not in use); it reads the workspace but never writes it. Exit
code 1 when something is wrong.`,
		Example: "  ckfs verify\n  ckfs verify --repair --json",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.fill(cmd, args); err != nil {
				return err
			}
			return runVerify(cmd.Context(), o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&o.Repair, "repair", false, "recover or quarantine corrupt objects and bad timeline lines, remove orphan temp files")
	return cmd
}

// runVerify checks the store and reports (and with Repair mends) what is wrong.
func runVerify(ctx context.Context, o verifyOptions, stdout, stderr io.Writer) error {
	ws, err := workspace.Locate(o.Store, o.Dir)
	if err != nil {
		return err
	}
	store := ws.Store
	rep, err := verify.Store(store, o.Repair, time.Now(),
		ui.NewProgress(stderr, "verifying objects", func() int64 { return workspace.ObjectBytes(ws.Store) }))
	if err != nil {
		return err
	}
	if o.JSON {
		ui.JSON(stdout, rep)
	} else {
		ui.Verify(stdout, rep)
	}
	if o.Repair && len(rep.Unrepaired) > 0 {
		return &exitError{code: ExitError, err: fmt.Errorf("the store %s is not whole after the repair: %s", store, strings.Join(rep.Unrepaired, "; ")), silent: o.JSON}
	}
	if !rep.Clean && !o.Repair {
		return &exitError{code: ExitError, err: fmt.Errorf("the store %s has problems (see above); ckfs verify --repair fixes what can be fixed", store), silent: o.JSON}
	}
	return nil
}
