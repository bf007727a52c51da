package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"
)

// MarksFile is the marks log of a store.
const MarksFile = "marks.jsonl"

// Mark is a bookmark at a turn boundary: the same moment on both
// timelines, paired when it happened (never guessed from timestamps).
type Mark struct {
	V     int       `json:"v"`
	Mark  int       `json:"mark"` // 1, 2, ... in the order written
	Time  time.Time `json:"time"`
	Label string    `json:"label,omitempty"`
	// Files is the file timeline's seq at the mark: a checkpoint.
	Files uint64 `json:"files"`
	// Conversation is where the conversation stood; nil for a mark made
	// by hand with no session.
	Conversation *Coord `json:"conversation,omitempty"`
}

// Coord is a position in a conversation.
type Coord struct {
	Session string `json:"session"` // ckfs session log id (the agent's session id)
	Seq     uint64 `json:"seq"`     // the session log's last event before the turn
	Agent   string `json:"agent,omitempty"`
	// Transcript is the agent's own transcript and Lines how many complete
	// lines it held at the mark.
	Transcript string `json:"transcript,omitempty"`
	Lines      int64  `json:"lines,omitempty"`
	// Prefix is a digest of those lines, so a fork can refuse a
	// transcript that was rewritten since.
	Prefix string `json:"prefix,omitempty"`
}

// Validate checks a mark read from the log.
func (m *Mark) Validate() error {
	if m.V != Version {
		return fmt.Errorf("marks version %d (this ckfs reads version %d)", m.V, Version)
	}
	if m.Mark < 1 || m.Time.IsZero() {
		return errors.New("mark without number or time")
	}
	if c := m.Conversation; c != nil {
		if !ValidID(c.Session) {
			return fmt.Errorf("mark %d: session id %q", m.Mark, c.Session)
		}
		if c.Lines < 0 {
			return fmt.Errorf("mark %d: negative transcript position", m.Mark)
		}
		if c.Transcript != "" && !filepath.IsAbs(c.Transcript) {
			return fmt.Errorf("mark %d: transcript path %q is not absolute", m.Mark, c.Transcript)
		}
	}
	return nil
}

// ParseMark decodes and validates one line of the marks log.
func ParseMark(line []byte) (*Mark, error) {
	var m Mark
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, err
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return &m, nil
}

// AppendMark numbers m (one more than the last mark), stamps it with now and
// appends it durably. It returns the mark's number.
func AppendMark(store string, m *Mark, now time.Time) (int, error) {
	path := filepath.Join(store, MarksFile)
	err := appendLine(path, func(last []byte) ([]byte, error) {
		n := 0
		if len(last) > 0 {
			prev, err := ParseMark(last)
			if err != nil {
				return nil, fmt.Errorf("marks %s: last line: %v (run ckfs verify)", path, err)
			}
			n = prev.Mark
		}
		m.V, m.Mark, m.Time = Version, n+1, now.UTC()
		if err := m.Validate(); err != nil {
			return nil, err
		}
		return json.Marshal(m)
	})
	return m.Mark, err
}

// LoadMarks reads the marks of a store, stopping at a torn or bad line.
func LoadMarks(store string) ([]Mark, *TailError, error) {
	var out []Mark
	tail, err := readLines(filepath.Join(store, MarksFile), func(line []byte) error {
		m, err := ParseMark(line)
		if err != nil {
			return err
		}
		if n := len(out); n > 0 && m.Mark <= out[n-1].Mark {
			return fmt.Errorf("mark %d after %d", m.Mark, out[n-1].Mark)
		}
		out = append(out, *m)
		return nil
	})
	return out, tail, err
}
