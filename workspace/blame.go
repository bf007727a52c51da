package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/provenance"
	"github.com/ckfs-dev/ckfs/session"
)

// BlameLine is one line of ckfs blame: the line, the change it comes
// from, and what the timeline and the marks know of that change.
type BlameLine struct {
	N int `json:"line"`
	provenance.Line
	Tool    string `json:"tool,omitempty"`  // the window's tool
	Label   string `json:"label,omitempty"` // its command or label; a rewind's target
	Turn    int    `json:"turn,omitempty"`  // the mark (turn) it belongs to
	Prompt  string `json:"prompt,omitempty"`
	Session string `json:"session,omitempty"` // the agent session of that turn
	Agent   string `json:"agent,omitempty"`
}

// Blame returns the lines of rel (a path relative to the root) at
// checkpoint at, or on disk now when at is "", each with its origin.
func (v *View) Blame(rel, at string) ([]BlameLine, error) {
	seq, err := v.Checkpoint("now")
	if err != nil {
		return nil, err
	}
	var now *provenance.Now
	if at == "" {
		data, typ, err := v.DiskContent(rel)
		switch {
		case errors.Is(err, os.ErrNotExist), err == nil && typ == index.TypeAbsent:
			return nil, Errorf(ErrUsage, "%s does not exist now: give --at CHECKPOINT to see it as it was", rel)
		case err != nil:
			return nil, err
		case typ != index.TypeFile:
			return nil, Errorf(ErrUsage, "%s is a %s, not a file: blame shows a file's lines", rel, typ)
		}
		now = &provenance.Now{Data: data, Time: time.Now()}
	} else if seq, err = v.Checkpoint(at); err != nil {
		return nil, err
	}
	lines, err := provenance.Blame(v.Records, rel, seq, v.Content, now)
	switch {
	case errors.Is(err, provenance.ErrNoHistory):
		return nil, Errorf(ErrUsage, "%s: ckfs has recorded no change to it, so every line is older than ckfs's records (ckfs log lists what was recorded)", rel)
	case errors.Is(err, provenance.ErrBinary), errors.Is(err, provenance.ErrNoFile):
		return nil, Errorf(ErrUsage, "%v", err)
	case err != nil:
		return nil, err
	}
	return v.describeLines(lines), nil
}

// describeLines adds to each line what the log knows of its change: the
// window's tool and label, the turn and its prompt.
func (v *View) describeLines(lines []provenance.Line) []BlameLine {
	wins := map[string]index.Window{}
	for _, w := range index.Windows(v.Records) {
		wins[w.ID] = w
	}
	rewinds := map[string]uint64{}
	for _, r := range v.Records {
		if r.Kind == index.KindRewind && r.Target != nil {
			rewinds[r.Op] = *r.Target
		}
	}
	marks, _, _ := session.LoadMarks(v.Store)
	out := make([]BlameLine, len(lines))
	for i, l := range lines {
		b := BlameLine{N: i + 1, Line: l}
		when := l.Origin.Seq
		switch w, ok := wins[l.Origin.Window]; {
		case l.Origin.By == provenance.ByRewind:
			b.Label = fmt.Sprintf("rewind to %d", rewinds[l.Origin.Window])
		case ok:
			b.Tool, b.Label, when = w.Tool, w.Label, w.Open.Seq
		}
		if when == 0 { // on disk now, not recorded yet
			when = ^uint64(0)
		}
		if m := turnOf(marks, when); m != nil && l.Origin.By != provenance.ByBefore {
			b.Turn, b.Prompt = m.Mark, m.Label
			if m.Conversation != nil {
				b.Session, b.Agent = m.Conversation.Session, m.Conversation.Agent
			}
		}
		out[i] = b
	}
	return out
}

// RelPath turns a path given on the command line (relative to the
// current directory, or absolute) into the workspace's relative path: it
// must lie inside the repository or the mount.
func (w *Workspace) RelPath(arg string) (string, error) {
	abs, err := filepath.Abs(arg)
	if err != nil {
		return "", err
	}
	bases := []string{w.Meta.Root}
	if st, err := ReadDaemonState(w.Store); err == nil && st.Mountpoint != "" {
		bases = append(bases, st.Mountpoint)
	}
	for _, base := range bases {
		rel, err := filepath.Rel(base, abs)
		if err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, "../") {
			return filepath.ToSlash(rel), nil
		}
	}
	return "", Errorf(ErrUsage, "%s is not inside the workspace %s", arg, w.Meta.Root)
}

// turnOf is the mark (turn) checkpoint seq belongs to: the last one
// written at or before it; nil if none was.
func turnOf(marks []session.Mark, seq uint64) *session.Mark {
	var out *session.Mark
	for i := range marks {
		if marks[i].Files <= seq {
			out = &marks[i]
		}
	}
	return out
}

// TurnOf is the mark (turn) checkpoint seq belongs to; nil if none.
func (v *View) TurnOf(seq uint64) *session.Mark {
	marks, _, _ := session.LoadMarks(v.Store)
	return turnOf(marks, seq)
}
