package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ckfs-dev/ckfs/rewind"
	"github.com/ckfs-dev/ckfs/ui"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/spf13/cobra"
)

// revertOptions are ckfs revert's.
type revertOptions struct {
	Store    string // --store, or "" to find it from the current directory
	Windows  []string
	Paths    []string
	Exclude  []string
	Conflict string // refuse, markers or skip
	Force    bool
	DryRun   bool
	JSON     bool
	Diff     bool
	Limit    int
}

func newRevertCmd() *cobra.Command {
	var o revertOptions
	cmd := &cobra.Command{
		Use:   "revert WINDOW... [-- PATH...]",
		Short: "Take the changes of chosen tool windows out, keeping everything done since",
		Long: `Undo what the chosen windows changed while keeping every change made after
them, by later windows or by you. For each file a window changed: if it is
as the window left it, it goes back to what it was before the window; if
it changed since, the window's change is taken out of it by a three-way
merge (the window's pre-image, its post-image, and the file now), which
keeps the later changes. Where a later change touched the same lines, or
the file is binary, or a file the window created or deleted changed since,
that is a conflict: the revert is refused (exit code 3) with the
conflicting places shown, unless --conflict=markers, which writes both
sides into text files between <<<<<<< and >>>>>>> lines for you to edit.

Windows are reverted newest first. Paths after -- restrict the revert to
those paths (globs, as for ckfs rewind). A revert is a rewind: it has the
same checks (a change ckfs never recorded is never overwritten without
--force), is journaled, and ckfs rewind --files --undo undoes it.`,
		Example: `  ckfs revert toolu_01ABC              # take that tool call's changes out
  ckfs revert --dry-run toolu_01ABC    # what it would do, and the conflicts
  ckfs revert toolu_01A toolu_01B -- src/   # two windows, only under src/
  ckfs revert --conflict=markers call_07   # write conflicts into the files
  ckfs revert --conflict=skip call_07      # revert what comes out cleanly, list the rest
  ckfs revert --exclude go.sum --exclude 'vendor' call_07`,
		Args: func(cmd *cobra.Command, args []string) error {
			n := len(args)
			if d := cmd.ArgsLenAtDash(); d >= 0 {
				n = d
			}
			if n == 0 {
				return workspace.Errorf(workspace.ErrUsage, "name at least one window to revert (ckfs log lists them)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			o.Windows = args
			if d := cmd.ArgsLenAtDash(); d >= 0 {
				o.Windows, o.Paths = args[:d], args[d:]
			}
			if o.Store, err = storeFlag(cmd); err != nil {
				return err
			}
			return runRevert(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Conflict, "conflict", "refuse", "what a conflict does: refuse (nothing is changed), markers (write both sides into the file) or skip (leave that file as it is, revert the rest)")
	f.StringArrayVar(&o.Exclude, "exclude", nil, "leave out paths at or under this glob (repeatable)")
	f.BoolVar(&o.Force, "force", false, "overwrite changes ckfs never recorded (they are captured first)")
	f.BoolVar(&o.DryRun, "dry-run", false, "show what the revert would do; change nothing")
	f.BoolVar(&o.JSON, "json", false, "print the plan, conflicts and checks as JSON")
	f.BoolVarP(&o.Diff, "diff", "p", false, "show each file's diff and every conflicting place")
	f.IntVar(&o.Limit, "limit", 50, "list at most N files (0: all)")
	return cmd
}

// runRevert takes the chosen windows' changes out (or previews it).
func runRevert(ctx context.Context, o revertOptions, out io.Writer) error {
	if o.Conflict != "refuse" && o.Conflict != "markers" && o.Conflict != "skip" {
		return workspace.Errorf(workspace.ErrUsage, "--conflict=%s: use refuse, markers or skip", o.Conflict)
	}
	ws, err := workspace.Locate(o.Store, ".")
	if err != nil {
		return err
	}
	req := rewind.Request{Revert: o.Windows, Paths: o.Paths, Markers: o.Conflict == "markers", SkipConflicts: o.Conflict == "skip", Exclude: o.Exclude, Force: o.Force, Apply: !o.DryRun, Diff: o.Diff, Describe: described(o.JSON, o.Limit)}
	outcome, _, err := ws.Rewind(req, nil)
	ui.Outcome(out, outcome, ui.OutcomeText{Verb: "revert", Done: "reverted", What: "window " + strings.Join(o.Windows, ", "), Apply: "Run it without --dry-run to revert"},
		o.Paths, o.JSON, o.Diff, o.Limit)
	if err != nil {
		var re *rewind.RefusedError
		if errors.As(err, &re) {
			return &exitError{code: ExitRefused, err: errors.New("revert refused; nothing was changed (see the checks above)"), silent: o.JSON}
		}
		return err
	}
	if !outcome.Applied && outcome.Report.Refused() {
		return &exitError{code: ExitRefused, err: fmt.Errorf("this revert would be refused (see the checks above); nothing was changed"), silent: o.JSON}
	}
	return nil
}
