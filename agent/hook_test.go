package agent

import (
	"bytes"
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
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := ParseHookInput(b)
		if err != nil {
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
// agent may show), whatever it is given: the problem goes to hook.log.
func TestHookFailsOpen(t *testing.T) {
	for _, in := range []string{"", "not json", `{"hook_event_name":"PreToolUse","cwd":"/nonexistent/ckfs/repo","tool_use_id":"t"}`, `{"hook_event_name":"PreToolUse","cwd":"/","tool_use_id":""}`} {
		var stderr bytes.Buffer
		home := t.TempDir()
		t.Setenv("CKFS_HOME", home)
		RunHook("claude", strings.NewReader(in), &stderr, time.Now())
		if stderr.Len() != 0 {
			t.Errorf("input %q: the hook printed %q", in, stderr.String())
		}
		if b, err := os.ReadFile(filepath.Join(home, "hook.log")); err != nil || len(b) == 0 {
			t.Errorf("input %q: the problem was not logged: %v", in, err)
		}
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
