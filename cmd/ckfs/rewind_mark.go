package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/ckfs-dev/ckfs/rewind"
	"github.com/ckfs-dev/ckfs/session"
	"github.com/ckfs-dev/ckfs/ui"
	"github.com/ckfs-dev/ckfs/workspace"
)

// runRewindMark rewinds to a mark, each side on its own timeline: the
// files to the mark's checkpoint, the conversation by a fork at the mark's
// conversation position. Both sides are checked before either is written;
// the files (the side that can refuse) go first.
func runRewindMark(v *workspace.View, o rewindOptions, out io.Writer) error {
	if o.To != "" || o.Last > 0 || o.Undo {
		return workspace.Errorf(workspace.ErrUsage, "give one of --to, --last, --undo or --mark")
	}
	if o.SumFrom && o.SumUpTo {
		return workspace.Errorf(workspace.ErrUsage, "give --summarize-from or --summarize-up-to, not both")
	}
	mode := session.ModeCut
	switch {
	case o.SumFrom:
		mode = session.ModeSummarizeFrom
	case o.SumUpTo:
		mode = session.ModeSummarizeUpTo
	}
	now := time.Now()
	r, err := v.PlanMarkRewind(o.Mark, o.Files, o.Conversation, o.DryRun, mode, o.Summarizer, now)
	if err != nil {
		return err
	}
	m := r.Mark
	result := markRewindJSON{Mark: m}
	if r.Files {
		fo := o
		fo.Files = o.Files && !r.Preview
		fo.JSON = false
		w := out
		if o.JSON {
			w = io.Discard
		}
		outcome, err := rewindFiles(v.Workspace, fo, &workspace.TargetSpec{To: strconv.FormatUint(m.Files, 10)}, fmt.Sprintf("mark %d (checkpoint %d)", m.Mark, m.Files), w)
		result.Files = outcome
		if err != nil {
			if o.JSON {
				ui.JSON(out, result)
			}
			return err
		}
	} else if !o.JSON {
		fmt.Fprintln(out, "files: left as they are (rewind them with --files)")
	}
	switch {
	case !r.Conversation && !o.JSON:
		fmt.Fprintln(out, "conversation: left as it is (fork it with --conversation)")
	case !r.Conversation:
	case r.ConvErr != nil:
		result.ConversationError = r.ConvErr.Error()
		if !o.JSON {
			fmt.Fprintf(out, "conversation: cannot fork at mark %d: %v\n", m.Mark, r.ConvErr)
		}
	default:
		if err := r.ForkConversation(v.Store, o.Files, now); err != nil {
			return err
		}
		result.Conversation = r.Conv
		if !o.JSON {
			ui.ConvPlan(out, r.Conv)
		}
	}
	if o.JSON {
		if err := ui.JSON(out, result); err != nil {
			return err
		}
	}
	// A preview is a question: its answer, refused, is exit code 3, as
	// for every other preview.
	if fo := result.Files; fo != nil && !fo.Applied && fo.Report != nil && fo.Report.Refused() {
		return &exitError{code: ExitRefused, err: errors.New("this rewind would be refused (see the checks above); nothing was changed"), silent: o.JSON}
	}
	return nil
}

// markRewindJSON is ckfs rewind --mark --json: the mark, what the files
// side did (or would do), and the conversation's fork or why there is none.
type markRewindJSON struct {
	Mark              *session.Mark       `json:"mark"`
	Files             *rewind.Outcome     `json:"files,omitempty"`
	Conversation      *workspace.ConvPlan `json:"conversation,omitempty"`
	ConversationError string              `json:"conversation_error,omitempty"`
}
