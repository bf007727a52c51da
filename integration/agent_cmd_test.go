package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckfs-dev/ckfs/index"
)

// fakeClaude stands in for the claude binary: it records how it was
// started, then plays hook events through the command its --settings file
// installs, with a real edit in between, and exits 7.
const fakeClaude = `#!/bin/sh
set -e
echo "$@" > "$FAKE_OUT/args"
pwd > "$FAKE_OUT/pwd"
cmd=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hooks"]["PreToolUse"][0]["hooks"][0]["command"])' "$2")
ev() { printf '%s' "$1" | sh -c "$cmd"; }
ev '{"hook_event_name":"SessionStart","session_id":"agent-s1","cwd":"'"$PWD"'","source":"startup"}'
ev '{"hook_event_name":"UserPromptSubmit","session_id":"agent-s1","cwd":"'"$PWD"'","prompt":"make f"}'
ev '{"hook_event_name":"PreToolUse","session_id":"agent-s1","cwd":"'"$PWD"'","tool_name":"Bash","tool_use_id":"toolu_AG1","tool_input":{"command":"echo hi > f"}}'
echo hi > f
ev '{"hook_event_name":"PostToolUse","session_id":"agent-s1","cwd":"'"$PWD"'","tool_name":"Bash","tool_use_id":"toolu_AG1","tool_response":{}}'
exit 7
`

// ckfs agent claude mounts the repository, starts claude with the hooks
// installed by a settings file kept out of the repository, passes the
// agent's arguments and exit code through, and unmounts what it mounted.
func TestAgentClaude(t *testing.T) {
	w := newWorkspace(t, `printf 'x\n' > keep.txt`)
	bin := filepath.Join(filepath.Dir(w.root), "bin")
	out := filepath.Join(filepath.Dir(w.root), "out")
	os.MkdirAll(bin, 0o755)
	os.MkdirAll(out, 0o755)
	os.WriteFile(filepath.Join(bin, "claude"), []byte(fakeClaude), 0o755)
	w.extraEnv = []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "FAKE_OUT=" + out}
	got, code := w.exitCode(nil, "agent", "claude", "--model", "sonnet")
	if code != 7 {
		t.Fatalf("ckfs agent claude: exit %d, want the agent's 7\n%s", code, got)
	}
	if w.mounted() {
		t.Fatal("ckfs agent claude left its mount behind")
	}
	// The mount ends with the agent: no hint to re-enter it.
	if !strings.Contains(got, "mounted "+w.root) || strings.Contains(got, "shells already in") {
		t.Errorf("ckfs agent claude's own output:\n%s", got)
	}
	args, _ := os.ReadFile(filepath.Join(out, "args"))
	fields := strings.Fields(string(args))
	if len(fields) != 4 || fields[0] != "--settings" || fields[2] != "--model" || fields[3] != "sonnet" {
		t.Fatalf("claude was started with %q", args)
	}
	if strings.HasPrefix(fields[1], w.root) {
		t.Errorf("the settings file %s is inside the repository", fields[1])
	}
	if entries, _ := os.ReadDir(w.root); len(entries) != 2 {
		t.Errorf("the repository holds %d entries, want keep.txt and f", len(entries))
	}
	st := w.status()
	w.store = st.Store
	var opened bool
	for _, r := range w.records() {
		if r.Kind == index.KindAfter && r.Path == "f" && r.Window == "toolu_AG1" {
			opened = true
		}
	}
	if !opened {
		t.Errorf("the agent's edit was not captured in window toolu_AG1")
	}
	// Still running on a mount someone else made: it is left mounted.
	w.mount()
	if _, code := w.exitCode(nil, "agent", "claude"); code != 7 || !w.mounted() {
		t.Errorf("with an existing mount: exit %d, mounted %v", code, w.mounted())
	}
}

// A Codex CLI session through ckfs hook codex: its rollout forks at a mark
// into a new rollout beside it that codex resume opens, and a function
// call is never separated from its output.
func TestCodexSession(t *testing.T) {
	w := mountWorkspace(t, `printf 'v0\n' > a.txt`)
	sid := "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
	dir := filepath.Join(filepath.Dir(w.root), "codex", "sessions", "2026", "12", "02")
	os.MkdirAll(dir, 0o700)
	rollout := filepath.Join(dir, "rollout-2026-12-02T10-00-00-"+sid+".jsonl")
	line := func(typ string, payload map[string]any) {
		b, _ := json.Marshal(map[string]any{"timestamp": "2026-12-02T10:00:00.000Z", "type": typ, "payload": payload})
		f, _ := os.OpenFile(rollout, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
		f.Write(append(b, '\n'))
		f.Close()
	}
	hook := func(ev map[string]any) {
		ev["session_id"], ev["transcript_path"], ev["cwd"], ev["model"], ev["turn_id"] = sid, rollout, w.root, "gpt-5-codex", "turn-1"
		b, _ := json.Marshal(ev)
		c := exec.Command(ckfsBin, "hook", "codex")
		c.Dir, c.Env, c.Stdin = w.root, w.env(), bytes.NewReader(b)
		if out, err := c.CombinedOutput(); err != nil || len(out) > 0 {
			t.Fatalf("hook codex: %v %s", err, out)
		}
	}
	line("session_meta", map[string]any{"id": sid, "cwd": w.root, "cli_version": "0.63.0", "model_provider": "openai"})
	hook(map[string]any{"hook_event_name": "SessionStart", "source": "startup"})
	for turn := 1; turn <= 2; turn++ {
		prompt := fmt.Sprintf("set a to v%d", turn)
		line("turn_context", map[string]any{"cwd": w.root, "model": "gpt-5-codex"})
		line("response_item", map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": prompt}}})
		line("event_msg", map[string]any{"type": "user_message", "message": prompt})
		hook(map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": prompt})
		call := fmt.Sprintf("call_%d", turn)
		cmd := fmt.Sprintf("printf 'v%d\\n' > a.txt", turn)
		line("response_item", map[string]any{"type": "function_call", "name": "shell", "call_id": call, "arguments": `{"command":["bash","-lc",` + fmt.Sprintf("%q", cmd) + `]}`})
		hook(map[string]any{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": call, "tool_input": map[string]any{"command": cmd}})
		w.sh(cmd)
		hook(map[string]any{"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": call, "tool_response": map[string]any{"exit_code": 0}})
		line("response_item", map[string]any{"type": "function_call_output", "call_id": call, "output": `{"output":"","metadata":{"exit_code":0}}`})
		line("response_item", map[string]any{"type": "message", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": "done"}}})
	}
	orig, _ := os.ReadFile(rollout)
	out := w.ckfs("rewind", "--mark", "2", "--files", "--conversation")
	if got := w.sh("cat a.txt"); got != "v1\n" {
		t.Errorf("files at mark 2: %q", got)
	}
	i := strings.Index(out, "codex resume ")
	if i < 0 {
		t.Fatalf("no resume command:\n%s", out)
	}
	child := strings.Fields(out[i+len("codex resume "):])[0]
	matches, _ := filepath.Glob(filepath.Join(dir, "rollout-*-"+child+".jsonl"))
	if len(matches) != 1 {
		t.Fatalf("forked rollout for %s: %v", child, matches)
	}
	got, _ := os.ReadFile(matches[0])
	lines := bytes.Split(bytes.TrimSuffix(orig, []byte("\n")), []byte("\n"))
	want := append(bytes.Join(lines[:8], []byte("\n")), '\n') // meta, turn 1, and the turn context written before the prompt
	want = bytes.Replace(want, []byte(`"id":"`+sid+`"`), []byte(`"id":"`+child+`"`), 1)
	if !bytes.Equal(got, want) {
		t.Errorf("forked rollout:\n%s\nwant\n%s", got, want)
	}
	if b, _ := os.ReadFile(rollout); !bytes.Equal(b, orig) {
		t.Error("the original rollout changed")
	}
}
