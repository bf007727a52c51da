package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/ckfs-dev/ckfs/workspace"
)

func TestPickModel(t *testing.T) {
	at := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	entries := []workspace.LogEntry{
		{Kind: "mark", Mark: 2, Label: "second", Session: "s", Time: at},
		{Kind: "window", ID: "w3", Wrote: true, Time: at, Files: []workspace.LogFile{{Path: "a.go", Status: "modified"}}},
		{Kind: "window", ID: "empty", Time: at}, // wrote nothing: not listed
		{Kind: "outside", Time: at},             // not a place to go to
		{Kind: "mark", Mark: 1, Label: "first", Time: at},
	}
	m := newPickModel(entries)
	if len(m.entries) != 3 {
		t.Fatalf("listed %d entries, want the marks and the window that wrote", len(m.entries))
	}
	if v := m.view(80, 20); !strings.Contains(v, "> turn 2") || !strings.Contains(v, "M a.go") {
		t.Fatalf("first view:\n%s", v)
	}
	m.key("up") // stays at the top
	m.key("down")
	m.key("enter")
	if v := m.view(80, 20); !strings.Contains(v, "> Rewind the files to just before this call") || !strings.Contains(v, "Revert only this call") {
		t.Fatalf("a window's menu:\n%s", v)
	}
	m.key("back")
	m.key("down")
	m.key("enter") // mark 1 has no conversation: no conversation actions
	if v := m.view(80, 20); strings.Contains(v, "conversation") {
		t.Fatalf("a mark without a conversation offers one:\n%s", v)
	}
	m.key("down")
	m.key("enter")
	if !m.done || m.chosen == nil || m.chosen.kind != "preview" || m.chosen.entry.Mark != 1 {
		t.Fatalf("chosen %+v", m.chosen)
	}
	q := newPickModel(entries)
	q.key("quit")
	if !q.done || q.chosen != nil {
		t.Fatal("quit chose something")
	}
	// A small screen scrolls to keep the selection in view.
	many := make([]workspace.LogEntry, 30)
	for i := range many {
		many[i] = workspace.LogEntry{Kind: "mark", Mark: 30 - i, Time: at}
	}
	s := newPickModel(many)
	for range 25 {
		s.key("down")
	}
	if v := s.view(40, 8); !strings.Contains(v, "> turn 5") || strings.Count(v, "\n") > 7 {
		t.Fatalf("scrolled view:\n%s", v)
	}
}
