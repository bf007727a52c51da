package ui

import (
	"fmt"
	"io"

	"github.com/ckfs-dev/ckfs/session"
	"github.com/ckfs-dev/ckfs/workspace"
)

// ConvPlan prints a conversation fork, done or previewed.
func ConvPlan(out io.Writer, p *workspace.ConvPlan) {
	if p.Empty {
		fmt.Fprintf(out, "conversation: it was empty at mark %d (before the session's first prompt): start a new session rather than resuming one\n", p.Mark)
		return
	}
	verb := "would fork"
	if p.Written {
		verb = "forked"
	}
	what := map[string]string{session.ModeCut: "cut at", session.ModeSummarizeFrom: "summarizing from", session.ModeSummarizeUpTo: "summarizing up to"}[p.Mode]
	fmt.Fprintf(out, "%s the conversation, %s mark %d: session %s -> new session %s\n", verb, what, p.Mark, p.Parent, p.Child)
	fmt.Fprintf(out, "  ckfs session log: %d events\n", p.Events)
	if t := p.Transcript; t != nil {
		fmt.Fprintf(out, "  %s transcript: keeps %d lines, %s %d, into %s\n", t.Agent, t.Kept, map[bool]string{true: "summarizes", false: "drops"}[p.Mode != session.ModeCut], t.Dropped, t.Path)
		if p.Written {
			fmt.Fprintf(out, "resume it with: ckfs agent %s   (capture goes on; the original session is unchanged)\n", t.Resume)
		}
	} else {
		fmt.Fprintln(out, "  no agent transcript is known for this session")
	}
	if !p.Written {
		fmt.Fprintln(out, "preview only: add --conversation to fork it.")
	}
}
