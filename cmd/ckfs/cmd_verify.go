package main

import (
	"fmt"
	"io"
	"time"

	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/spf13/cobra"
)

func newVerifyCmd() *cobra.Command {
	var asJSON, repair bool
	cmd := &cobra.Command{
		Use:   "verify [DIR]",
		Short: "Check the store: rehash every object, check every reference",
		Long: `Rehash every object, check that every record's object exists, and report a
torn or bad timeline line, temp files left by a crash, unfinished rewinds,
and the checkpoints that can no longer be fully restored. Safe while
mounted. --repair recovers a corrupt object from any workspace file that
still holds its content (and moves one no file holds to quarantine/ in the
store), removes orphan temp files, and moves every bad timeline line (a
torn append, garbage, a duplicate seq, an oversized line) verbatim to
quarantine/ in the store so that the good records load again (when the
store is not in use); it reads the workspace but never writes it. Exit
code 1 when something is wrong.`,
		Example: "  ckfs verify\n  ckfs verify --repair --json",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			store, _, err := findStore(cmd, dir)
			if err != nil {
				return err
			}
			rep, err := workspace.VerifyStore(store, repair, time.Now(),
				newProgress(cmd.ErrOrStderr(), "verifying objects", func() int64 { return workspace.ObjectBytes(store) }))
			if err != nil {
				return err
			}
			printVerify(cmd.OutOrStdout(), rep, asJSON)
			if !rep.Clean && !repair {
				return &exitError{code: ExitError, err: fmt.Errorf("the store %s has problems (see above); ckfs verify --repair fixes what can be fixed", store), silent: asJSON}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&repair, "repair", false, "recover or quarantine corrupt objects and bad timeline lines, remove orphan temp files")
	return cmd
}

func printVerify(out io.Writer, r *workspace.VerifyReport, asJSON bool) {
	if asJSON {
		printJSON(out, r)
		return
	}
	fmt.Fprintf(out, "store %s: %d objects (%d bytes), %d records\n", r.Store, r.Objects, r.Bytes, r.Records)
	list := func(what string, items []string) {
		for _, i := range items {
			fmt.Fprintf(out, "  %s: %s\n", what, i)
		}
	}
	list("corrupt object", r.Corrupt)
	list("missing object", r.Missing)
	if r.Tail != "" {
		fmt.Fprintf(out, "  timeline: %s\n", r.Tail)
	}
	list("conversation log", r.ConvTails)
	list("orphan temp file", r.OrphanTemps)
	list("unfinished rewind (ckfs rewind --rollback or --abandon)", r.PendingJournals)
	if len(r.Unrestorable) > 0 {
		fmt.Fprintf(out, "  checkpoints no longer fully restorable: %v\n", r.Unrestorable)
	}
	list("repaired", r.Repaired)
	if r.Clean {
		fmt.Fprintln(out, "ok: every object verifies and every reference resolves")
	}
}
