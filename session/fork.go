package session

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/ckfs-dev/ckfs/internal/durable"
)

// ForkPlan is a fork of a session log, before it is written.
type ForkPlan struct {
	Parent  string  // parent session id
	Child   string  // the new session id
	Cut     uint64  // the parent's clean boundary
	Mode    string  // ModeCut, ModeSummarizeFrom, ModeSummarizeUpTo
	Dropped []Event // what the summary stands for (summarize modes), or what the cut drops
	Events  []Event // the child's events, numbered from 1
}

// PlanFork plans the fork of parent's log at cut. ModeCut keeps events
// 1..cut; ModeSummarizeFrom keeps them and adds one summary for the rest;
// ModeSummarizeUpTo replaces 1..cut by one summary and keeps the rest.
// summary is the summary text (ignored by ModeCut). The child's first
// event is the fork record (parent, cut, mode). The parent is not touched.
func PlanFork(store, parent, child string, cut uint64, mode, summary string, now time.Time) (*ForkPlan, error) {
	path := Path(store, parent)
	evs, tail, err := Load(path)
	if err != nil {
		return nil, err
	}
	if tail != nil && !tail.Torn {
		return nil, tail
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("no session %q in %s: ckfs log --marks lists the sessions marks refer to", parent, Dir(store))
	}
	last := uint64(0)
	if n := len(evs); n > 0 {
		last = evs[n-1].Seq
	}
	if cut > last {
		return nil, fmt.Errorf("session %s has %d events; cannot cut at %d", parent, last, cut)
	}
	if !Clean(evs, cut) {
		b, a := nearestClean(int64(cut), int64(last), func(p int64) bool { return Clean(evs, uint64(p)) })
		return nil, &UncleanError{What: "session " + parent, Cut: int64(cut), Before: b, After: a}
	}
	if !ValidID(child) {
		return nil, fmt.Errorf("session id %q is not valid", child)
	}
	c := cut
	p := &ForkPlan{Parent: parent, Child: child, Cut: cut, Mode: mode}
	events := []Event{{Kind: KindFork, Parent: parent, Cut: &c, Mode: mode}}
	var kept, dropped []Event
	for _, e := range evs {
		if e.Seq <= cut {
			kept = append(kept, e)
		} else {
			dropped = append(dropped, e)
		}
	}
	switch mode {
	case ModeCut:
		events = append(events, kept...)
		p.Dropped = dropped
	case ModeSummarizeFrom:
		events = append(events, kept...)
		events = append(events, Event{Kind: KindSummary, Text: summary})
		p.Dropped = dropped
	case ModeSummarizeUpTo:
		events = append(events, Event{Kind: KindSummary, Text: summary})
		events = append(events, dropped...)
		p.Dropped = kept
	default:
		return nil, fmt.Errorf("fork mode %q", mode)
	}
	for i := range events {
		events[i].V, events[i].Seq = Version, uint64(i+1)
		if events[i].Time.IsZero() {
			events[i].Time = now.UTC()
		}
	}
	p.Events = events
	return p, nil
}

// Write writes the child's log durably; it refuses to overwrite a log.
func (p *ForkPlan) Write(store string) error {
	path := Path(store, p.Child)
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("session %s already exists", p.Child)
	}
	if err := os.MkdirAll(Dir(store), 0o700); err != nil {
		return err
	}
	var b []byte
	for i := range p.Events {
		if err := p.Events[i].Validate(); err != nil {
			return fmt.Errorf("fork %s: event %d: %w", p.Child, i+1, err)
		}
		line, err := json.Marshal(&p.Events[i])
		if err != nil {
			return err
		}
		b = append(append(b, line...), '\n')
	}
	return durable.WriteFile(path, b, 0o600)
}
