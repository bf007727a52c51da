package integration

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/ckfs-dev/ckfs/session"
)

// claudeAgent plays a Claude Code session against a mounted workspace: the
// exact hook JSON Claude Code sends, the real shell commands its tools
// run, and its transcript lines, in its format.
type claudeAgent struct {
	w          *workspace
	session    string
	transcript string
	last       string // uuid of the last conversation entry
	n          int
}

type toolCall struct {
	id, tool, command string
}

func newClaudeAgent(w *workspace) *claudeAgent {
	proj := filepath.Join(filepath.Dir(w.root), "claude", "projects", "-"+strings.ReplaceAll(strings.Trim(w.root, "/"), "/", "-"))
	if err := os.MkdirAll(proj, 0o700); err != nil {
		w.t.Fatal(err)
	}
	a := &claudeAgent{w: w, session: "5b0e7a3c-2f4d-4c6b-9a1e-8d7f6c5b4a39"}
	a.transcript = filepath.Join(proj, a.session+".jsonl")
	a.hook(map[string]any{"hook_event_name": "SessionStart", "source": "startup"})
	return a
}

// hook runs `ckfs hook claude` with an event; it must exit 0 and print nothing.
func (a *claudeAgent) hook(ev map[string]any) {
	a.w.t.Helper()
	ev["session_id"], ev["transcript_path"], ev["cwd"], ev["permission_mode"] = a.session, a.transcript, a.w.root, "default"
	b, _ := json.Marshal(ev)
	c := exec.Command(ckfsBin, "hook", "claude")
	c.Dir, c.Env, c.Stdin = a.w.root, a.w.env(), bytes.NewReader(b)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil || stdout.Len() > 0 {
		a.w.t.Fatalf("hook %s: %v; stdout %q; stderr %s", ev["hook_event_name"], err, stdout.String(), stderr.String())
	}
	if log, err := os.ReadFile(filepath.Join(a.w.store, "hook.log")); err == nil && len(log) > 0 {
		a.w.t.Fatalf("hook %s logged a problem: %s", ev["hook_event_name"], log)
	}
}

// entry appends a conversation entry to the transcript.
func (a *claudeAgent) entry(typ string, message map[string]any, extra map[string]any) {
	a.n++
	u := fmt.Sprintf("%08x-0000-4000-8000-%012x", a.n, a.n)
	var parent any
	if a.last != "" {
		parent = a.last
	}
	e := map[string]any{"parentUuid": parent, "isSidechain": false, "userType": "external", "cwd": a.w.root,
		"sessionId": a.session, "version": "2.1.230", "gitBranch": "main", "type": typ, "message": message,
		"uuid": u, "timestamp": fmt.Sprintf("2026-12-02T09:%02d:%02d.000Z", a.n/60, a.n%60)}
	for k, v := range extra {
		e[k] = v
	}
	b, _ := json.Marshal(e)
	f, err := os.OpenFile(a.transcript, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		a.w.t.Fatal(err)
	}
	f.Write(append(b, '\n'))
	f.Close()
	a.last = u
}

// turn plays one turn: the prompt, then batches of parallel tool calls
// (all PreToolUse hooks, the commands, all PostToolUse hooks), then the
// answer. hookFirst says whether the prompt hook runs before Claude Code
// writes the prompt line or after (the mark must be right either way).
func (a *claudeAgent) turn(prompt string, hookFirst bool, batches ...[]toolCall) {
	a.w.t.Helper()
	if hookFirst {
		a.hook(map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": prompt})
		a.entry("user", map[string]any{"role": "user", "content": prompt}, nil)
	} else {
		a.entry("user", map[string]any{"role": "user", "content": prompt}, nil)
		a.hook(map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": prompt})
	}
	for bi, batch := range batches {
		msg := fmt.Sprintf("msg_%02d_%d", a.n, bi)
		for _, c := range batch {
			a.entry("assistant", map[string]any{"id": msg, "role": "assistant", "model": "claude-sonnet-4-5", "stop_reason": "tool_use",
				"content": []any{map[string]any{"type": "tool_use", "id": c.id, "name": c.tool, "input": map[string]any{"command": c.command}}}}, nil)
		}
		for _, c := range batch {
			a.hook(map[string]any{"hook_event_name": "PreToolUse", "tool_name": c.tool, "tool_use_id": c.id, "tool_input": map[string]any{"command": c.command}})
		}
		for _, c := range batch {
			a.w.sh(c.command)
		}
		for _, c := range batch {
			a.hook(map[string]any{"hook_event_name": "PostToolUse", "tool_name": c.tool, "tool_use_id": c.id,
				"tool_input": map[string]any{"command": c.command}, "tool_response": map[string]any{"stdout": "", "stderr": "", "interrupted": false}})
			a.entry("user", map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": c.id, "content": ""}}},
				map[string]any{"toolUseResult": map[string]any{"stdout": "", "stderr": "", "interrupted": false}})
		}
	}
	a.entry("assistant", map[string]any{"id": fmt.Sprintf("msg_%02d_end", a.n), "role": "assistant", "model": "claude-sonnet-4-5",
		"stop_reason": "end_turn", "content": []any{map[string]any{"type": "text", "text": "Done: " + prompt}}}, nil)
}

// snapshot is both timelines' visible state at a mark.
type snapshot struct {
	tree       string
	transcript []byte // the transcript before the turn's prompt
}

// digest hashes every file under the given roots (names and bytes).
func digest(t *testing.T, roots ...string) string {
	h := sha256.New()
	for _, root := range roots {
		var paths []string
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				paths = append(paths, p)
			}
			return nil
		})
		sort.Strings(paths)
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatalf("digest %s: %v", p, err)
			}
			fmt.Fprintf(h, "%s %d\n", p, len(b))
			h.Write(b)
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// workTree lists the workspace (through the mount) with contents and modes.
func workTree(t *testing.T, root string) string {
	var lines []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		info, _ := d.Info()
		if d.IsDir() {
			lines = append(lines, fmt.Sprintf("%s/ %v", rel, info.Mode()))
			return nil
		}
		b, _ := os.ReadFile(p)
		lines = append(lines, fmt.Sprintf("%s %v %q", rel, info.Mode(), b))
		return nil
	})
	return strings.Join(lines, "\n")
}

type rewindJSON struct {
	Conversation *struct {
		Child      string `json:"session"`
		Written    bool   `json:"written"`
		Transcript *struct {
			Path   string `json:"path"`
			Resume string `json:"resume"`
		} `json:"transcript"`
	} `json:"conversation"`
}

// TestScriptedClaudeSession plays four turns of a Claude Code session with
// parallel tool calls and shell edits on a real mount, then rewinds to
// every mark in every combination — files, conversation, both, neither —
// and checks each against the snapshots taken when the marks were written,
// and that the side not asked for is byte for byte untouched.
func TestScriptedClaudeSession(t *testing.T) {
	w := mountWorkspace(t, `printf 'def total(xs):\n    return round(sum(xs), 1)\n' > pricing.py && mkdir tests && printf 'assert True\n' > tests/test_a.py`)
	a := newClaudeAgent(w)
	snaps := map[int]snapshot{}
	take := func(mark int) {
		tr, _ := os.ReadFile(a.transcript)
		snaps[mark] = snapshot{tree: workTree(t, w.root), transcript: tr}
	}
	take(1)
	a.turn("Fix the rounding in pricing.py", true,
		[]toolCall{{"toolu_01A", "Bash", `sed -i 's/, 1)/, 2)/' pricing.py`}, {"toolu_01B", "Bash", `printf 'def test_round():\n    pass\n' > tests/test_round.py`}},
		[]toolCall{{"toolu_01C", "Bash", `python3 -c 'print(1)' > /dev/null`}})
	take(2)
	a.turn("Add a changelog and a docs directory", false,
		[]toolCall{{"toolu_02A", "Bash", `mkdir -p docs/api && printf '# API\n' > docs/api/index.md`}, {"toolu_02B", "Write", `printf 'v1.1: rounding fixed\n' > CHANGELOG`}})
	take(3)
	a.turn("Rename total to cart_total, drop the old test, make a link", true,
		[]toolCall{{"toolu_03A", "Bash", `sed -i 's/total/cart_total/' pricing.py && rm tests/test_a.py`}},
		[]toolCall{{"toolu_03B", "Bash", `ln -s pricing.py main.py && chmod 600 CHANGELOG`}, {"toolu_03C", "Bash", `mv docs/api docs/reference`}})
	take(4)
	a.turn("Remove the docs again", false, []toolCall{{"toolu_04A", "Bash", `rm -r docs`}})
	final := workTree(t, w.root)
	finalTranscript, _ := os.ReadFile(a.transcript)

	// The marks pair each turn's start on both timelines.
	marks, _, err := session.LoadMarks(w.store)
	if err != nil || len(marks) != 4 {
		t.Fatalf("marks: %v %+v", err, marks)
	}
	for _, m := range marks {
		if m.Conversation == nil || m.Conversation.Transcript != a.transcript {
			t.Fatalf("mark %d has no transcript position: %+v", m.Mark, m.Conversation)
		}
		if want := int64(bytes.Count(snaps[m.Mark].transcript, []byte("\n"))); m.Conversation.Lines != want {
			t.Errorf("mark %d: transcript position %d, want %d (before its prompt)", m.Mark, m.Conversation.Lines, want)
		}
	}
	if log := w.ckfs("log"); !strings.Contains(log, "mark 3") || !strings.Contains(log, "  window toolu_03C") {
		t.Errorf("ckfs log does not group windows under marks:\n%s", log)
	}
	// toolu_03B ran in parallel with toolu_03C: each write is matched to
	// its call by the writing process (a child of the process that ran
	// the hooks, whose command line holds the call's command), and log
	// says which windows ran together.
	log := w.ckfs("log")
	for _, re := range []string{`window toolu_03C .*\(alongside toolu_03B\)\n.*\n\s+D docs/api  directory`, `window toolu_03B .*\(alongside toolu_03C\)\n.*\n\s+m CHANGELOG.*\n\s+A main.py`} {
		if !regexp.MustCompile(re).MatchString(log) {
			t.Errorf("ckfs log does not match %s:\n%s", re, log)
		}
	}
	if strings.Contains(log, "could not be matched") {
		t.Errorf("a write of the parallel calls was not matched to its call:\n%s", log)
	}

	if du := w.ckfs("du"); !strings.Contains(du, "per agent session:") || !strings.Contains(du, a.session) {
		t.Errorf("ckfs du has no per-session figures:\n%s", du)
	}
	projDir := filepath.Dir(a.transcript)
	conversationSide := func() string {
		return digest(t, session.Dir(w.store), filepath.Join(w.store, session.MarksFile), projDir)
	}
	fileSide := func() string {
		return workTree(t, w.root) + "\n" + digest(t, filepath.Join(w.store, "snapshots.jsonl"))
	}
	checkFork := func(mark int, out string) {
		t.Helper()
		if mark == 1 {
			// Before the first prompt nothing was said: nothing to fork.
			if !strings.Contains(out, `"empty": true`) {
				t.Fatalf("mark 1: %s", out)
			}
			return
		}
		var r rewindJSON
		if err := json.Unmarshal([]byte(out), &r); err != nil || r.Conversation == nil || !r.Conversation.Written || r.Conversation.Transcript == nil {
			t.Fatalf("mark %d: rewind --json: %v\n%s", mark, err, out)
		}
		got, err := os.ReadFile(r.Conversation.Transcript.Path)
		if err != nil {
			t.Fatal(err)
		}
		want := bytes.ReplaceAll(snaps[mark].transcript, []byte(a.session), []byte(r.Conversation.Child))
		if !bytes.Equal(got, want) {
			t.Errorf("mark %d: forked transcript\n%s\nwant\n%s", mark, got, want)
		}
		if !strings.HasSuffix(r.Conversation.Transcript.Resume, r.Conversation.Child) {
			t.Errorf("resume command %q", r.Conversation.Transcript.Resume)
		}
		if b, _ := os.ReadFile(a.transcript); !bytes.Equal(b, finalTranscript) {
			t.Fatalf("mark %d: the original transcript changed", mark)
		}
		// ckfs's own session log forked the same way, with its lineage.
		parent, _, _ := session.Load(session.Path(w.store, a.session))
		child, tail, err := session.Load(session.Path(w.store, r.Conversation.Child))
		if err != nil || tail != nil || len(child) == 0 || child[0].Kind != session.KindFork || child[0].Parent != a.session {
			t.Fatalf("mark %d: forked session log: %v %v %+v", mark, err, tail, child)
		}
		cut := *child[0].Cut
		if uint64(len(child)-1) != cut {
			t.Fatalf("mark %d: child log has %d events after the fork record, cut %d", mark, len(child)-1, cut)
		}
		for i, e := range child[1:] {
			if p := parent[i]; p.Kind != e.Kind || p.Call != e.Call || p.Text != e.Text {
				t.Fatalf("mark %d: child event %d is %+v, parent's is %+v", mark, i+1, e, p)
			}
		}
	}

	for mark := 1; mark <= 4; mark++ {
		m := fmt.Sprint(mark)
		// Neither: a preview of both that changes nothing anywhere.
		conv, files := conversationSide(), fileSide()
		out := w.ckfs("rewind", "--mark", m)
		convPreview := "would fork the conversation"
		if mark == 1 {
			convPreview = "it was empty at mark 1"
		}
		if !strings.Contains(out, "would rewind the files") || !strings.Contains(out, convPreview) {
			t.Errorf("mark %d preview:\n%s", mark, out)
		}
		if conversationSide() != conv || fileSide() != files {
			t.Fatalf("mark %d: the preview changed something", mark)
		}

		// Files only: the files are the snapshot's; the conversation side is
		// byte for byte as it was.
		w.ckfs("rewind", "--mark", m, "--files")
		if got := workTree(t, w.root); got != snaps[mark].tree {
			t.Fatalf("mark %d --files: tree\n%s\nwant\n%s", mark, got, snaps[mark].tree)
		}
		if conversationSide() != conv {
			t.Fatalf("mark %d --files changed the conversation side", mark)
		}
		w.ckfs("rewind", "--files", "--undo")
		if got := workTree(t, w.root); got != final {
			t.Fatalf("mark %d: undo left\n%s", mark, got)
		}

		// Conversation only: a fork; the workspace and the file timeline
		// are byte for byte as they were.
		files = fileSide()
		out = w.ckfs("rewind", "--mark", m, "--conversation", "--json")
		checkFork(mark, out)
		if fileSide() != files {
			t.Fatalf("mark %d --conversation changed the file side", mark)
		}

		// Both.
		out = w.ckfs("rewind", "--mark", m, "--files", "--conversation", "--json")
		checkFork(mark, out)
		if got := workTree(t, w.root); got != snaps[mark].tree {
			t.Fatalf("mark %d both: tree\n%s\nwant\n%s", mark, got, snaps[mark].tree)
		}
		w.ckfs("rewind", "--files", "--undo")
		if got := workTree(t, w.root); got != final {
			t.Fatalf("mark %d: undo after both left\n%s", mark, got)
		}
	}
	// Summarize modes: the summarizer reads the dropped part on stdin; a
	// preview never runs it.
	ran := filepath.Join(filepath.Dir(w.root), "summarizer-ran")
	summarizer := "cat > " + ran + "; echo 'Later: docs were added, renamed and removed.'"
	w.ckfs("rewind", "--mark", "3", "--summarize-from", "--summarizer", summarizer)
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("a preview ran the summarizer")
	}
	out := w.ckfs("rewind", "--mark", "3", "--conversation", "--summarize-from", "--summarizer", summarizer, "--json")
	var r rewindJSON
	json.Unmarshal([]byte(out), &r)
	if r.Conversation == nil || r.Conversation.Transcript == nil {
		t.Fatalf("summarize-from: %s", out)
	}
	got, _ := os.ReadFile(r.Conversation.Transcript.Path)
	dropped, _ := os.ReadFile(ran)
	if !bytes.HasPrefix(got, bytes.ReplaceAll(snaps[3].transcript, []byte(a.session), []byte(r.Conversation.Child))) ||
		!bytes.Contains(got, []byte("Later: docs were added")) || !bytes.Contains(dropped, []byte("toolu_03B")) {
		t.Errorf("summarize-from fork:\n%s\nsummarizer read:\n%s", got, dropped)
	}

	// A mark whose transcript position falls between parallel tool calls
	// and their results (written by hand here) is refused, naming the
	// nearest clean boundaries, and nothing is written on either side.
	m3 := marks[2]
	m3.Conversation.Lines += 2  // inside turn 3's first batch
	m3.Conversation.Prefix = "" // as a mark written by hand
	line, _ := json.Marshal(map[string]any{"v": 1, "mark": 5, "time": m3.Time, "files": m3.Files, "conversation": m3.Conversation})
	f, _ := os.OpenFile(filepath.Join(w.store, session.MarksFile), os.O_APPEND|os.O_WRONLY, 0)
	f.Write(append(line, '\n'))
	f.Close()
	conv, files := conversationSide(), fileSide()
	out, code := w.exitCode(nil, "rewind", "--mark", "5", "--files", "--conversation")
	if code != 3 || !strings.Contains(out, "nearest clean boundar") {
		t.Errorf("unclean mark: exit %d\n%s", code, out)
	}
	if conversationSide() != conv || fileSide() != files {
		t.Errorf("a refused rewind changed something")
	}
	// Previewed, the same mark says why its conversation cannot fork; with
	// --json, in the JSON and nowhere else.
	out, _ = w.exitCode(nil, "rewind", "--mark", "5", "--json")
	var preview map[string]any
	if err := json.Unmarshal([]byte(out), &preview); err != nil || !strings.Contains(fmt.Sprint(preview["conversation_error"]), "nearest clean boundar") {
		t.Errorf("preview of an unclean mark as JSON (%v):\n%s", err, out)
	}

	// A transcript rewritten since the mark (here: one byte of its first
	// entry) is not forked: the mark records a digest of what it pointed at.
	rewritten := bytes.Replace(finalTranscript, []byte("Fix the rounding"), []byte("Fix the roundinG"), 1)
	os.WriteFile(a.transcript, rewritten, 0o600)
	out, code = w.exitCode(nil, "rewind", "--mark", "3", "--conversation")
	if code != 3 || !strings.Contains(out, "no longer holds what mark 3 pointed at") {
		t.Errorf("rewritten transcript: exit %d\n%s", code, out)
	}
	os.WriteFile(a.transcript, finalTranscript, 0o600)
}
