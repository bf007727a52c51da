package integration

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ckfs-dev/ckfs/session"
)

// A tool call that never gets its Post event (the user rejected it,
// another hook blocked it, it was left running) is closed, as unfinished,
// by the end of the turn: no window stays open, rewinds are not blocked,
// and the session log holds a result for it. Calls that wrote nothing are
// left out of the log and of --last.
func TestUnfinishedCallsCloseAtTurnEnd(t *testing.T) {
	w := mountWorkspace(t, `printf 'v0\n' > a.txt`)
	a := newClaudeAgent(w)
	a.turn("edit a", true, []toolCall{{"toolu_edit", "Bash", `printf 'v1\n' > a.txt`}})
	// A read-only call: a window in which nothing is written.
	a.hook(map[string]any{"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_use_id": "toolu_read", "tool_input": map[string]any{"file_path": filepath.Join(w.root, "a.txt")}})
	a.hook(map[string]any{"hook_event_name": "PostToolUse", "tool_name": "Read", "tool_use_id": "toolu_read", "tool_input": map[string]any{"file_path": filepath.Join(w.root, "a.txt")}, "tool_response": map[string]any{}})
	// A call whose Post event never comes: it writes, then the turn ends.
	a.hook(map[string]any{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "toolu_lost", "tool_input": map[string]any{"command": "printf v2 > a.txt"}})
	w.sh(`printf 'v2\n' > a.txt`)
	a.hook(map[string]any{"hook_event_name": "Stop", "stop_hook_active": false})

	if st := w.status(); st.Daemon == nil || len(st.Daemon.OpenWindows) != 0 {
		t.Fatalf("windows still open after the turn ended: %+v", st.Daemon)
	}
	log := w.ckfs("log")
	if !strings.Contains(log, "window toolu_lost") || !strings.Contains(log, "unfinished") {
		t.Errorf("log does not show the unfinished call:\n%s", log)
	}
	if strings.Contains(log, "toolu_read") {
		t.Errorf("log lists a window in which nothing was written:\n%s", log)
	}
	if all := w.ckfs("log", "--all"); !strings.Contains(all, "toolu_read") {
		t.Errorf("log --all leaves out the read-only window:\n%s", all)
	}
	evs, _, err := session.Load(session.Path(w.store, a.session))
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	for _, e := range evs {
		if e.Kind == session.KindToolResult && e.Call == "toolu_lost" && e.Unfinished {
			closed = true
		}
	}
	if !closed {
		t.Errorf("the session log has no unfinished result for toolu_lost")
	}
	// --last 1 is the unfinished call (the read-only one does not count),
	// and rewinding it is not blocked.
	w.ckfs("rewind", "--files", "--last", "1")
	if got := w.read("a.txt"); got != "v1\n" {
		t.Errorf("a.txt after --last 1 = %q, want v1", got)
	}
	w.ckfs("rewind", "--files", "--last", "2")
	if got := w.read("a.txt"); got != "v0\n" {
		t.Errorf("a.txt after --last 2 = %q, want v0", got)
	}
}

// A transcript that starts with metadata lines (a summary, a
// file-history snapshot) before the first prompt: the first mark points
// past them, and rewinding both sides to it works, the conversation side
// saying that nothing had been said yet.
func TestFirstPromptAfterMetadataLines(t *testing.T) {
	w := mountWorkspace(t, `printf 'v0\n' > a.txt`)
	a := newClaudeAgent(w)
	a.entry("summary", nil, map[string]any{"summary": "Earlier work", "leafUuid": "00000000-0000-4000-8000-00000000aaaa"})
	a.entry("file-history-snapshot", nil, map[string]any{"messageId": "00000009-0000-4000-8000-000000000009", "snapshot": map[string]any{}, "isSnapshotUpdate": false})
	a.last = ""
	a.turn("edit a", true, []toolCall{{"toolu_e1", "Bash", `printf 'v1\n' > a.txt`}})
	a.turn("edit again", true, []toolCall{{"toolu_e2", "Bash", `printf 'v2\n' > a.txt`}})
	out, code := w.exitCode(nil, "rewind", "--mark", "1", "--files", "--conversation")
	if code != 0 || !strings.Contains(out, "it was empty at mark 1") {
		t.Fatalf("rewind both sides to the first mark: exit %d\n%s", code, out)
	}
	if got := w.read("a.txt"); got != "v0\n" {
		t.Errorf("a.txt = %q", got)
	}
}

// A hook never prints (the agent might show it): a problem goes to the
// store's hook.log, and ckfs status reports it.
func TestHookProblemsShowInStatus(t *testing.T) {
	w := mountWorkspace(t, "")
	ev := `{"hook_event_name":"PostToolUse","session_id":"s1","cwd":"` + w.root + `","tool_name":"Bash","tool_use_id":"toolu_never_opened"}`
	c := exec.Command(ckfsBin, "hook", "claude")
	c.Dir, c.Env, c.Stdin = w.root, w.env(), strings.NewReader(ev)
	out, err := c.CombinedOutput()
	if err != nil || len(out) != 0 {
		t.Fatalf("hook: %v, printed %q", err, out)
	}
	if st := w.ckfs("status"); !strings.Contains(st, "hooks      1 problems") || !strings.Contains(st, "toolu_never_opened") {
		t.Errorf("status does not report the hook's problem:\n%s", st)
	}
}

// After a conversation rewind, the resume command ckfs prints keeps
// capture on: it goes through ckfs agent.
func TestResumeCommandKeepsCapture(t *testing.T) {
	w := mountWorkspace(t, `printf 'v0\n' > a.txt`)
	a := newClaudeAgent(w)
	a.turn("one", true, []toolCall{{"toolu_r1", "Bash", `printf 'v1\n' > a.txt`}})
	a.turn("two", true, []toolCall{{"toolu_r2", "Bash", `printf 'v2\n' > a.txt`}})
	out := w.ckfs("rewind", "--mark", "2", "--conversation")
	if !strings.Contains(out, "resume it with: ckfs agent claude --resume ") {
		t.Errorf("the printed resume command does not keep capture:\n%s", out)
	}
}

// An agent that exits without reporting back (killed, crashed, its
// terminal closed) leaves no window open: the daemon closes the window of
// its call as unfinished, and a rewind is not refused for it. While the
// agent runs, its window stays open.
func TestWindowOfAnAgentThatExitedCloses(t *testing.T) {
	w := mountWorkspace(t, `printf 'v0\n' > a.txt`)
	ev := filepath.Join(t.TempDir(), "pre.json")
	b, _ := json.Marshal(map[string]any{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "toolu_gone",
		"session_id": "s-gone", "cwd": w.root, "tool_input": map[string]any{"command": "printf v1 > a.txt"}})
	if err := os.WriteFile(ev, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// The agent is timeout (the nearest ancestor of the hook that is not
	// a shell); its call writes, then runs on.
	started := filepath.Join(t.TempDir(), "started")
	agent := exec.Command("timeout", "120", "sh", "-c", `"$0" hook claude < "$1" && printf 'v1\n' > a.txt && touch "$2" && exec sleep 120`, ckfsBin, ev, started)
	agent.Dir, agent.Env = w.root, w.env()
	agent.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	stop := func() { syscall.Kill(-agent.Process.Pid, syscall.SIGKILL); agent.Wait() }
	defer stop()
	openWindows := func() []string {
		if st := w.status(); st.Daemon != nil {
			return st.Daemon.OpenWindows
		}
		return nil
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(started); !errors.Is(err, fs.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the agent's call did not write")
		}
	}
	// Two of the daemon's sweeps (a second apart) find the agent running.
	time.Sleep(2100 * time.Millisecond)
	if got := openWindows(); len(got) != 1 || got[0] != "toolu_gone" {
		t.Fatalf("open windows while the agent runs: %v", got)
	}
	stop()
	for deadline := time.Now().Add(15 * time.Second); len(openWindows()) > 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the window of an agent that exited is still open: %v", openWindows())
		}
	}
	if log := w.ckfs("log"); !strings.Contains(log, "window toolu_gone") || !strings.Contains(log, "unfinished") || !strings.Contains(log, "M a.txt") {
		t.Errorf("log does not show the agent's call as unfinished, with its write:\n%s", log)
	}
	w.ckfs("rewind", "--files", "--last", "1")
	if got := w.read("a.txt"); got != "v0\n" {
		t.Errorf("a.txt after --last 1 = %q, want v0", got)
	}
}
