package agent

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ckfs-dev/ckfs/session"
	"github.com/ckfs-dev/ckfs/workspace"
)

func FuzzHookInput(f *testing.F) {
	f.Add([]byte(`{"session_id":"7f3c2a9e-4b1d-4e8a-9c2f-1a2b3c4d5e6f","transcript_path":"/home/dev/.claude/projects/-home-dev-src-shop/7f3c2a9e-4b1d-4e8a-9c2f-1a2b3c4d5e6f.jsonl","cwd":"/home/dev/src/shop","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"sed -i 's/a/b/' x.go","description":"edit"},"tool_use_id":"toolu_01ABC"}`))
	f.Add([]byte(`{"session_id":"s","cwd":"/r","hook_event_name":"UserPromptSubmit","prompt":"fix it\nplease"}`))
	f.Add([]byte(`{"session_id":"s","cwd":"/r","hook_event_name":"PostToolUse","tool_use_id":"call_1","turn_id":"t1","model":"gpt-5-codex","tool_response":{"exit_code":0}}`))
	f.Add([]byte(`{"cwd":"relative","hook_event_name":"SessionStart"}`))
	f.Add([]byte(`{"cwd":"/r","hook_event_name":"PreToolUse","tool_use_id":"` + strings.Repeat("a", 5000) + `\nforged line"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := ParseHookInput(b)
		if err != nil {
			// hook.log gets one short line, whatever the input holds.
			if msg := err.Error(); strings.Contains(msg, "\n") || len(msg) > 512 {
				t.Fatalf("error of %d bytes, or over more than one line: %q", len(msg), msg)
			}
			return
		}
		if in.Event == "" || !strings.HasPrefix(in.Cwd, "/") {
			t.Fatalf("accepted input without an event or an absolute cwd: %+v", in)
		}
		if in.SessionID != "" && !session.ValidID(in.SessionID) {
			t.Fatalf("accepted a session id that names a path: %q", in.SessionID)
		}
		ToolLabel(in.ToolInput) // must not panic
	})
}

// A hook never fails and never prints, on stdout or on stderr (which the
// agent may show), whatever it is given: the problem goes to hook.log. A
// hook in a repository that is no ckfs workspace (hooks installed for
// every repository) is no problem: it logs nothing.
func TestHookFailsOpen(t *testing.T) {
	for _, c := range []struct {
		in     string
		logged bool
	}{
		{"", true},
		{"not json", true},
		{`{"hook_event_name":"PreToolUse","cwd":"/nonexistent/ckfs/repo","tool_use_id":"t"}`, false},
		{`{"hook_event_name":"PreToolUse","cwd":"/","tool_use_id":"t"}`, false},
		{`{"hook_event_name":"PreToolUse","cwd":"/","tool_use_id":""}`, true}, // bad input: logged
	} {
		var stderr bytes.Buffer
		home := t.TempDir()
		t.Setenv("CKFS_HOME", home)
		RunHook("claude", strings.NewReader(c.in), &stderr, time.Now())
		if stderr.Len() != 0 {
			t.Errorf("input %q: the hook printed %q", c.in, stderr.String())
		}
		b, _ := os.ReadFile(filepath.Join(home, "hook.log"))
		if logged := len(b) > 0; logged != c.logged {
			t.Errorf("input %q: logged %q, want logged: %v", c.in, b, c.logged)
		}
	}
}

// hook.log never grows past its limit: a hook failing on every call moves
// the full log aside and starts a new one.
func TestHookLogIsBounded(t *testing.T) {
	home := t.TempDir()
	t.Setenv("CKFS_HOME", home)
	log := filepath.Join(home, "hook.log")
	if err := os.WriteFile(log, bytes.Repeat([]byte("x"), maxHookLog+1), 0o600); err != nil {
		t.Fatal(err)
	}
	RunHook("claude", strings.NewReader("not json"), io.Discard, time.Now())
	st, err := os.Stat(log)
	if err != nil || st.Size() > 1000 {
		t.Fatalf("hook.log after it outgrew its limit: %v, %v", st, err)
	}
	if st, err := os.Stat(log + ".1"); err != nil || st.Size() != maxHookLog+1 {
		t.Errorf("the full log was not kept as hook.log.1: %v, %v", st, err)
	}
}

// A background task's notification arrives as a prompt in the middle of a
// turn: it writes no mark (a mark there would be a cut between a tool call
// and its result) and closes no open call; the user's next prompt does.
func TestInjectedPromptsAreNoTurns(t *testing.T) {
	store, root := t.TempDir(), t.TempDir()
	if err := workspace.Init(store, root); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	hook := func(event, prompt string) {
		t.Helper()
		in := &HookInput{Event: event, SessionID: "7f3c2a9e-4b1d-4e8a-9c2f-1a2b3c4d5e6f", Cwd: root, Prompt: prompt, ToolUseID: "toolu_01", ToolName: "Bash"}
		if err := handleHook(store, claude, in, now); err != nil {
			t.Fatalf("%s %q: %v", event, prompt, err)
		}
	}
	marks := func() int {
		ms, _, err := session.LoadMarks(store)
		if err != nil {
			t.Fatal(err)
		}
		return len(ms)
	}
	hook("UserPromptSubmit", "run the tests in the background")
	if marks() != 1 {
		t.Fatalf("%d marks after the user's prompt, want 1", marks())
	}
	for _, p := range []string{
		"<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n</task-notification>",
		"  <system-reminder>the file changed</system-reminder>",
		// Claude Code 2.1 puts a header before the notification.
		"[SYSTEM NOTIFICATION - NOT USER INPUT]\nThis is an automated background-task event, NOT a message from the user.\n\n<task-notification>\n<task-id>b2</task-id>\n</task-notification>",
	} {
		hook("UserPromptSubmit", p)
	}
	if marks() != 1 {
		t.Fatalf("%d marks after injected prompts, want still 1", marks())
	}
	hook("UserPromptSubmit", "<b>bold</b> is what I want")
	if marks() != 2 {
		t.Fatalf("%d marks after the user's second prompt, want 2", marks())
	}
	if InjectedPrompt("fix <task-notification> handling") {
		t.Error("a prompt that mentions a tag is the user's")
	}
}

// A hook whose transcript_path names /dev/zero or a FIFO answers at once
// and does not grow: it reads only regular files.
func TestHookRefusesEndlessTranscripts(t *testing.T) {
	store, root := t.TempDir(), t.TempDir()
	if err := workspace.Init(store, root); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, agent := range all {
		for _, p := range []string{"/dev/zero", fifo} {
			in := &HookInput{Event: "UserPromptSubmit", SessionID: "7f3c2a9e-4b1d-4e8a-9c2f-1a2b3c4d5e6f", Cwd: root, Prompt: "go", TranscriptPath: p}
			done := make(chan error, 1)
			go func() { done <- handleHook(store, agent, in, time.Now()) }()
			select {
			case <-done:
			case <-time.After(HookDeadline):
				t.Fatalf("%s hook with transcript %s did not return", agent.Name, p)
			}
		}
	}
}

// A subagent's calls outlive the main thread's turn boundaries: the main
// thread's Stop and a compaction's SessionStart leave them open, its own
// SubagentStop closes them (as unfinished), and a new process's
// SessionStart closes whatever any subagent left open.
func TestSubagentCallsCloseAtTheSubagentsEnd(t *testing.T) {
	store, root := t.TempDir(), t.TempDir()
	if err := workspace.Init(store, root); err != nil {
		t.Fatal(err)
	}
	const sid = "7f3c2a9e-4b1d-4e8a-9c2f-1a2b3c4d5e6f"
	hook := func(in HookInput) {
		t.Helper()
		in.SessionID, in.Cwd = sid, root
		if err := handleHook(store, claude, &in, time.Now()); err != nil {
			t.Fatalf("%+v: %v", in, err)
		}
	}
	open := func(agent string) []string {
		t.Helper()
		evs, err := session.OpenSubagentCalls(store, sid, agent)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, e := range evs {
			ids = append(ids, e.Call)
		}
		return ids
	}
	hook(HookInput{Event: "SessionStart", Source: "startup"})
	hook(HookInput{Event: "UserPromptSubmit", Prompt: "delegate"})
	hook(HookInput{Event: "PreToolUse", ToolName: "Agent", ToolUseID: "toolu_task"})
	hook(HookInput{Event: "PostToolUse", ToolName: "Agent", ToolUseID: "toolu_task"})
	hook(HookInput{Event: "PreToolUse", ToolName: "Write", ToolUseID: "toolu_a", AgentID: "a1"})
	hook(HookInput{Event: "PreToolUse", ToolName: "Bash", ToolUseID: "toolu_b", AgentID: "b2"})
	hook(HookInput{Event: "PreToolUse", ToolName: "Bash", ToolUseID: "toolu_main"})
	hook(HookInput{Event: "Stop"})
	if calls, _ := session.OpenCalls(store, sid); len(calls) != 0 {
		t.Errorf("the main thread's call is open after its Stop: %v", calls)
	}
	hook(HookInput{Event: "SessionStart", Source: "compact"})
	if got := strings.Join(open(""), " "); got != "toolu_a toolu_b" {
		t.Fatalf("after the main thread's Stop and a compaction, the subagents' open calls are %q, want both", got)
	}
	hook(HookInput{Event: "SubagentStop", AgentID: "a1"})
	if got := strings.Join(open(""), " "); got != "toolu_b" {
		t.Fatalf("after a1 stopped, the open subagent calls are %q, want b2's only", got)
	}
	hook(HookInput{Event: "SessionStart", Source: "resume"})
	if got := open(""); len(got) != 0 {
		t.Fatalf("a new process's start left subagent calls open: %v", got)
	}
}
