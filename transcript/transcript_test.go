package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var now = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

// load copies a fixture to a temp project directory and loads it.
func load(t *testing.T, name, agent string) (*Transcript, []byte) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name)
	os.WriteFile(p, b, 0o600)
	tr, err := Load(p, agent)
	if err != nil {
		t.Fatal(err)
	}
	return tr, b
}

func TestClaudeCleanBoundaries(t *testing.T) {
	tr, _ := load(t, "claude-session.jsonl", Claude)
	if tr.SessionID != "7f3c2a9e-4b1d-4e8a-9c2f-1a2b3c4d5e6f" || len(tr.Lines) != 27 {
		t.Fatalf("session %q, %d lines", tr.SessionID, len(tr.Lines))
	}
	var clean []int
	for n := 0; n <= len(tr.Lines); n++ {
		if tr.Clean(n) {
			clean = append(clean, n)
		}
	}
	// Parallel calls (lines 5-6, results 7-8), a call (9, 10), a Task
	// whose sidechain runs inside it (15-20), a call after the compact
	// boundary (25, 26).
	want := "[0 1 2 3 4 8 10 11 12 13 14 20 21 22 23 24 26 27]"
	if got := strings.Join(strings.Fields(strings.Trim(strings.ReplaceAll(strings.Trim(fmtInts(clean), "[]"), ",", " "), " ")), " "); "["+got+"]" != want {
		t.Errorf("clean cuts %v, want %s", clean, want)
	}
	_, err := tr.Fork(6, ForkOptions{Now: now})
	var ue *UncleanError
	if !errors.As(err, &ue) || ue.Before != 4 || ue.After != 8 || len(ue.Open) != 2 {
		t.Fatalf("fork inside parallel calls: %v", err)
	}
	if !strings.Contains(err.Error(), "toolu_01Grep") || !strings.Contains(err.Error(), "after lines 4 and 8") {
		t.Errorf("message: %v", err)
	}
}

func fmtInts(v []int) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestClaudeForkCut(t *testing.T) {
	tr, orig := load(t, "claude-session.jsonl", Claude)
	f, err := tr.Fork(12, ForkOptions{Child: "11111111-2222-4333-8444-555555555555", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Write(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(tr.Path); !bytes.Equal(b, orig) {
		t.Fatal("the original transcript changed")
	}
	if f.Resume != "claude --resume 11111111-2222-4333-8444-555555555555" || filepath.Dir(f.Path) != filepath.Dir(tr.Path) {
		t.Errorf("fork: %+v", f)
	}
	child, err := Load(f.Path, Claude)
	if err != nil {
		t.Fatal(err)
	}
	// The summary line points at a kept entry and stays; every line keeps
	// its bytes but for the session id.
	if len(child.Lines) != 12 || child.SessionID != f.SessionID {
		t.Fatalf("child: %d lines, session %s", len(child.Lines), child.SessionID)
	}
	for i, l := range child.Lines {
		want := bytes.ReplaceAll(tr.Lines[i], []byte(tr.SessionID), []byte(f.SessionID))
		if !bytes.Equal(l, want) {
			t.Errorf("line %d changed beyond its session id:\n%s\n%s", i+1, l, want)
		}
	}
	checkChain(t, child)
}

// checkChain: every parentUuid names a kept entry, every metadata line
// points at a kept entry, and no tool_use lacks its result.
func checkChain(t *testing.T, tr *Transcript) {
	t.Helper()
	uuids := map[string]bool{}
	for _, e := range tr.entries {
		if e.uuid != "" {
			uuids[e.uuid] = true
		}
	}
	for i, e := range tr.entries {
		if e.parent != "" && !uuids[e.parent] {
			t.Errorf("line %d: parent %s is not in the fork", i+1, e.parent)
		}
		for _, r := range e.refs {
			if !uuids[r] {
				t.Errorf("line %d: points at %s, which is not in the fork", i+1, r)
			}
		}
	}
	if !tr.Clean(len(tr.Lines)) {
		t.Errorf("fork leaves tool calls without results: %v", tr.openCalls(len(tr.Lines)))
	}
}

func TestClaudeForkDropsDanglingMetadata(t *testing.T) {
	tr, _ := load(t, "claude-session.jsonl", Claude)
	// Cut after turn 1's prompt and snapshot (line 3): the title points at
	// the end of turn 1, which the fork drops.
	f, err := tr.Fork(3, ForkOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	f.Write()
	child, _ := Load(f.Path, Claude)
	if len(child.Lines) != 2 || !strings.Contains(string(child.Lines[0]), `"type":"user"`) {
		t.Fatalf("child:\n%s", f.Content())
	}
	checkChain(t, child)
}

func TestClaudeSummarize(t *testing.T) {
	tr, _ := load(t, "claude-session.jsonl", Claude)
	from, err := tr.Fork(12, ForkOptions{Mode: ModeSummarizeFrom, Summary: "Then a test for 100% discounts was added and total renamed.", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	from.Write()
	c1, _ := Load(from.Path, Claude)
	if len(c1.Lines) != 13 || !strings.Contains(string(c1.Lines[12]), "renamed") || from.Dropped != 15 || !bytes.Contains(from.Range, []byte("toolu_02Task")) {
		t.Fatalf("summarize-from: %d lines, dropped %d\n%s", len(c1.Lines), from.Dropped, c1.Lines[len(c1.Lines)-1])
	}
	checkChain(t, c1)
	upto, err := tr.Fork(23, ForkOptions{Mode: ModeSummarizeUpTo, Summary: "Rounding fixed; test_free added.", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	upto.Write()
	c2, _ := Load(upto.Path, Claude)
	if len(c2.Lines) != 5 || c2.entries[0].prompt != "Rounding fixed; test_free added." || c2.entries[1].parent != c2.entries[0].uuid {
		t.Fatalf("summarize-up-to:\n%s", upto.Content())
	}
	checkChain(t, c2)
	if _, err := tr.Fork(12, ForkOptions{Mode: ModeSummarizeFrom, Now: now}); err == nil {
		t.Error("a summarize fork without a summary was accepted")
	}
}

func TestCodexFork(t *testing.T) {
	tr, orig := load(t, "codex-rollout.jsonl", Codex)
	if tr.SessionID != "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b" || len(tr.Lines) != 22 {
		t.Fatalf("session %q, %d lines", tr.SessionID, len(tr.Lines))
	}
	for _, n := range []int{7, 8, 9, 10, 12, 20} {
		if tr.Clean(n) {
			t.Errorf("cut after line %d separates a call from its output", n)
		}
	}
	if _, err := tr.Fork(9, ForkOptions{Now: now}); err == nil || !strings.Contains(err.Error(), "call_A1") {
		t.Errorf("unclean codex cut: %v", err)
	}
	// At the hook, the prompt (and its display mirror) is the last thing
	// written, if it is written yet.
	cut := head(t, tr, 19).PositionBefore("Add a test for a 100% discount.")
	if cut != 17 {
		t.Fatalf("position before turn 2 = %d, want 17", cut)
	}
	f, err := tr.Fork(cut, ForkOptions{Child: "0199ffff-0000-7000-8000-000000000001", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Write(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(tr.Path); !bytes.Equal(b, orig) {
		t.Fatal("the original rollout changed")
	}
	if !strings.HasPrefix(filepath.Base(f.Path), "rollout-2026-12-02T12-00-00-0199ffff") || f.Resume != "codex resume 0199ffff-0000-7000-8000-000000000001" {
		t.Errorf("fork: %+v", f)
	}
	child, err := Load(f.Path, Codex)
	if err != nil || child.SessionID != f.SessionID || len(child.Lines) != 17 || !child.Clean(17) {
		t.Fatalf("child: %v %+v", err, child)
	}
	upto, err := tr.Fork(17, ForkOptions{Mode: ModeSummarizeUpTo, Summary: "Rounding fixed.", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	upto.Write()
	c2, _ := Load(upto.Path, Codex)
	if len(c2.Lines) != 7 || !c2.entries[0].session || c2.entries[1].prompt != "Rounding fixed." {
		t.Fatalf("summarize-up-to:\n%s", upto.Content())
	}
}

func TestClaudePositionBefore(t *testing.T) {
	tr, _ := load(t, "claude-session.jsonl", Claude)
	// MarkPosition (the hook's cheap path) agrees with the full parse.
	for _, n := range []int{24, 27} {
		h := head(t, tr, n)
		for _, prompt := range []string{"Rename total to cart_total everywhere.", "not written yet"} {
			lines, prefix, err := MarkPosition(h.Path, Claude, prompt)
			if want := h.PositionBefore(prompt); err != nil || lines != want || prefix != h.PrefixHash(want) {
				t.Errorf("MarkPosition(%d lines, %q) = %d, %s, %v; want %d, %s", n, prompt, lines, prefix, err, want, h.PrefixHash(want))
			}
		}
	}
	if got := head(t, tr, 24).PositionBefore("Rename total to cart_total everywhere."); got != 23 {
		t.Errorf("with the prompt written: %d, want 23", got)
	}
	if got := tr.PositionBefore("something not yet written"); got != 27 {
		t.Errorf("before the prompt is written: %d, want 27", got)
	}
}

// head is the transcript as it was when it had n lines.
func head(t *testing.T, tr *Transcript, n int) *Transcript {
	t.Helper()
	p := filepath.Join(t.TempDir(), filepath.Base(tr.Path))
	os.WriteFile(p, append(bytes.Join(tr.Lines[:n], []byte("\n")), '\n'), 0o600)
	h, err := Load(p, tr.Agent)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestSetString(t *testing.T) {
	in := []byte(`{"a":{"id":"x","n":[1,{"id":"no"}]},"sessionId" : "old","t":"say \"sessionId\":\"old\""}`)
	out, ok := setString(in, []string{"sessionId"}, "new")
	if !ok || string(out) != `{"a":{"id":"x","n":[1,{"id":"no"}]},"sessionId" : "new","t":"say \"sessionId\":\"old\""}` {
		t.Errorf("setString: %s", out)
	}
	out, ok = setString(in, []string{"a", "id"}, "y")
	if !ok || !bytes.Contains(out, []byte(`{"id":"y","n"`)) {
		t.Errorf("nested: %s", out)
	}
	if _, ok := setString(in, []string{"a", "n"}, "y"); ok {
		t.Error("replaced a non-string")
	}
}

// FuzzClaude and FuzzCodex: any bytes as a transcript load or fail
// cleanly, and a fork at any clean cut is a valid transcript of the same
// agent whose lines are all clean and whose session id is the child's.
func FuzzClaude(f *testing.F) { fuzzAgent(f, Claude, "claude-session.jsonl") }
func FuzzCodex(f *testing.F)  { fuzzAgent(f, Codex, "codex-rollout.jsonl") }
func FuzzGemini(f *testing.F) { fuzzAgent(f, Gemini, "gemini-real-0.61.0.jsonl") }
func FuzzQwen(f *testing.F)   { fuzzAgent(f, Qwen, "qwen-real-0.24.4.jsonl") }

func fuzzAgent(f *testing.F, agent, fixture string) {
	b, _ := os.ReadFile(filepath.Join("testdata", fixture))
	f.Add(b, 5)
	lines := bytes.SplitAfter(b, []byte("\n"))
	f.Add(bytes.Join(lines[:len(lines)/2], nil), 3)
	f.Fuzz(func(t *testing.T, data []byte, cut int) {
		tr, err := Parse("/p/s.jsonl", data, agent)
		if err != nil {
			return
		}
		if cut < 0 || cut > len(tr.Lines) {
			return
		}
		fk, err := tr.Fork(cut, ForkOptions{Child: "child-1", Now: now})
		if err != nil {
			var ue *UncleanError
			if !tr.Clean(cut) && !errors.As(err, &ue) {
				t.Fatalf("an unclean cut was refused without saying so: %v", err)
			}
			return
		}
		// Read the fork back from memory: files and fsyncs would make the
		// fuzzer crawl.
		child, err := Parse(fk.Path, fk.Content(), agent)
		if err != nil {
			t.Fatalf("the fork does not load: %v\n%s", err, fk.Content())
		}
		if !child.Clean(len(child.Lines)) {
			t.Fatalf("the fork has tool calls without results")
		}
		if len(child.Lines) > 0 && child.SessionID != "child-1" {
			t.Fatalf("fork session id %q", child.SessionID)
		}
	})
}
