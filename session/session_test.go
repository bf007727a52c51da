package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)

// turn appends a prompt and parallel tool calls with their results.
func turn(t *testing.T, store, id, prompt string, calls ...string) {
	t.Helper()
	evs := []*Event{{Kind: KindPrompt, Text: prompt}}
	for _, c := range calls {
		evs = append(evs, &Event{Kind: KindToolCall, Call: c, Tool: "Bash", Input: json.RawMessage(`{"command":"true"}`)})
	}
	for _, c := range calls {
		evs = append(evs, &Event{Kind: KindToolResult, Call: c})
	}
	if err := Append(store, id, t0, evs...); err != nil {
		t.Fatal(err)
	}
}

func TestAppendLoadAndTornTail(t *testing.T) {
	store := t.TempDir()
	if err := Append(store, "s1", t0, &Event{Kind: KindStart, Agent: "claude", AgentSession: "s1"}); err != nil {
		t.Fatal(err)
	}
	turn(t, store, "s1", "fix the bug", "toolu_1", "toolu_2")
	f, _ := os.OpenFile(Path(store, "s1"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"v":1,"seq":7,"ti`)
	f.Close()
	evs, tail, err := Load(Path(store, "s1"))
	if err != nil || tail == nil || !tail.Torn || len(evs) != 6 {
		t.Fatalf("load with a torn tail: %d events, tail %v, err %v", len(evs), tail, err)
	}
	if n, err := LastSeq(store, "s1"); n != 6 || err != nil {
		t.Errorf("LastSeq with a torn tail = %d, %v; want 6", n, err)
	}
	turn(t, store, "s1", "again", "toolu_3")
	evs, tail, err = Load(Path(store, "s1"))
	if err != nil || tail != nil || len(evs) != 9 || evs[6].Seq != 7 || evs[6].Text != "again" {
		t.Fatalf("after repair: %d events, tail %v, err %v", len(evs), tail, err)
	}
	if err := Append(store, "../x", t0, &Event{Kind: KindStart}); err == nil {
		t.Error("a session id with a path in it was accepted")
	}
}

func TestConcurrentAppends(t *testing.T) {
	store := t.TempDir()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				if err := Append(store, "s", t0, &Event{Kind: KindPrompt, Text: fmt.Sprint(g, i)}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	evs, tail, err := Load(Path(store, "s"))
	if err != nil || tail != nil || len(evs) != 160 || evs[159].Seq != 160 {
		t.Fatalf("%d events, tail %v, err %v", len(evs), tail, err)
	}
}

func TestForkModes(t *testing.T) {
	store := t.TempDir()
	Append(store, "p", t0, &Event{Kind: KindStart, Agent: "claude"}) // 1
	turn(t, store, "p", "one", "a", "b")                             // 2..6
	turn(t, store, "p", "two", "c")                                  // 7..9
	parent, _ := os.ReadFile(Path(store, "p"))

	plan, err := PlanFork(store, "p", "c1", 6, ModeCut, "", t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := plan.Write(store); err != nil {
		t.Fatal(err)
	}
	child, _, _ := Load(Path(store, "c1"))
	if len(child) != 7 || child[0].Kind != KindFork || *child[0].Cut != 6 || child[0].Parent != "p" || child[6].Kind != KindToolResult {
		t.Fatalf("cut fork: %+v", child)
	}
	if err := plan.Write(store); err == nil {
		t.Error("a fork overwrote an existing session")
	}

	from, err := PlanFork(store, "p", "c2", 6, ModeSummarizeFrom, "they asked two; ran c", t0)
	if err != nil || len(from.Events) != 8 || from.Events[7].Kind != KindSummary || len(from.Dropped) != 3 {
		t.Fatalf("summarize-from: %v %+v", err, from)
	}
	upto, err := PlanFork(store, "p", "c3", 6, ModeSummarizeUpTo, "they asked one; ran a, b", t0)
	if err != nil || len(upto.Events) != 5 || upto.Events[1].Kind != KindSummary || upto.Events[2].Text != "two" || len(upto.Dropped) != 6 {
		t.Fatalf("summarize-up-to: %v %+v", err, upto)
	}

	_, err = PlanFork(store, "p", "c4", 4, ModeCut, "", t0)
	var ue *UncleanError
	if !errors.As(err, &ue) || ue.Before != 2 || ue.After != 6 {
		t.Fatalf("unclean cut: %v", err)
	}
	if !strings.Contains(err.Error(), "nearest clean boundaries are 2 and 6") {
		t.Errorf("message: %v", err)
	}
	if after, _ := os.ReadFile(Path(store, "p")); !bytes.Equal(parent, after) {
		t.Error("forking changed the parent log")
	}
}

func TestMarks(t *testing.T) {
	store := t.TempDir()
	for i := range 3 {
		n, err := AppendMark(store, &Mark{Label: fmt.Sprint("turn ", i), Files: uint64(10 * i),
			Conversation: &Coord{Session: "s", Seq: uint64(i), Agent: "claude", Transcript: "/t/s.jsonl", Lines: int64(4 * i)}}, t0)
		if err != nil || n != i+1 {
			t.Fatalf("mark %d: %d, %v", i, n, err)
		}
	}
	ms, tail, err := LoadMarks(store)
	if err != nil || tail != nil || len(ms) != 3 || ms[2].Files != 20 || ms[2].Conversation.Lines != 8 {
		t.Fatalf("marks: %+v %v %v", ms, tail, err)
	}
	if _, err := AppendMark(store, &Mark{Conversation: &Coord{Session: "s", Transcript: "relative.jsonl"}}, t0); err == nil {
		t.Error("a relative transcript path was accepted")
	}
	if _, err := os.Stat(filepath.Join(store, MarksFile)); err != nil {
		t.Fatal(err)
	}
}

func FuzzParseEvent(f *testing.F) {
	f.Add([]byte(`{"v":1,"seq":3,"time":"2026-12-02T09:00:00Z","kind":"tool_call","call":"toolu_1","tool":"Bash","input":{"command":"ls"}}`))
	f.Add([]byte(`{"v":1,"seq":1,"time":"2026-12-02T09:00:00Z","kind":"fork","parent":"p","cut":4,"mode":"cut"}`))
	f.Add([]byte(`{"v":2}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		e, err := ParseEvent(line)
		if err != nil {
			return
		}
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		e2, err := ParseEvent(b)
		if err != nil {
			t.Fatalf("a valid event does not survive a round trip: %v\n%s", err, b)
		}
		if e2.Seq != e.Seq || e2.Kind != e.Kind || e2.Call != e.Call {
			t.Fatalf("round trip changed the event: %+v -> %+v", e, e2)
		}
	})
}

func FuzzParseMark(f *testing.F) {
	f.Add([]byte(`{"v":1,"mark":2,"time":"2026-12-02T09:00:00Z","label":"fix it","files":41,"conversation":{"session":"s","seq":7,"agent":"claude","transcript":"/h/.claude/projects/p/s.jsonl","lines":12}}`))
	f.Add([]byte(`{"v":1,"mark":1,"time":"2026-12-02T09:00:00Z","files":0}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		m, err := ParseMark(line)
		if err != nil {
			return
		}
		if m.Mark < 1 || (m.Conversation != nil && !ValidID(m.Conversation.Session)) {
			t.Fatalf("accepted an invalid mark: %+v", m)
		}
	})
}

// FuzzLoad: any bytes as a session log load without panicking, and the
// events returned have increasing seqs.
func FuzzLoad(f *testing.F) {
	f.Add([]byte("{\"v\":1,\"seq\":1,\"time\":\"2026-12-02T09:00:00Z\",\"kind\":\"start\"}\n{\"v\":1,\"seq\":2,\"ti"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "s.jsonl")
		os.WriteFile(p, data, 0o600)
		evs, _, err := Load(p)
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i < len(evs); i++ {
			if evs[i].Seq <= evs[i-1].Seq {
				t.Fatalf("seqs do not increase: %d then %d", evs[i-1].Seq, evs[i].Seq)
			}
		}
	})
}

// OpenCalls finds the calls of the current turn that have no result, and
// reads only that turn: an earlier turn's open call (which the hooks closed
// at its boundary) is not reported again, however long the log is.
func TestOpenCallsReadsTheCurrentTurn(t *testing.T) {
	store := t.TempDir()
	add := appender(t, store, "s1")
	add(&Event{Kind: KindStart, Agent: "claude"})
	add(&Event{Kind: KindPrompt, Text: "one"})
	add(&Event{Kind: KindToolCall, Call: "old", Tool: "Bash"})
	for i := range 150 { // a long turn of finished calls, past the first 64 KiB read
		c := fmt.Sprintf("c%d", i)
		add(&Event{Kind: KindToolCall, Call: c, Tool: "Write", Input: json.RawMessage(`{"content":"` + strings.Repeat("x", 1000) + `"}`)})
		add(&Event{Kind: KindToolResult, Call: c})
	}
	add(&Event{Kind: KindToolCall, Call: "late1", Tool: "Bash"})
	if st, _ := os.Stat(Path(store, "s1")); st.Size() < 128<<10 {
		t.Fatalf("the log is %d bytes: too short to need a second read window", st.Size())
	}
	if got, err := OpenCalls(store, "s1"); err != nil || !slices.Equal(got, []string{"old", "late1"}) {
		t.Fatalf("open calls in a long turn: %v %v", got, err)
	}
	add(&Event{Kind: KindPrompt, Text: "two"})
	add(&Event{Kind: KindToolCall, Call: "new", Tool: "Bash"})
	add(&Event{Kind: KindToolCall, Call: "done", Tool: "Bash"})
	add(&Event{Kind: KindToolResult, Call: "done"})
	if got, err := OpenCalls(store, "s1"); err != nil || !slices.Equal(got, []string{"new"}) {
		t.Fatalf("open calls after a new prompt: %v %v", got, err)
	}
	if got, err := OpenCalls(store, "none"); err != nil || got != nil {
		t.Fatalf("a missing log: %v %v", got, err)
	}
}

// A subagent's calls run beside the main thread's turns: OpenCalls (what a
// turn boundary closes) leaves them out, OpenSubagentCalls finds them
// across turn boundaries, one subagent's or every one's, and Clean does not
// count them (they are in the subagent's transcript, not the
// conversation's).
func TestSubagentCallsOutliveTurns(t *testing.T) {
	store := t.TempDir()
	add := appender(t, store, "s1")
	add(&Event{Kind: KindStart, Agent: "claude"})
	add(&Event{Kind: KindPrompt, Text: "one"})
	add(&Event{Kind: KindToolCall, Call: "task", Tool: "Agent"})
	add(&Event{Kind: KindToolResult, Call: "task"})
	add(&Event{Kind: KindToolCall, Call: "a-write", Tool: "Write", Subagent: "a1"})
	add(&Event{Kind: KindToolCall, Call: "b-edit", Tool: "Edit", Subagent: "b2"})
	add(&Event{Kind: KindToolCall, Call: "main", Tool: "Bash"})
	add(&Event{Kind: KindToolResult, Call: "main", Unfinished: true}) // the boundary closes it
	add(&Event{Kind: KindPrompt, Text: "two"})
	add(&Event{Kind: KindToolCall, Call: "a-bash", Tool: "Bash", Subagent: "a1"})
	add(&Event{Kind: KindToolResult, Call: "a-write", Subagent: "a1"})
	if got, err := OpenCalls(store, "s1"); err != nil || len(got) != 0 {
		t.Fatalf("OpenCalls counts a subagent's calls: %v %v", got, err)
	}
	calls := func(agent string) []string {
		evs, err := OpenSubagentCalls(store, "s1", agent)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, e := range evs {
			ids = append(ids, e.Call+"@"+e.Subagent)
		}
		return ids
	}
	if got := calls("a1"); !slices.Equal(got, []string{"a-bash@a1"}) {
		t.Errorf("subagent a1's open calls: %v", got)
	}
	if got := calls(""); !slices.Equal(got, []string{"b-edit@b2", "a-bash@a1"}) {
		t.Errorf("every subagent's open calls: %v", got)
	}
	evs, _, err := Load(Path(store, "s1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Kind == KindPrompt && e.Text == "two" && !Clean(evs, e.Seq-1) {
			t.Errorf("the cut before prompt two is unclean: only subagent calls (and none of the main thread's, closed) span it")
		}
	}
}

// appender appends events to session id's log in store, all at one time,
// failing t on an error.
func appender(t *testing.T, store, id string) func(*Event) {
	return func(e *Event) {
		t.Helper()
		if err := Append(store, id, time.Unix(0, 0), e); err != nil {
			t.Fatal(err)
		}
	}
}
