package workspace

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/rewind"
	"github.com/ckfs-dev/ckfs/session"
)

// LogEntry is one line of ckfs log: a window, a rewind, or a run of
// changes made outside any window.
type LogEntry struct {
	Kind        string    `json:"kind"` // window, rewind, outside, continuation (a window's processes wrote after it closed), mark
	Checkpoint  uint64    `json:"checkpoint"`
	Before      uint64    `json:"before"` // the checkpoint just before it
	ID          string    `json:"id,omitempty"`
	Tool        string    `json:"tool,omitempty"`
	Label       string    `json:"label,omitempty"`
	Time        time.Time `json:"time"`
	Open        bool      `json:"open,omitempty"`        // a window still open
	Interrupted bool      `json:"interrupted,omitempty"` // its daemon died; closed at the next mount
	Unfinished  bool      `json:"unfinished,omitempty"`  // the agent never reported the call finished
	Failed      bool      `json:"failed,omitempty"`      // the call failed (the agent said so, or its command exited non-zero)
	Wrote       bool      `json:"wrote,omitempty"`       // a window: something was written in it
	// Alongside lists the windows open at the same time as this one
	// (parallel tool calls). Writes made then are matched to their call by
	// the writing process; Guessed counts the paths that could not be, and
	// were credited to this window as the newest open.
	Alongside  []string  `json:"alongside,omitempty"`
	Guessed    int       `json:"guessed,omitempty"`
	Target     uint64    `json:"target,omitempty"`
	Restorable bool      `json:"restorable"`        // its checkpoint is at or after the watermark
	Mark       int       `json:"mark,omitempty"`    // the turn (mark) it belongs to; for a mark, its number
	Session    string    `json:"session,omitempty"` // a mark's conversation session
	Files      []LogFile `json:"files"`
}

type LogFile struct {
	Path      string `json:"path"`
	Status    string `json:"status"` // added, deleted, modified, mode, type, skipped
	Added     int    `json:"added"`
	Removed   int    `json:"removed"`
	Binary    bool   `json:"binary,omitempty"`
	Dir       bool   `json:"dir,omitempty"`
	Reason    string `json:"reason,omitempty"`
	Collected bool   `json:"content_collected,omitempty"` // its content was removed by ckfs gc
	Problem   string `json:"content_problem,omitempty"`   // "damaged" or "missing": the store lost content it should hold

	// from and to are the contents whose lines are counted, once the
	// entries to show are known (countLines).
	from, to index.State
	count    bool
}

// LogEntries is the timeline as ckfs log shows it: newest turn first,
// each mark heading its turn's entries, newest first.
func (v *View) LogEntries() []LogEntry {
	out := v.logEntries()
	v.countLines(out, v.Content)
	return out
}

// Log is LogEntries narrowed by f. Lines are counted only in the entries
// it keeps: each count reads two contents from the store, and -n 5 of a
// long session should not read the whole session's.
func (v *View) Log(f LogFilter) ([]LogEntry, error) {
	return v.log(f, v.Content)
}

func (v *View) log(f LogFilter, content func(index.State) ([]byte, error)) ([]LogEntry, error) {
	out, err := f.Filter(v.logEntries())
	if err != nil {
		return nil, err
	}
	v.countLines(out, content)
	return out, nil
}

// logEntries are LogEntries without their files' line counts.
func (v *View) logEntries() []LogEntry {
	h := index.NewHistory(v.Records)
	wins := index.Windows(v.Records)
	out := v.windowEntries(h, wins)
	out = append(out, v.betweenEntries(h, wins)...)
	out = v.withMarks(out)
	w, _ := index.Watermark(v.Records)
	for i := range out {
		out[i].Restorable = out[i].Before >= w
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Mark != b.Mark {
			return a.Mark > b.Mark
		}
		if (a.Kind == "mark") != (b.Kind == "mark") {
			return a.Kind == "mark"
		}
		return a.Before > b.Before
	})
	return out
}

// files describes how each of paths changed between two checkpoints.
func (v *View) files(h index.History, paths map[string]bool, before, after uint64) []LogFile {
	var fs []LogFile
	for _, p := range sortedKeys(paths) {
		if f, ok := v.fileChange(h, p, before, after); ok {
			fs = append(fs, f)
		}
	}
	return fs
}

// windowEntries are the entries of the windows, in the order they opened.
func (v *View) windowEntries(h index.History, wins []index.Window) []LogEntry {
	last := uint64(0)
	if n := len(v.Records); n > 0 {
		last = v.Records[n-1].Seq
	}
	together := alongside(wins, last)
	guessed := map[string]map[string]bool{}
	for _, r := range v.Records {
		if r.By == index.ByGuess {
			if guessed[r.Window] == nil {
				guessed[r.Window] = map[string]bool{}
			}
			guessed[r.Window][r.Path] = true
		}
	}
	var out []LogEntry
	for wi, w := range wins {
		e := LogEntry{Kind: "window", ID: w.ID, Tool: w.Tool, Label: w.Label, Time: w.Open.Time, Before: w.Open.Seq, Checkpoint: last, Open: w.Close == nil}
		if w.Close != nil {
			e.Checkpoint = w.Close.Seq
			e.Interrupted = w.Close.Interrupted()
			e.Unfinished = w.Close.Reason == index.ReasonUnfinished
			e.Failed = w.Close.Reason == index.ReasonFailed
		}
		e.Wrote = len(w.Paths) > 0 || len(w.Skipped) > 0
		e.Alongside, e.Guessed = together[wi], len(guessed[w.ID])
		ps := map[string]bool{}
		for _, p := range w.Paths {
			ps[p] = true
		}
		e.Files = v.files(h, ps, e.Before, e.Checkpoint)
		out = append(out, e)
	}
	return out
}

// betweenEntries are the entries between windows: outside changes,
// continuations and rewinds, each run grouped up to the next boundary. A
// continuation is what a window's own processes wrote after it closed (a
// background command of its call).
func (v *View) betweenEntries(h index.History, wins []index.Window) []LogEntry {
	closed := map[string]uint64{}
	for _, w := range wins {
		if w.Close != nil {
			closed[w.ID] = w.Close.Seq
		}
	}
	var out []LogEntry
	var cur *LogEntry
	curPaths := map[string]bool{}
	flush := func() {
		if cur != nil {
			cur.Files = v.files(h, curPaths, cur.Before, cur.Checkpoint)
			if len(cur.Files) > 0 {
				out = append(out, *cur)
			}
			cur, curPaths = nil, map[string]bool{}
		}
	}
	// group adds r to the current run of kind (and window id), starting
	// one if need be.
	group := func(r *index.Record, kind, id string) {
		if cur != nil && (cur.Kind != kind || cur.ID != id) {
			flush()
		}
		if cur == nil {
			cur = &LogEntry{Kind: kind, ID: id, Before: r.Seq - 1, Time: r.Time}
		}
		cur.Checkpoint = r.Seq
		curPaths[r.Path] = true
	}
	rewinds := map[uint64]string{} // a rewind record's seq: its op (what an undo goes back to)
	tools := map[string]string{}   // a window's tool, for a revert's label
	for _, w := range wins {
		tools[w.ID] = w.Tool
	}
	for i := range v.Records {
		r := &v.Records[i]
		switch {
		case r.Kind == index.KindOutside:
			group(r, "outside", "")
		case r.IsImage() && closed[r.Window] != 0 && r.Seq > closed[r.Window]:
			group(r, "continuation", r.Window)
		case r.Kind == index.KindRewind:
			flush()
			e := LogEntry{Kind: "rewind", ID: r.Op, Time: r.Time, Before: r.Seq, Checkpoint: r.Seq, Target: *r.Target, Label: rewindWhat(r, rewinds, tools)}
			rewinds[r.Seq] = r.Op
			// Its after images follow it, with its op id as window.
			ps := map[string]bool{}
			for j := i + 1; j < len(v.Records) && v.Records[j].Window == r.Op; j++ {
				ps[v.Records[j].Path] = true
				e.Checkpoint = v.Records[j].Seq
			}
			e.Files = v.files(h, ps, e.Before, e.Checkpoint)
			out = append(out, e)
		case r.IsBoundary():
			flush()
		}
	}
	flush()
	return out
}

// rewindWhat says what a rewind record was: a revert of windows (with
// their tools), the undo of an earlier rewind (its target is that
// rewind's checkpoint), or a rewind to a checkpoint; a path restriction
// follows.
func rewindWhat(r *index.Record, earlier map[uint64]string, tools map[string]string) string {
	label := r.Label
	var what string
	switch {
	case strings.HasPrefix(label, "revert "):
		ids := strings.Fields(strings.TrimPrefix(label, "revert "))
		n := 0
		for n < len(ids) && ids[n] != "paths" && ids[n] != "except" {
			n++
		}
		var named []string
		for _, id := range ids[:n] {
			if tool := tools[id]; tool != "" {
				id += " (" + tool + ")"
			}
			named = append(named, id)
		}
		what, label = "revert of "+strings.Join(named, ", "), strings.Join(ids[n:], " ")
	case earlier[*r.Target] != "":
		what = "undo of " + earlier[*r.Target]
	default:
		what = fmt.Sprintf("rewind to checkpoint %d", *r.Target)
	}
	if label != "" {
		what += " (" + label + ")"
	}
	return what
}

// withMarks numbers each entry with the mark of its turn, and adds the
// marks themselves.
func (v *View) withMarks(out []LogEntry) []LogEntry {
	marks, _, _ := session.LoadMarks(v.Store)
	for i := range out {
		for _, m := range marks {
			if m.Files <= out[i].Before {
				out[i].Mark = m.Mark
			}
		}
	}
	for _, m := range marks {
		e := LogEntry{Kind: "mark", Mark: m.Mark, Label: m.Label, Time: m.Time, Before: m.Files, Checkpoint: m.Files}
		if m.Conversation != nil {
			e.Session = m.Conversation.Session
		}
		out = append(out, e)
	}
	return out
}

// fileChange describes how path changed between two checkpoints; false if
// it did not (a file created and deleted inside the window).
func (v *View) fileChange(h index.History, path string, before, after uint64) (LogFile, bool) {
	b, _ := h.At(path, before)
	a, _ := h.At(path, after)
	f := LogFile{Path: path}
	switch {
	case a.Unknown || b.Unknown:
		f.Status, f.Reason = "skipped", a.Reason+b.Reason
		if a.Unknown && a.Reason == "" {
			f.Reason = b.Reason
		}
		return f, true
	case !b.Exists() && !a.Exists():
		return f, false
	case !b.Exists():
		f.Status = "added"
	case !a.Exists():
		f.Status = "deleted"
	case a.Type != b.Type:
		f.Status = "type"
	case a.Hash != b.Hash:
		f.Status = "modified"
	case a.Mode != b.Mode:
		f.Status = "mode"
		return f, true
	default:
		return f, false
	}
	if a.Type == index.TypeDir || b.Type == index.TypeDir {
		f.Dir = true
		return f, true
	}
	f.from, f.to, f.count = b.State, a.State, true
	return f, true
}

// countLines counts the added and removed lines of every file of the
// entries whose contents changed, or says why it cannot: only content
// that checkpoints below the watermark alone needed was collected on
// purpose; anything else the store should still hold. content reads a
// state's content (View.Content).
func (v *View) countLines(entries []LogEntry, content func(index.State) ([]byte, error)) {
	wm, _ := index.Watermark(v.Records)
	for i := range entries {
		for j := range entries[i].Files {
			f := &entries[i].Files[j]
			if !f.count {
				continue
			}
			from, err := content(f.from)
			if err == nil {
				var to []byte
				if to, err = content(f.to); err == nil {
					f.Added, f.Removed, f.Binary = rewind.LineCounts(from, to)
					continue
				}
			}
			switch {
			case errors.Is(err, cas.ErrCorrupt):
				f.Problem = "damaged"
			case errors.Is(err, cas.ErrNotFound) && entries[i].Checkpoint < wm:
				f.Collected = true
			default:
				f.Problem = "missing"
			}
		}
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// alongside lists, for each window, the windows open at some moment
// together with it (last is the timeline's end, for windows still open).
// Windows come in the order they opened, so one sweep that keeps the
// windows still open finds every pair: O(windows × those open at once).
func alongside(wins []index.Window, last uint64) [][]string {
	end := func(w index.Window) uint64 {
		if w.Close == nil {
			return last + 1
		}
		return w.Close.Seq
	}
	out := make([][]string, len(wins))
	var open []int
	for i, w := range wins {
		open = slices.DeleteFunc(open, func(j int) bool { return end(wins[j]) <= w.Open.Seq })
		for _, j := range open {
			out[i] = append(out[i], wins[j].ID)
			out[j] = append(out[j], w.ID)
		}
		open = append(open, i)
	}
	return out
}
