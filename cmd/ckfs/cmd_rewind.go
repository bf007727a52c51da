package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ckfs-dev/ckfs/rewind"
	"github.com/ckfs-dev/ckfs/ui"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/spf13/cobra"
)

// rewindOptions are ckfs rewind's.
type rewindOptions struct {
	Store        string // --store, or "" to find it from the current directory
	To           string
	Last         int
	Undo         bool
	Files        bool
	Conversation bool
	Force        bool
	DryRun       bool
	JSON         bool
	Rollback     string
	Abandon      string
	Mark         string
	SumFrom      bool
	SumUpTo      bool
	Summarizer   string
	Diff         bool     // print each file's diff, not only its +/- counts
	Limit        int      // files listed at most (0: all)
	Paths        []string // only these paths (globs), from after --
	Interactive  bool     // choose in a picker
}

func newRewindCmd() *cobra.Command {
	var o rewindOptions
	cmd := &cobra.Command{
		Use:   "rewind (CHECKPOINT | --to CHECKPOINT | --last N | --undo | --mark M) [--files] [--conversation] [-- PATH...]",
		Short: "Put the workspace back to a checkpoint (preview unless --files)",
		Long: `Rewind the files to a checkpoint: a seq from ckfs log, or a window id
(meaning just before that window), given with --to or alone. --last N is
the state before the N-th most recent window; --undo reverses the last
rewind. --mark M (a turn boundary written by the agent hooks or ckfs
mark) names a moment on both timelines.

--files and --conversation are independent: --files restores the files,
--conversation forks the agent's conversation at the mark into a new
session (the original stays byte for byte; resume the new one with the
command printed), both do both, and with neither the command is a preview
of both that writes nothing. --summarize-from and --summarize-up-to fork
with one summary message standing for everything after, or before, the
mark; the summarizer command ([conversation] summarizer, or --summarizer)
reads the dropped part on stdin and is never run by a preview.
A rewind refuses (exit code 3) when it would overwrite a change ckfs never
recorded, or the user's own edit, unless --force; what it overwrites is
captured first, so ckfs rewind --undo can bring it back.

Paths after -- restrict the file side to those paths and everything under
them (globs as in path.Match, matched against each path and its parent
directories, relative to the workspace root; a pattern without a slash
also matches their base names, so '*.md' is every Markdown file): the
other files stay as
they are, with the same checks. To take one tool call's changes out while
keeping what came after it, see ckfs revert.`,
		Example: `  ckfs rewind --to 14                 # preview
  ckfs rewind 14                      # the same
  ckfs rewind --files --to toolu_01ABC   # files as they were before that tool call
  ckfs rewind --files --last 1           # undo the last tool call's file changes
  ckfs rewind --files --undo             # undo the rewind itself
  ckfs rewind --mark 3                   # preview both sides of turn 3
  ckfs rewind --mark 3 --files --conversation   # both: files and a forked conversation
  ckfs rewind --files --to 14 -- src/api 'docs/*.md'   # only these paths
  ckfs rewind -i                         # choose in a menu
  ckfs rewind --rollback r-1a2b3c4d      # after a rewind that stopped part way`,
		Args: o.args,
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if before := beforeDash(cmd, args); len(before) == 1 {
				o.To, args = before[0], args[1:]
			}
			o.Paths = args
			if o.Store, err = storeFlag(cmd); err != nil {
				return err
			}
			if o.Interactive {
				return runPicker(cmd.Context(), o, cmd.OutOrStdout())
			}
			return runRewind(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.To, "to", "", "checkpoint: a seq or a window id (before that window)")
	f.IntVar(&o.Last, "last", 0, "rewind to before the N-th most recent tool window")
	f.BoolVar(&o.Undo, "undo", false, "reverse the last rewind (refused when files changed since it, unless --force)")
	f.BoolVar(&o.Files, "files", false, "rewind the files (without it: preview)")
	f.BoolVar(&o.Conversation, "conversation", false, "rewind the agent's conversation")
	f.BoolVar(&o.Force, "force", false, "overwrite changes ckfs never recorded and your own edits (they are captured first)")
	f.BoolVar(&o.DryRun, "dry-run", false, "preview even with --files")
	f.BoolVar(&o.JSON, "json", false, "print the plan and checks as JSON")
	f.BoolVarP(&o.Diff, "diff", "p", false, "show each file's diff, not only its +/- counts")
	f.IntVar(&o.Limit, "limit", 50, "list at most N files (0: all)")
	f.BoolVarP(&o.Interactive, "interactive", "i", false, "choose a turn or a tool call, and what to do there, in a menu (a preview or a refusal is paged, then back to the menu)")
	f.StringVar(&o.Rollback, "rollback", "", "put back what rewind OP changed before it stopped part way")
	f.StringVar(&o.Abandon, "abandon", "", "forget the journal of rewind OP, stopped part way, leaving the files as they are (a damaged one is set aside as OP.json.damaged)")
	f.StringVar(&o.Mark, "mark", "", "rewind to mark M (a turn boundary; ckfs log lists marks)")
	f.BoolVar(&o.SumFrom, "summarize-from", false, "--conversation: replace the mark and everything after it with one summary")
	f.BoolVar(&o.SumUpTo, "summarize-up-to", false, "--conversation: replace everything before the mark with one summary")
	f.StringVar(&o.Summarizer, "summarizer", "", "command that summarizes (reads the dropped part on stdin); default: [conversation] summarizer")
	return cmd
}

// runRewind rewinds (or previews, rolls back or abandons) the files, or
// goes to a mark for both sides.
func runRewind(ctx context.Context, o rewindOptions, out io.Writer) error {
	if o.Rollback != "" || o.Abandon != "" || o.Mark != "" {
		v, err := openView(o.Store, ".")
		if err != nil {
			return err
		}
		if o.Mark != "" {
			return runRewindMark(v, o, out)
		}
		op, name := o.Rollback, workspace.OpRollback
		if o.Abandon != "" {
			op, name = o.Abandon, workspace.OpAbandon
		}
		if err := v.JournalOp(name, op); err != nil {
			return err
		}
		fmt.Fprintf(out, "%s of %s done\n", name, op)
		return nil
	}
	if o.Conversation || o.SumFrom || o.SumUpTo {
		return workspace.Errorf(workspace.ErrUsage, "--conversation: a conversation rewind goes to a mark (--mark M), where both timelines were paired; ckfs log lists the marks")
	}
	ws, err := workspace.Locate(o.Store, ".")
	if err != nil {
		return err
	}
	// Undoing puts back what the rewind replaced: a rewind that would
	// overwrite work done since is refused, a preview is not. The target
	// is resolved where the rewind runs, against the timeline it reads.
	spec := &workspace.TargetSpec{To: o.To, Last: o.Last, Undo: o.Undo, Guard: o.Files && !o.DryRun && !o.Force}
	outcome, err := rewindFiles(ws, o, spec, "", out)
	if err == nil && outcome != nil && !outcome.Applied && outcome.Report != nil && outcome.Report.Refused() {
		// A preview is a question: its answer, refused, is exit code 3.
		return &exitError{code: ExitRefused, err: errors.New("this rewind would be refused (see the checks above); nothing was changed"), silent: o.JSON}
	}
	return err
}

// rewindFiles runs (or previews) the file side to the checkpoint spec
// names and prints it; what, when not empty, names the target for people
// instead of the resolved checkpoint.
func rewindFiles(ws *workspace.Workspace, o rewindOptions, spec *workspace.TargetSpec, what string, out io.Writer) (*rewind.Outcome, error) {
	req := rewind.Request{Force: o.Force, Apply: o.Files && !o.DryRun, Paths: o.Paths, Diff: o.Diff, Describe: described(o.JSON, o.Limit)}
	outcome, resolved, err := ws.Rewind(req, spec)
	if what == "" {
		what = resolved
	}
	ui.Outcome(out, outcome, ui.OutcomeText{Verb: "rewind the files to", Done: "rewound the files to", What: what, Apply: "Add --files to rewind the files"},
		o.Paths, o.JSON, o.Diff, o.Limit)
	if err != nil {
		var re *rewind.RefusedError
		if errors.As(err, &re) {
			return outcome, workspace.Errorf(workspace.ErrRefused, "rewind refused; nothing was changed (see the checks above)")
		}
		return outcome, err
	}
	return outcome, nil
}

// described is how many steps of a preview a command prints with what
// they do to each file's lines: those its text lists (limit, 0 for all),
// none for JSON.
func described(asJSON bool, limit int) int {
	switch {
	case asJSON:
		return 0
	case limit == 0:
		return -1
	}
	return limit
}

// args accepts one checkpoint before --, where no flag names the target,
// and paths after it.
func (o *rewindOptions) args(cmd *cobra.Command, args []string) error {
	switch before := beforeDash(cmd, args); {
	case len(before) == 1 && !o.targeted():
		return nil // the checkpoint, as --to gives it
	case len(before) > 0:
		return workspace.Errorf(workspace.ErrUsage, "unexpected argument %q: one checkpoint (ckfs rewind [--files] CHECKPOINT, the same as --to), and paths go after -- (ckfs rewind --files --to N -- PATH...)", before[len(before)-1])
	}
	return nil
}

// targeted reports whether a flag already says where to go (or what else
// to do), so that no argument may name a checkpoint.
func (o *rewindOptions) targeted() bool {
	return o.To != "" || o.Last != 0 || o.Undo || o.Mark != "" || o.Rollback != "" || o.Abandon != "" || o.Interactive
}

// beforeDash is the arguments before --, all of them when there is none.
func beforeDash(cmd *cobra.Command, args []string) []string {
	if d := cmd.ArgsLenAtDash(); d >= 0 {
		return args[:d]
	}
	return args
}
