package transcript

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/google/uuid"
)

// The fork modes (the same names as ckfs's own session forks).
const (
	ModeCut           = "cut"
	ModeSummarizeFrom = "summarize-from"
	ModeSummarizeUpTo = "summarize-up-to"
)

// summaryAt is the summary entry of a summarize mode: first (standing for
// what comes before the cut) or last (for what came after it).
type summaryAt struct {
	text  string
	first bool
}

// Fork is a new transcript, planned and not yet written.
type Fork struct {
	Agent     string `json:"agent"`
	Parent    string `json:"parent_session"`
	SessionID string `json:"session"`
	Path      string `json:"path"`
	Cut       int    `json:"cut_after_line"`
	Mode      string `json:"mode"`
	Kept      int    `json:"lines_kept"`
	Dropped   int    `json:"lines_dropped"` // summarized away or cut
	Resume    string `json:"resume"`        // the command that resumes it
	// Range is the text of the lines the summary stands for (what a
	// summarizer reads); empty for a plain cut.
	Range []byte `json:"-"`
	data  []byte
}

// ForkOptions says how to fork.
type ForkOptions struct {
	Mode    string    // ModeCut (default), ModeSummarizeFrom, ModeSummarizeUpTo
	Summary string    // the summary text of the summarize modes
	Child   string    // the new session id; a fresh UUID if empty
	Now     time.Time // for names and timestamps
}

// Fork plans a fork at a clean cut after line n: the new session holds the
// first n lines (ModeCut), those and a summary of the rest
// (ModeSummarizeFrom), or a summary of them and the rest
// (ModeSummarizeUpTo). Every kept line is byte for byte the original but
// for its session id (and, under a summary, its parent). Metadata that
// points at an entry the fork drops is dropped with it.
func (t *Transcript) Fork(n int, o ForkOptions) (*Fork, error) {
	if err := t.checkCut(n); err != nil {
		return nil, err
	}
	if o.Mode == "" {
		o.Mode = ModeCut
	}
	d := dialects[t.Agent]
	if o.Mode != ModeCut && !d.summaries {
		return nil, fmt.Errorf("transcript %s: a %s fork is not supported for %s transcripts; fork with a plain cut", t.Path, o.Mode, t.Agent)
	}
	if o.Child == "" {
		o.Child = uuid.NewString()
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	f := &Fork{Agent: t.Agent, Parent: t.SessionID, SessionID: o.Child, Cut: n, Mode: o.Mode}
	var sum *summaryAt
	keep, gone := t.forkLines(n, o.Mode)
	switch o.Mode {
	case ModeCut:
	case ModeSummarizeFrom, ModeSummarizeUpTo:
		if o.Summary == "" {
			return nil, errors.New("a summarize fork needs the summary text")
		}
		sum = &summaryAt{text: o.Summary, first: o.Mode == ModeSummarizeUpTo}
	default:
		return nil, fmt.Errorf("fork mode %q", o.Mode)
	}
	for _, i := range gone {
		f.Range = append(append(f.Range, t.Lines[i]...), '\n')
	}
	lines, err := d.fork(t, keep, o.Child, sum, o.Now)
	f.Path = d.path(t, o.Child, o.Now)
	f.Resume = d.resume + o.Child
	if err != nil {
		return nil, err
	}
	carries := sum != nil && t.Agent == Claude
	for _, i := range keep {
		carries = carries || t.entries[i].session
	}
	if !carries {
		return nil, fmt.Errorf("transcript %s: a fork after line %d keeps no entry of the session; start a new session instead", t.Path, n)
	}
	// Metadata pointing at a dropped entry is dropped too: count what
	// is written, not what was planned.
	f.Kept = len(lines)
	if sum != nil {
		f.Kept-- // the summary line is new, not kept
	}
	f.Dropped = len(t.Lines) - f.Kept
	for _, l := range lines {
		f.data = append(append(f.data, l...), '\n')
	}
	return f, nil
}

// forkLines splits the transcript's lines into those a fork at n in mode
// keeps and those it leaves out.
func (t *Transcript) forkLines(n int, mode string) (keep, gone []int) {
	end := len(t.Lines)
	if mode == ModeSummarizeUpTo {
		// The rest is kept, but only up to its last clean boundary: a
		// call still running at the end of a live transcript stays out.
		for end > n && !t.Clean(end) {
			end--
		}
	}
	for i := range t.Lines {
		in := i < n
		if mode == ModeSummarizeUpTo {
			// The summary stands for the head; the session header stays.
			in = (i >= n && i < end) || (t.Agent == Codex && t.entries[i].session)
		}
		if in {
			keep = append(keep, i)
		} else {
			gone = append(gone, i)
		}
	}
	return keep, gone
}

// Content is the new transcript's bytes.
func (f *Fork) Content() []byte { return f.data }

// Write creates the new transcript durably; it never replaces a file.
func (f *Fork) Write() error {
	dir := filepath.Dir(f.Path)
	tmp, err := os.CreateTemp(dir, ".ckfs-fork-*")
	if err != nil {
		return fmt.Errorf("write forked transcript: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(f.data); err != nil {
		tmp.Close()
		return fmt.Errorf("write forked transcript %s: %w", f.Path, err)
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Link(tmp.Name(), f.Path); err != nil {
		return fmt.Errorf("write forked transcript %s: %w", f.Path, err)
	}
	d, err := os.Open(dir)
	if err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
