package workspace

import (
	"fmt"
	"time"

	"github.com/ckfs-dev/ckfs/config"
	"github.com/ckfs-dev/ckfs/session"
)

// MarkRewind is a rewind to a mark, planned and checked before either side
// is written. Each side uses its own timeline: the files go to the mark's
// checkpoint (View.Rewind), the conversation forks at the mark's position.
type MarkRewind struct {
	Mark         *session.Mark
	Preview      bool // nothing is written
	Files        bool // the file side is done (or previewed)
	Conversation bool // the conversation side is done (or previewed)
	Conv         *ConvPlan
	ConvErr      error // why the conversation cannot fork; only a preview gets this far with one
	summarizer   string
}

// PlanMarkRewind plans a rewind to the mark named name: the files, the
// conversation (forked in mode, a session.Mode*), both, or with neither a
// preview of both, as dryRun is. summarizer "" is the configured one. It
// refuses, before anything is written, a conversation that cannot fork
// and a summarizing fork without a summarizer.
func (v *View) PlanMarkRewind(name string, files, conversation, dryRun bool, mode, summarizer string, now time.Time) (*MarkRewind, error) {
	m, err := v.FindMark(name)
	if err != nil {
		return nil, err
	}
	preview := (!files && !conversation) || dryRun
	r := &MarkRewind{Mark: m, Preview: preview, Files: files || preview, Conversation: conversation || preview, summarizer: summarizer}
	if r.summarizer == "" {
		if cfg, _, err := config.For(v.Meta.Root); err == nil {
			r.summarizer = cfg.Conversation.Summarizer
		}
	}
	if !r.Conversation {
		return r, nil
	}
	r.Conv, r.ConvErr = PlanConversation(v.Store, m, mode, "", now)
	switch {
	case r.ConvErr != nil && !preview:
		return nil, r.ConvErr
	case r.Conv != nil && mode != session.ModeCut && r.summarizer == "" && !preview:
		return nil, Errorf(ErrUsage, "--%s needs a summarizer: set [conversation] summarizer in the configuration file, or pass --summarizer CMD", mode)
	}
	return r, nil
}

// ForkConversation writes the conversation side (a preview writes
// nothing); filesDone says the file side was written already, which an
// error then says.
func (r *MarkRewind) ForkConversation(store string, filesDone bool, now time.Time) error {
	if r.Preview || !r.Conversation || r.ConvErr != nil {
		return nil
	}
	err := r.Conv.Apply(store, r.summarizer, now)
	if err != nil && filesDone {
		err = fmt.Errorf("the files were rewound (ckfs rewind --files --undo puts them back), but the conversation was not forked: %w", err)
	}
	return err
}
