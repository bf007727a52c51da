package workspace

import (
	"fmt"
	"strconv"
	"time"

	"github.com/ckfs-dev/ckfs/session"
	"github.com/ckfs-dev/ckfs/transcript"
)

// Mark writes a mark by hand (ckfs mark): the conversation side is the latest
// session's last clean position.
func (w *Workspace) Mark(label string, now time.Time) (*session.Mark, error) {
	store := w.Store
	files, err := FileCheckpoint(store, DaemonAlive(store))
	if err != nil {
		return nil, err
	}
	m := &session.Mark{Label: label, Files: files}
	ids, err := session.List(store)
	if err != nil {
		return nil, err
	}
	if len(ids) > 0 {
		id := ids[len(ids)-1]
		evs, _, err := session.Load(session.Path(store, id))
		if err != nil {
			return nil, err
		}
		c := &session.Coord{Session: id}
		for i := len(evs) - 1; i >= 0; i-- {
			if session.Clean(evs, evs[i].Seq) {
				c.Seq = evs[i].Seq
				break
			}
		}
		for _, e := range evs {
			if e.Agent != "" {
				c.Agent = e.Agent
			}
			if e.Transcript != "" {
				c.Transcript = e.Transcript
			}
		}
		if c.Transcript != "" && c.Agent != "" {
			if t, err := transcript.Load(c.Transcript, c.Agent); err == nil {
				for n := len(t.Lines); n >= 0; n-- {
					if t.Clean(n) {
						c.Lines, c.Prefix = int64(n), t.PrefixHash(n)
						break
					}
				}
			} else {
				c.Transcript = ""
			}
		} else {
			c.Transcript = ""
		}
		m.Conversation = c
	}
	if _, err := session.AppendMark(store, m, now); err != nil {
		return nil, err
	}
	return m, nil
}

// FindMark returns mark n.
func (w *Workspace) FindMark(n string) (*session.Mark, error) {
	store := w.Store
	marks, tail, err := session.LoadMarks(store)
	if err != nil {
		return nil, err
	}
	if tail != nil && !tail.Torn {
		return nil, fmt.Errorf("%v: run ckfs verify", tail)
	}
	want, err := strconv.Atoi(n)
	if err != nil {
		return nil, Errorf(ErrUsage, "--mark %q: give a mark number from ckfs log", n)
	}
	for i := range marks {
		if marks[i].Mark == want {
			return &marks[i], nil
		}
	}
	return nil, Errorf(ErrUsage, "no mark %d (the store has %d marks): ckfs log lists them", want, len(marks))
}
