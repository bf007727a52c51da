// Package transcript reads coding agents' own conversation transcripts
// (the JSONL files of Claude Code, Codex CLI, Gemini CLI and Qwen Code), finds the clean boundaries
// in them (never between a tool call and its result), and forks one into a
// new session the agent can resume, leaving the original untouched. It
// knows these formats and nothing of ckfs's stores.
package transcript

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"sort"
	"strings"
)

// maxLine bounds one transcript line (tool results can be large).
const maxLine = 64 << 20

// entry is what a fork needs to know about one line.
type entry struct {
	uuid    string   // Claude: the entry's uuid
	parent  string   // Claude: its parentUuid
	refs    []string // metadata that points at other entries (leafUuid, messageId)
	calls   []string // tool calls made on this line
	results []string // tool calls whose results this line carries
	prompt  string   // the user's own text, if the line is a prompt
	session bool     // the line carries the session id
	conv    bool     // a conversation entry (not metadata or display)
}

// Transcript is an agent transcript read into memory.
type Transcript struct {
	Path      string
	Agent     string
	SessionID string
	Lines     [][]byte // complete lines, without newlines
	entries   []entry
}

// Load reads the transcript at path, written by agent (Claude, Codex, …).
func Load(path, agent string) (*Transcript, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, fmt.Errorf("read transcript: %w", err)
	}
	return Parse(path, data, agent)
}

// Parse reads a transcript from data (the contents of path). An
// unterminated last line is being written right now and is left out; a
// line that does not parse anywhere else is an error naming it.
func Parse(path string, data []byte, agent string) (*Transcript, error) {
	d, err := dialectOf(agent)
	if err != nil {
		return nil, err
	}
	t := &Transcript{Path: path, Agent: agent}
	for n := 1; len(data) > 0; n++ {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break // an unterminated line is an append in progress
		}
		line := data[:i]
		data = data[i+1:]
		if len(line) > maxLine {
			return nil, fmt.Errorf("transcript %s: line %d is longer than %d bytes", path, n, maxLine)
		}
		e, err := d.parse(line, &t.SessionID)
		if err != nil {
			return nil, fmt.Errorf("transcript %s: line %d: %v", path, n, err)
		}
		t.Lines = append(t.Lines, line)
		t.entries = append(t.entries, e)
	}
	if t.SessionID == "" && len(t.Lines) > 0 {
		return nil, fmt.Errorf("transcript %s: no session id in it", path)
	}
	return t, nil
}

// Clean reports whether cutting after the first n lines keeps every tool
// call with its result.
func (t *Transcript) Clean(n int) bool {
	return len(t.openCalls(n)) == 0
}

func (t *Transcript) openCalls(n int) []string {
	open := map[string]bool{}
	for _, e := range t.entries[:n] {
		for _, c := range e.calls {
			open[c] = true
		}
		for _, r := range e.results {
			delete(open, r)
		}
	}
	var ids []string
	for id := range open {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// UncleanError means a cut would separate tool calls from their results.
type UncleanError struct {
	Path          string
	Cut           int
	Open          []string // the calls whose results would be lost
	Before, After int      // the nearest clean cuts (in lines); -1 if none
}

func (e *UncleanError) Error() string {
	s := fmt.Sprintf("transcript %s: cutting after line %d would separate tool call %v from its result", e.Path, e.Cut, e.Open)
	switch {
	case e.Before >= 0 && e.After >= 0:
		s += fmt.Sprintf("; the nearest clean boundaries are after lines %d and %d", e.Before, e.After)
	case e.Before >= 0:
		s += fmt.Sprintf("; the nearest clean boundary is after line %d", e.Before)
	case e.After >= 0:
		s += fmt.Sprintf("; the nearest clean boundary is after line %d", e.After)
	}
	return s
}

// checkCut refuses a cut that is out of range or unclean.
func (t *Transcript) checkCut(n int) error {
	if n < 0 || n > len(t.Lines) {
		return fmt.Errorf("transcript %s has %d lines; cannot cut after line %d", t.Path, len(t.Lines), n)
	}
	if open := t.openCalls(n); len(open) > 0 {
		e := &UncleanError{Path: t.Path, Cut: n, Open: open, Before: -1, After: -1}
		for p := n - 1; p >= 0; p-- {
			if t.Clean(p) {
				e.Before = p
				break
			}
		}
		for p := n + 1; p <= len(t.Lines); p++ {
			if t.Clean(p) {
				e.After = p
				break
			}
		}
		return e
	}
	return nil
}

// PositionBefore returns the cut that keeps the conversation as it was
// before prompt was submitted: the number of lines, less the last one if
// it already is that prompt (a hook may run before or after the agent
// writes it).
func (t *Transcript) PositionBefore(prompt string) int {
	return positionBefore(dialects[t.Agent], len(t.Lines), prompt, func(i int) (entry, error) { return t.entries[i], nil })
}

// positionBefore walks back from the last of n lines: the prompt (and its
// display mirrors) and the metadata written with it are cut; the first
// other conversation entry ends the walk. In a dialect that writes a
// turn's metadata before its prompt, the metadata just before the cut goes
// too. entryAt parses line i.
func positionBefore(d *dialect, n int, prompt string, entryAt func(i int) (entry, error)) int {
	cut := n
	for i := n - 1; i >= 0 && prompt != ""; i-- {
		e, err := entryAt(i)
		if err != nil {
			break
		}
		if samePrompt(e.prompt, prompt) {
			cut = i
			continue
		}
		if e.conv {
			break
		}
	}
	for d.metaBeforePrompt && cut > 0 {
		if e, err := entryAt(cut - 1); err != nil || e.conv {
			break
		}
		cut--
	}
	return cut
}

// samePrompt reports whether a transcript's prompt text is the prompt a
// hook saw. A slash command is written to the transcript as
// <command-name>/x</command-name>…<command-args>a</command-args> while the
// hook sees "/x a"; a prompt with a pasted image is its text blocks.
func samePrompt(inTranscript, hook string) bool {
	if inTranscript == hook {
		return true
	}
	name, ok := between(inTranscript, "<command-name>", "</command-name>")
	if !ok {
		return false
	}
	args, _ := between(inTranscript, "<command-args>", "</command-args>")
	return strings.TrimSpace(name+" "+args) == strings.TrimSpace(hook)
}

func between(s, open, close string) (string, bool) {
	_, rest, ok := strings.Cut(s, open)
	if !ok {
		return "", false
	}
	v, _, ok := strings.Cut(rest, close)
	return v, ok
}

// MarkPosition is what a mark records of the transcript at path when
// prompt is submitted: the cut before the prompt (PositionBefore) and the
// digest of the lines before it (PrefixHash). It parses only the lines at
// the end that it needs, so a hook's cost does not grow with the session.
func MarkPosition(path, agent, prompt string) (lines int, prefix string, err error) {
	d, err := dialectOf(agent)
	if err != nil {
		return 0, "", err
	}
	data, err := readFile(path)
	if err != nil {
		return 0, "", err
	}
	var ends []int // offset just after each complete line
	for off := 0; ; {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			break
		}
		off += i + 1
		ends = append(ends, off)
	}
	start := func(i int) int {
		if i == 0 {
			return 0
		}
		return ends[i-1]
	}
	var sid string
	cut := positionBefore(d, len(ends), prompt, func(i int) (entry, error) {
		return d.parse(data[start(i):ends[i]-1], &sid)
	})
	return cut, fmt.Sprintf("sha256:%x", sha256.Sum256(data[:start(cut)])), nil
}

// Said reports whether the first n lines hold any conversation entry
// (not only metadata such as summary or file-history-snapshot lines).
func (t *Transcript) Said(n int) bool {
	for i := 0; i < min(n, len(t.entries)); i++ {
		if t.entries[i].conv {
			return true
		}
	}
	return false
}

// PrefixHash is a digest of the first n lines ("sha256:<hex>"): a mark
// records it, so that a fork at the mark can tell whether the transcript
// still holds what the mark pointed at.
func (t *Transcript) PrefixHash(n int) string {
	h := sha256.New()
	for _, l := range t.Lines[:min(n, len(t.Lines))] {
		h.Write(l)
		h.Write([]byte{'\n'})
	}
	return fmt.Sprintf("sha256:%x", h.Sum(nil))
}

// Answered returns which of the tool calls ids have a result in the
// transcript at path (the agent finished them, whether or not it told
// its hooks so).
func Answered(path, agent string, ids []string) (map[string]bool, error) {
	t, err := Load(path, agent)
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	got := map[string]bool{}
	for _, e := range t.entries {
		for _, r := range e.results {
			if want[r] {
				got[r] = true
			}
		}
	}
	return got, nil
}
