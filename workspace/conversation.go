package workspace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/ckfs-dev/ckfs/session"
	"github.com/ckfs-dev/ckfs/transcript"
	"github.com/google/uuid"
)

// ConvPlan is a conversation rewind: a fork of ckfs's session log and of
// the agent's transcript at a mark's conversation position. Neither
// original is touched; nothing here reads or writes the file timeline.
type ConvPlan struct {
	Mark       int              `json:"mark"`
	Mode       string           `json:"mode"`
	Parent     string           `json:"parent_session"`
	Child      string           `json:"session"` // the new session id (both forks)
	Events     int              `json:"session_events"`
	Transcript *transcript.Fork `json:"transcript,omitempty"`
	Summarizer string           `json:"summarizer,omitempty"`
	Written    bool             `json:"written"`
	Empty      bool             `json:"empty,omitempty"` // nothing was said yet at the mark

	session *session.ForkPlan `json:"-"`
	coord   *session.Coord
}

// SummaryPlaceholder stands in for the summary until the summarizer runs.
const SummaryPlaceholder = "(summary)"

// PlanConversation plans the fork at mark m. It refuses a mark without a
// conversation position, and a position that is not a clean boundary in
// either log (naming the nearest clean ones).
func PlanConversation(store string, m *session.Mark, mode, summary string, now time.Time) (*ConvPlan, error) {
	c := m.Conversation
	if c == nil {
		return nil, Errorf(ErrUsage, "mark %d has no conversation position (it was made with no agent session, or by an agent whose conversation ckfs cannot fork, such as OpenCode): only --files can use it", m.Mark)
	}
	p := &ConvPlan{Mark: m.Mark, Mode: mode, Parent: c.Session, Child: uuid.NewString(), coord: c}
	if c.Transcript != "" && c.Lines == 0 {
		p.Empty = true
		return p, nil
	}
	if summary == "" {
		summary = SummaryPlaceholder
	}
	sp, err := session.PlanFork(store, c.Session, p.Child, c.Seq, mode, summary, now)
	if err != nil {
		var ue *session.UncleanError
		if errors.As(err, &ue) {
			return nil, Errorf(ErrRefused, "%v", err)
		}
		return nil, err
	}
	p.session, p.Events = sp, len(sp.Events)
	if c.Transcript != "" {
		t, err := transcript.Load(c.Transcript, c.Agent)
		if err != nil {
			return nil, fmt.Errorf("%v: the agent's conversation cannot be forked (ckfs's own session log can: it is in %s)", err, session.Dir(store))
		}
		if c.Prefix != "" && (int64(len(t.Lines)) < c.Lines || t.PrefixHash(int(c.Lines)) != c.Prefix) {
			return nil, Errorf(ErrRefused, "transcript %s no longer holds what mark %d pointed at (its first %d lines changed since): the conversation cannot be forked there safely", c.Transcript, m.Mark, c.Lines)
		}
		if !t.Said(int(c.Lines)) {
			// Only metadata (a summary, a file-history snapshot) came
			// before the mark's prompt: nothing had been said yet.
			p.Empty, p.session, p.Events = true, nil, 0
			return p, nil
		}
		f, err := t.Fork(int(c.Lines), transcript.ForkOptions{Mode: mode, Summary: summary, Child: p.Child, Now: now})
		if err != nil {
			var ue *transcript.UncleanError
			if errors.As(err, &ue) {
				return nil, Errorf(ErrRefused, "%v", err)
			}
			return nil, err
		}
		p.Transcript = f
	}
	return p, nil
}

// Apply runs the summarizer if the mode needs one, then writes the
// transcript fork and the session log fork.
func (p *ConvPlan) Apply(store, summarizer string, now time.Time) error {
	if p.Empty {
		return nil
	}
	if p.Mode != session.ModeCut {
		if summarizer == "" {
			return Errorf(ErrUsage, "--%s needs a summarizer: set [conversation] summarizer in the configuration file, or pass --summarizer CMD", p.Mode)
		}
		text, err := summarize(summarizer, p.SummaryInput())
		if err != nil {
			return err
		}
		p.Summarizer = summarizer
		// Plan again with the real summary (same child id).
		c := *p.coord
		sp, err := session.PlanFork(store, c.Session, p.Child, c.Seq, p.Mode, text, now)
		if err != nil {
			return err
		}
		p.session = sp
		if c.Transcript != "" {
			t, err := transcript.Load(c.Transcript, c.Agent)
			if err != nil {
				return err
			}
			if p.Transcript, err = t.Fork(int(c.Lines), transcript.ForkOptions{Mode: p.Mode, Summary: text, Child: p.Child, Now: now}); err != nil {
				return err
			}
		}
	}
	if p.Transcript != nil {
		if err := p.Transcript.Write(); err != nil {
			return err
		}
	}
	if err := p.session.Write(store); err != nil {
		return err
	}
	p.Written = true
	return nil
}

// SummaryInput is what the summarizer reads: the agent transcript lines
// the summary stands for, or ckfs's own events when there is no transcript.
func (p *ConvPlan) SummaryInput() []byte {
	if p.Transcript != nil {
		return p.Transcript.Range
	}
	var b bytes.Buffer
	for _, e := range p.session.Dropped {
		line, _ := json.Marshal(e)
		b.Write(append(line, '\n'))
	}
	return b.Bytes()
}

// summarize runs the summarizer command with the range on stdin and
// returns what it prints.
func summarize(command string, input []byte) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, "sh", "-c", command)
	c.Stdin = bytes.NewReader(input)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Run(); err != nil {
		return "", fmt.Errorf("summarizer %q failed: %v: %s (nothing was forked)", command, err, strings.TrimSpace(errb.String()))
	}
	text := strings.TrimSpace(out.String())
	if text == "" {
		return "", fmt.Errorf("summarizer %q printed nothing (nothing was forked)", command)
	}
	return text, nil
}
