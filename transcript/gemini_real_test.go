package transcript

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The event log the real Gemini CLI (0.61.0) wrote for two turns, the
// second in a process that resumed the session (its temporary paths
// replaced): a header, $set patches, model messages written twice (the
// second time with their tool calls and results), and the header and
// history a resume writes again before the second prompt.
func TestRealGeminiLog(t *testing.T) {
	tr, orig := load(t, "gemini-real-0.61.0.jsonl", Gemini)
	if len(tr.Lines) != 29 || tr.SessionID != "d7ca8b40-1ac6-4116-b199-08c887746379" {
		t.Fatalf("%d lines, session %q", len(tr.Lines), tr.SessionID)
	}
	for n := 0; n <= len(tr.Lines); n++ {
		if !tr.Clean(n) {
			t.Errorf("cut after line %d is not clean: every call in this log has its result", n)
		}
	}
	// The hook of the second prompt sees the log as the resuming process
	// left it: 20 lines, the last four its header and history. The mark
	// cuts before them and before the last turn's trailing $set.
	p := filepath.Join(t.TempDir(), "session-2026-12-05T16-02-d7ca8b40.jsonl")
	os.WriteFile(p, bytes.Join(append(splitLines(orig)[:20], nil), []byte("\n")), 0o600)
	n, _, err := MarkPosition(p, Gemini, "Turn two")
	if err != nil || n != 15 {
		t.Fatalf("mark before turn two: %d, %v; want 15", n, err)
	}
	// The first prompt's mark: only the header and the session context
	// before it, so nothing of the session would be kept.
	os.WriteFile(p, bytes.Join(append(splitLines(orig)[:2], nil), []byte("\n")), 0o600)
	if n, _, err := MarkPosition(p, Gemini, "Turn one: change 1 to 2"); err != nil || n != 0 {
		t.Fatalf("mark before turn one: %d, %v; want 0", n, err)
	}
	child := "0badf00d-0000-4000-8000-000000000009"
	f, err := tr.Fork(15, ForkOptions{Child: child, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if f.Resume != "gemini --resume "+child || filepath.Base(f.Path) != "session-2026-12-02T12-00-0badf00d.jsonl" {
		t.Errorf("fork resumes with %q, at %s", f.Resume, f.Path)
	}
	if !bytes.Contains(f.data, []byte("Turn one")) || bytes.Contains(f.data, []byte("Turn two")) || bytes.Contains(f.data, []byte(tr.SessionID)) {
		t.Error("the fork before turn two does not hold exactly turn one under the child's id")
	}
	back, err := Parse(f.Path, f.data, Gemini)
	if err != nil || back.SessionID != child || len(back.Lines) != 15 {
		t.Fatalf("the fork read back: %v, %+v", err, back)
	}
	for i := 1; i < 15; i++ {
		if !bytes.Equal(back.Lines[i], tr.Lines[i]) {
			t.Errorf("line %d changed in the fork", i+1)
		}
	}
	// A fork that keeps the resume's header rewrites its id and the $set
	// of it too.
	f, err = tr.Fork(29, ForkOptions{Child: child, Now: now})
	if err != nil || bytes.Contains(f.data, []byte(tr.SessionID)) || bytes.Count(f.data, []byte(child)) != 3 {
		t.Fatalf("the whole log forked: %v\n%s", err, f.data)
	}
	if _, err := tr.Fork(15, ForkOptions{Mode: ModeSummarizeFrom, Summary: "s", Child: child, Now: now}); err == nil || !strings.Contains(err.Error(), "plain cut") {
		t.Errorf("a summarize fork of a Gemini log: %v", err)
	}
	if err := f.Write(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(tr.Path); !bytes.Equal(b, orig) {
		t.Error("the original log changed")
	}
}

// The transcript the real Qwen Code (0.24.4) wrote for one turn with a
// failed shell call and a file write: Claude Code's shape with Gemini's
// parts; a cut between a call and its tool_result is unclean.
func TestRealQwenTranscript(t *testing.T) {
	tr, orig := load(t, "qwen-real-0.24.4.jsonl", Qwen)
	if len(tr.Lines) != 13 || tr.SessionID != "77331ae1-6a4d-4782-9ed3-1f426fe75ad3" {
		t.Fatalf("%d lines, session %q", len(tr.Lines), tr.SessionID)
	}
	if tr.Clean(4) || tr.Clean(8) {
		t.Error("a cut between a call and its result is clean")
	}
	if !tr.Clean(6) || !tr.Clean(13) {
		t.Error("a cut after a call's result is not clean")
	}
	if got := tr.PositionBefore("Turn one: change 1 to 2"); got != 13 {
		t.Errorf("PositionBefore a prompt that is not last: %d", got)
	}
	p := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(p, bytes.Join(append(splitLines(orig)[:1], nil), []byte("\n")), 0o600)
	if n, _, err := MarkPosition(p, Qwen, "Turn one: change 1 to 2"); err != nil || n != 0 {
		t.Errorf("mark with the prompt written: %d, %v", n, err)
	}
	child := "0badf00d-0000-4000-8000-000000000009"
	f, err := tr.Fork(6, ForkOptions{Child: child, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if f.Resume != "qwen --resume "+child || filepath.Base(f.Path) != child+".jsonl" {
		t.Errorf("fork resumes with %q, at %s", f.Resume, f.Path)
	}
	// Every line names the child; a prompt_id naming the parent is
	// Qwen's own bookkeeping and stays as it was.
	if bytes.Contains(f.data, []byte(`"sessionId":"`+tr.SessionID)) || bytes.Count(f.data, []byte(`"sessionId":"`+child)) != 6 {
		t.Errorf("the fork's session ids:\n%s", f.data)
	}
}

func splitLines(b []byte) [][]byte {
	return bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
}

// A process that resumes a Gemini session in a later minute names a file
// of that minute in its hooks (a header at most, or nothing yet) while the
// turns go on in the file it resumed: LogOf finds that one, the earliest
// whose header names the session, and leaves other agents' paths alone.
func TestGeminiLogOfAResumedSession(t *testing.T) {
	dir := t.TempDir()
	b, _ := os.ReadFile(filepath.Join("testdata", "gemini-real-0.61.0.jsonl"))
	id := "d7ca8b40-1ac6-4116-b199-08c887746379"
	orig := filepath.Join(dir, "session-2026-12-05T16-02-d7ca8b40.jsonl")
	os.WriteFile(orig, b, 0o600)
	named := filepath.Join(dir, "session-2026-12-05T16-20-d7ca8b40.jsonl")
	if got := LogOf(named, Gemini, id); got != orig {
		t.Errorf("hook path not written yet: %s, want %s", got, orig)
	}
	first, _, _ := bytes.Cut(b, []byte("\n"))
	os.WriteFile(named, append(first, '\n'), 0o600)
	// Another session whose id shares the first eight characters.
	other := filepath.Join(dir, "session-2026-12-05T15-00-d7ca8b40.jsonl")
	os.WriteFile(other, []byte(`{"sessionId":"d7ca8b40-0000-4000-8000-000000000000","projectHash":"x"}`+"\n"), 0o600)
	if got := LogOf(named, Gemini, id); got != orig {
		t.Errorf("hook path with a header only: %s, want %s", got, orig)
	}
	if got := LogOf(named, Claude, id); got != named {
		t.Errorf("a Claude path was changed to %s", got)
	}
}
