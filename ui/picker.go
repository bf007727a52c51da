package ui

import (
	"fmt"
	"strings"

	"github.com/ckfs-dev/ckfs/workspace"
)

// The interactive picker of ckfs rewind -i: a list of turns (marks) and
// the tool windows that wrote, newest first, each window with the files it
// changed; Enter on one offers what can be done there. pickModel is the
// state and its rendering, with no terminal in it (picker_term.go drives a
// terminal with it).

// pickAction is one thing the picker can do at an entry.
type pickAction struct {
	label string
	kind  string // rewind-both, rewind-files, rewind-conversation, preview, revert, back
	entry workspace.LogEntry
}

type pickModel struct {
	entries []workspace.LogEntry
	sel     int          // selected entry
	acts    []pickAction // the actions menu, when open
	asel    int
	chosen  *pickAction // set when the user chose; nil when they quit
	done    bool
}

func newPickModel(entries []workspace.LogEntry) *pickModel {
	var keep []workspace.LogEntry
	for _, e := range entries {
		if e.Kind == "mark" || (e.Kind == "window" && e.Wrote && !e.Open) {
			keep = append(keep, e)
		}
	}
	return &pickModel{entries: keep}
}

// pickActions are what can be done at e.
func pickActions(e workspace.LogEntry) []pickAction {
	var out []pickAction
	add := func(label, kind string) { out = append(out, pickAction{label, kind, e}) }
	if e.Kind == "mark" {
		if e.Session != "" {
			add("Rewind the files and the conversation to this turn", "rewind-both")
		}
		add("Rewind the files only", "rewind-files")
		if e.Session != "" {
			add("Rewind the conversation only (fork it)", "rewind-conversation")
		}
		add("Preview (change nothing)", "preview")
	} else {
		add("Rewind the files to just before this call", "rewind-files")
		add("Revert only this call, keeping everything after it", "revert")
		add("Preview the rewind (change nothing)", "preview")
	}
	add("Back", "back")
	return out
}

// key handles one key: up, down, enter, back (Escape, left) or quit.
func (m *pickModel) key(k string) {
	n, sel := len(m.entries), &m.sel
	if m.acts != nil {
		n, sel = len(m.acts), &m.asel
	}
	switch k {
	case "up":
		if *sel > 0 {
			*sel--
		}
	case "down":
		if *sel < n-1 {
			*sel++
		}
	case "back":
		if m.acts == nil {
			m.done = true
		}
		m.acts = nil
	case "quit":
		m.done = true
	case "enter":
		switch {
		case n == 0:
			m.done = true
		case m.acts == nil:
			m.acts, m.asel = pickActions(m.entries[m.sel]), 0
		case m.acts[m.asel].kind == "back":
			m.acts = nil
		default:
			a := m.acts[m.asel]
			m.chosen, m.done = &a, true
		}
	}
}

// view renders the picker in at most height lines of width columns.
func (m *pickModel) view(width, height int) string {
	var lines []string
	cur := 0
	if m.acts != nil {
		e := m.entries[m.sel]
		lines = append(lines, "ckfs rewind: "+entryTitle(e), "")
		for i, a := range m.acts {
			lines = append(lines, pointer(i == m.asel)+a.label)
		}
		cur = 2 + m.asel
	} else {
		lines = append(lines, "ckfs rewind: choose a turn or a tool call (newest first)", "")
		if len(m.entries) == 0 {
			lines = append(lines, "  nothing to rewind yet")
		}
		for i, e := range m.entries {
			if i == m.sel {
				cur = len(lines)
			}
			indent := ""
			if e.Kind == "window" {
				indent = "  "
			}
			lines = append(lines, pointer(i == m.sel)+indent+entryTitle(e))
			if e.Kind == "window" {
				lines = append(lines, "      "+entryFiles(e, width-6))
			}
		}
	}
	help := "↑/↓ move  enter choose  esc back  q quit"
	body := height - 1
	top := 0
	if cur >= body {
		top = cur - body + 2
	}
	if top+body > len(lines) {
		top = max(0, len(lines)-body)
	}
	lines = lines[top:min(len(lines), top+body)]
	for i, l := range lines {
		if r := []rune(l); len(r) > width {
			lines[i] = string(r[:width-1]) + "…"
		}
	}
	return strings.Join(lines, "\r\n") + "\r\n" + help
}

func pointer(on bool) string {
	if on {
		return "> "
	}
	return "  "
}

// entryTitle is an entry's one-line name.
func entryTitle(e workspace.LogEntry) string {
	when := e.Time.Local().Format("15:04:05")
	if e.Kind == "mark" {
		return fmt.Sprintf("turn %d  %s  %q", e.Mark, when, Trunc(e.Label, 60))
	}
	return strings.Join(strings.Fields(fmt.Sprintf("call %s  %s  %s  %s", e.ID, e.Tool, when, Trunc(e.Label, 50))), " ")
}

// entryFiles lists a window's files with their changes, in one line.
func entryFiles(e workspace.LogEntry, width int) string {
	code := map[string]string{"added": "A", "deleted": "D", "modified": "M", "mode": "m", "type": "T", "skipped": "!"}
	var parts []string
	for _, f := range e.Files {
		parts = append(parts, code[f.Status]+" "+f.Path)
	}
	s := strings.Join(parts, ", ")
	if r := []rune(s); width > 1 && len(r) > width {
		s = string(r[:width-1]) + "…"
	}
	return s
}
