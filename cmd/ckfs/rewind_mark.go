package main

import (
	"fmt"
	"io"
	"time"

	"github.com/ckfs-dev/ckfs/config"
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
	m, err := workspace.FindMark(v.Store, o.Mark)
	if err != nil {
		return err
	}
	mode := session.ModeCut
	switch {
	case o.SumFrom:
		mode = session.ModeSummarizeFrom
	case o.SumUpTo:
		mode = session.ModeSummarizeUpTo
	}
	preview := (!o.Files && !o.Conversation) || o.DryRun
	doFiles := o.Files || preview
	doConv := o.Conversation || preview
	summarizer := o.Summarizer
	if summarizer == "" {
		if cfg, _, err := config.For(v.Meta.Root); err == nil {
			summarizer = cfg.Conversation.Summarizer
		}
	}
	now := time.Now()
	var conv *workspace.ConvPlan
	var convErr error
	if doConv {
		conv, convErr = workspace.PlanConversation(v.Store, m, mode, "", now)
		if convErr != nil && !preview {
			return convErr // refuse before a file is touched
		}
		if conv != nil && mode != session.ModeCut && summarizer == "" && !preview {
			return workspace.Errorf(workspace.ErrUsage, "--%s needs a summarizer: set [conversation] summarizer in the configuration file, or pass --summarizer CMD", mode)
		}
	}
	result := map[string]any{"mark": m}
	if doFiles {
		fo := o
		fo.Files = o.Files && !preview
		fo.JSON = false
		w := out
		if o.JSON {
			w = io.Discard
		}
		outcome, err := rewindFiles(v, fo, m.Files, fmt.Sprintf("mark %d (checkpoint %d)", m.Mark, m.Files), w)
		result["files"] = outcome
		if err != nil {
			if o.JSON {
				ui.JSON(out, result)
			}
			return err
		}
	} else if !o.JSON {
		fmt.Fprintln(out, "files: left as they are (rewind them with --files)")
	}
	if doConv {
		if convErr != nil {
			fmt.Fprintf(out, "conversation: cannot fork at mark %d: %v\n", m.Mark, convErr)
			result["conversation_error"] = convErr.Error()
		} else {
			if !preview {
				if err := conv.Apply(v.Store, summarizer, now); err != nil {
					if o.Files {
						err = fmt.Errorf("the files were rewound (ckfs rewind --files --undo puts them back), but the conversation was not forked: %w", err)
					}
					return err
				}
			}
			result["conversation"] = conv
			if !o.JSON {
				ui.ConvPlan(out, conv)
			}
		}
	} else if !o.JSON {
		fmt.Fprintln(out, "conversation: left as it is (fork it with --conversation)")
	}
	if o.JSON {
		return ui.JSON(out, result)
	}
	return nil
}
