package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"
)

// Dir is where a store keeps its session logs.
func Dir(store string) string { return filepath.Join(store, "sessions") }

// Path is the log of session id.
func Path(store, id string) string { return filepath.Join(Dir(store), id+".jsonl") }

// Append appends events to the log of session id, assigning version, seq
// and time (now), each event made durable before the next. It creates the
// log (and its directory) if needed.
func Append(store, id string, now time.Time, evs ...*Event) error {
	if !ValidID(id) {
		return fmt.Errorf("session id %q: want letters, digits, '.', '_' or '-'", id)
	}
	if err := os.MkdirAll(Dir(store), 0o700); err != nil {
		return err
	}
	for _, e := range evs {
		err := appendLine(Path(store, id), func(last []byte) ([]byte, error) {
			var seq uint64
			if len(last) > 0 {
				prev, err := ParseEvent(last)
				if err != nil {
					return nil, fmt.Errorf("session log %s: last line: %v (run ckfs verify)", Path(store, id), err)
				}
				seq = prev.Seq
			}
			e.V, e.Seq, e.Time = Version, seq+1, now.UTC()
			if err := e.Validate(); err != nil {
				return nil, err
			}
			return json.Marshal(e)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Load reads a session log. A torn or bad line ends it: the events before it
// are returned with the *TailError; a seq that does not increase is a bad line.
func Load(path string) ([]Event, *TailError, error) {
	var out []Event
	tail, err := readLines(path, func(line []byte) error {
		e, err := ParseEvent(line)
		if err != nil {
			return err
		}
		if n := len(out); n > 0 && e.Seq <= out[n-1].Seq {
			return fmt.Errorf("seq %d after %d", e.Seq, out[n-1].Seq)
		}
		out = append(out, *e)
		return nil
	})
	return out, tail, err
}

// List returns the ids of the session logs of a store, oldest first.
func List(store string) ([]string, error) {
	ents, err := os.ReadDir(Dir(store))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	type item struct {
		id string
		t  time.Time
	}
	var items []item
	for _, e := range ents {
		name := e.Name()
		if filepath.Ext(name) != ".jsonl" {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		items = append(items, item{name[:len(name)-6], info.ModTime()})
	}
	sort.Slice(items, func(i, j int) bool { return items[i].t.Before(items[j].t) })
	var ids []string
	for _, it := range items {
		ids = append(ids, it.id)
	}
	return ids, nil
}

// Clean reports whether cutting after seq keeps every tool call with its
// result: no tool call at or before seq finishes after it. A subagent's
// calls are not the conversation's (its transcript holds them).
func Clean(evs []Event, seq uint64) bool {
	open := map[string]bool{}
	for _, e := range evs {
		if e.Seq > seq {
			break
		}
		if e.Subagent != "" {
			continue
		}
		switch e.Kind {
		case KindToolCall:
			open[e.Call] = true
		case KindToolResult:
			delete(open, e.Call)
		}
	}
	return len(open) == 0
}

// OpenCalls returns the calls of session id's main thread that have a
// tool_call and no tool_result yet, in order. Only the current turn is
// read, from the end of the log back to its last turn boundary (a prompt,
// a start or a fork event): the hooks close every open call of the main
// thread at each boundary, so a hook's cost does not grow with the
// session. A subagent's calls are not counted: a subagent may run on
// beyond the turn that started it (OpenSubagentCalls).
func OpenCalls(store, id string) ([]string, error) {
	evs, err := OpenCallEvents(store, id)
	var ids []string
	for _, e := range evs {
		ids = append(ids, e.Call)
	}
	return ids, err
}

// OpenCallEvents returns the tool_call events of the calls OpenCalls
// returns, in the same order.
func OpenCallEvents(store, id string) ([]Event, error) {
	evs, err := currentTurn(Path(store, id))
	if err != nil {
		return nil, err
	}
	return unanswered(evs, func(e *Event) bool { return e.Subagent == "" }), nil
}

// unanswered returns the tool_call events among evs, of the calls keep
// accepts, that no tool_result follows, in the order the calls were first
// made (a call made again counts once, by its last tool_call).
func unanswered(evs []Event, keep func(*Event) bool) []Event {
	open := map[string]int{} // call → its tool_call event
	var order []string
	for i := range evs {
		e := &evs[i]
		if !keep(e) {
			continue
		}
		switch e.Kind {
		case KindToolCall:
			if _, ok := open[e.Call]; !ok {
				order = append(order, e.Call)
			}
			open[e.Call] = i
		case KindToolResult:
			delete(open, e.Call)
		}
	}
	var calls []Event
	for _, c := range order {
		if i, ok := open[c]; ok {
			calls = append(calls, evs[i])
			delete(open, c) // once, though it was made again
		}
	}
	return calls
}

// subagentSpan is how much of a log's end OpenSubagentCalls reads: a
// subagent's open calls are among its recent events.
const subagentSpan = 4 << 20

// OpenSubagentCalls returns the tool_call events of the calls of
// subagent agent (of any subagent, if agent is "") of session id that have
// no tool_result yet, in order, across turn boundaries: a subagent may run
// on after the turn that started it. It reads the last 4 MiB of the log
// at most; it is asked when a subagent stops or a session starts, not on
// every call.
func OpenSubagentCalls(store, id, agent string) ([]Event, error) {
	f, size, err := openLog(Path(store, id))
	if f == nil || err != nil {
		return nil, err
	}
	defer f.Close()
	lines, _, err := tailLines(f, size, subagentSpan)
	if err != nil {
		return nil, err
	}
	var evs []Event
	for _, l := range lines {
		if !bytes.Contains(l, []byte(`"subagent"`)) {
			continue // the main thread's: not parsed
		}
		if e, err := ParseEvent(l); err == nil {
			evs = append(evs, *e)
		}
	}
	return unanswered(evs, func(e *Event) bool { return e.Subagent != "" && (agent == "" || e.Subagent == agent) }), nil
}

// currentTurn returns the events after the last turn boundary of the log
// at path, reading a growing window from its end. A line that does not
// parse ends the turn there (a torn tail is the appender's to repair).
func currentTurn(path string) ([]Event, error) {
	f, size, err := openLog(path)
	if f == nil || err != nil {
		return nil, err
	}
	defer f.Close()
	for window := int64(64 << 10); ; window *= 4 {
		lines, whole, err := tailLines(f, size, window)
		if err != nil {
			return nil, err
		}
		var evs []Event
		for i := len(lines) - 1; i >= 0; i-- {
			e, err := ParseEvent(lines[i])
			if err != nil {
				continue // the empty piece after the last newline, a torn tail
			}
			switch e.Kind {
			case KindPrompt, KindStart, KindFork:
				slices.Reverse(evs)
				return evs, nil
			}
			evs = append(evs, *e)
		}
		if whole {
			slices.Reverse(evs)
			return evs, nil
		}
	}
}

// openLog opens the log at path and returns its size; nil and no error
// when there is none.
func openLog(path string) (*os.File, int64, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// tailLines reads the last window bytes of f (size bytes long) as lines,
// less the first when it begins inside a line; whole says the window
// held all of f.
func tailLines(f *os.File, size, window int64) (lines [][]byte, whole bool, err error) {
	start := max(0, size-window)
	buf := make([]byte, size-start)
	if _, err := f.ReadAt(buf, start); err != nil && err != io.EOF {
		return nil, false, err
	}
	lines = bytes.Split(buf, []byte("\n"))
	if start > 0 {
		lines = lines[1:] // begins inside a line
	}
	return lines, start == 0, nil
}

// UncleanError means a cut would separate a tool call from its result.
type UncleanError struct {
	What          string // the log or transcript
	Cut           int64
	Before, After int64 // the nearest clean cuts; -1 if none
}

func (e *UncleanError) Error() string {
	s := fmt.Sprintf("%s: cutting at %d would separate a tool call from its result", e.What, e.Cut)
	switch {
	case e.Before >= 0 && e.After >= 0:
		s += fmt.Sprintf("; the nearest clean boundaries are %d and %d", e.Before, e.After)
	case e.Before >= 0:
		s += fmt.Sprintf("; the nearest clean boundary is %d", e.Before)
	case e.After >= 0:
		s += fmt.Sprintf("; the nearest clean boundary is %d", e.After)
	}
	return s
}

// nearestClean finds the clean cuts around cut among 0..n, given a
// predicate over positions.
func nearestClean(cut, n int64, clean func(int64) bool) (before, after int64) {
	before, after = -1, -1
	for p := cut - 1; p >= 0; p-- {
		if clean(p) {
			before = p
			break
		}
	}
	for p := cut + 1; p <= n; p++ {
		if clean(p) {
			after = p
			break
		}
	}
	return before, after
}

// LastSeq reads the seq of the last complete event of session id's log
// from its tail (0 if the log is empty or missing).
func LastSeq(store, id string) (uint64, error) {
	f, err := os.Open(Path(store, id))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	last, _, err := lastLine(f)
	if err != nil || len(last) == 0 {
		return 0, err
	}
	e, err := ParseEvent(last)
	if err != nil {
		return 0, fmt.Errorf("session log %s: last line: %v (run ckfs verify)", Path(store, id), err)
	}
	return e.Seq, nil
}
