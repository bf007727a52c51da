package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ckfs-dev/ckfs/session"
	"github.com/ckfs-dev/ckfs/workspace"
)

// Gemini CLI's tool events carry no call id: a BeforeTool gets a new one
// and its AfterTool the oldest open call of the session with the same tool
// and input, whatever order calls run in and however the log escapes the
// input; an AfterTool that matches nothing closes nothing.
func TestCallsWithoutIDsArePaired(t *testing.T) {
	store, root := t.TempDir(), t.TempDir()
	if err := workspace.Init(store, root); err != nil {
		t.Fatal(err)
	}
	const sid = "d7ca8b40-1ac6-4116-b199-08c887746379"
	now := time.Now()
	event := func(name, ts, tool, input string) *HookInput {
		t.Helper()
		in := &HookInput{Event: gemini.canonicalEvent(name), SessionID: sid, Cwd: root, Timestamp: ts, ToolName: tool, ToolInput: json.RawMessage(input)}
		if err := handleHook(store, gemini, in, now); err != nil {
			in.ToolUseID = "error: " + err.Error()
		}
		return in
	}
	a := event("BeforeTool", "2026-12-05T16:02:07.206Z", "run_shell_command", `{"command":"printf 'a' > a.txt"}`)
	b := event("BeforeTool", "2026-12-05T16:02:07.207Z", "write_file", `{"file_path":"b.txt","content":"<b>"}`)
	c := event("BeforeTool", "2026-12-05T16:02:07.208Z", "run_shell_command", `{"command":"printf 'a' > a.txt"}`)
	if a.ToolUseID == b.ToolUseID || a.ToolUseID == c.ToolUseID || !strings.HasPrefix(a.ToolUseID, "gemini-") {
		t.Fatalf("ids %q %q %q", a.ToolUseID, b.ToolUseID, c.ToolUseID)
	}
	// The write_file's input comes back with its keys in another order
	// and its < unescaped: the same input.
	if got := event("AfterTool", "", "write_file", `{"content":"<b>","file_path":"b.txt"}`); got.ToolUseID != b.ToolUseID {
		t.Errorf("write_file paired with %q, want %q", got.ToolUseID, b.ToolUseID)
	}
	if got := event("AfterTool", "", "run_shell_command", `{"command":"printf 'a' > a.txt"}`); got.ToolUseID != a.ToolUseID {
		t.Errorf("the first of two identical calls paired with %q, want the oldest %q", got.ToolUseID, a.ToolUseID)
	}
	if got := event("AfterTool", "", "run_shell_command", `{"command":"ls"}`); !strings.HasPrefix(got.ToolUseID, "error: ") {
		t.Errorf("an AfterTool that matches no open call was paired with %q", got.ToolUseID)
	}
	open, err := session.OpenCalls(store, sid)
	if err != nil || len(open) != 1 || open[0] != c.ToolUseID {
		t.Errorf("open calls %v, %v; want only %s", open, err, c.ToolUseID)
	}
}

// Each agent's settings name ckfs's events in the agent's own words, with
// its own unit of time, and the hook reads them back as ckfs's.
func TestHookSettingsSpeakTheAgentsNames(t *testing.T) {
	for _, tc := range []struct {
		a       *Agent
		events  []string
		timeout int
	}{
		{claude, []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop", "SubagentStop"}, 60},
		{gemini, []string{"SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent"}, 60000},
		{qwen, []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop", "SubagentStop"}, 60},
	} {
		hooks := tc.a.HookSettings("/usr/bin/ckfs")["hooks"].(map[string]any)
		if len(hooks) != len(tc.events) {
			t.Errorf("%s: %d events, want %v", tc.a.Name, len(hooks), tc.events)
		}
		for _, ev := range tc.events {
			g, ok := hooks[ev].([]map[string]any)
			if !ok {
				t.Errorf("%s: no %s hook", tc.a.Name, ev)
				continue
			}
			if to := g[0]["hooks"].([]any)[0].(map[string]any)["timeout"]; to != tc.timeout {
				t.Errorf("%s %s: timeout %v, want %d", tc.a.Name, ev, to, tc.timeout)
			}
		}
	}
	if gemini.canonicalEvent("BeforeAgent") != "UserPromptSubmit" || gemini.canonicalEvent("SessionEnd") != "SessionEnd" || claude.canonicalEvent("Stop") != "Stop" {
		t.Error("canonical event names")
	}
}

// Qwen Code submits an empty prompt each time it goes on after tool
// results: no mark, and the open calls of the turn stay open.
func TestContinuationsAreNoTurns(t *testing.T) {
	store, root := t.TempDir(), t.TempDir()
	if err := workspace.Init(store, root); err != nil {
		t.Fatal(err)
	}
	const sid = "77331ae1-6a4d-4782-9ed3-1f426fe75ad3"
	for _, in := range []*HookInput{
		{Event: "UserPromptSubmit", Prompt: "Turn one"},
		{Event: "PreToolUse", ToolUseID: "toolu_1", ToolName: "run_shell_command"},
		{Event: "UserPromptSubmit", Prompt: ""},
	} {
		in.SessionID, in.Cwd = sid, root
		if err := handleHook(store, qwen, in, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if ms, _, _ := session.LoadMarks(store); len(ms) != 1 {
		t.Errorf("%d marks, want 1", len(ms))
	}
	if open, _ := session.OpenCalls(store, sid); len(open) != 1 {
		t.Errorf("open calls after a continuation: %v", open)
	}
}

// ckfs agent gemini adds nothing when the user installed ckfs's hooks in
// Gemini's settings (no hook would run twice); otherwise, as root, it
// passes a system defaults file: the one in place with ckfs's hooks added.
func TestGeminiLaunch(t *testing.T) {
	home, store := t.TempDir(), t.TempDir()
	t.Setenv("GEMINI_CLI_HOME", home)
	defaults := filepath.Join(t.TempDir(), "system-defaults.json")
	os.WriteFile(defaults, []byte(`{"general":{"vimMode":true}}`), 0o600)
	t.Setenv("GEMINI_CLI_SYSTEM_DEFAULTS_PATH", defaults)
	exe := "/usr/local/bin/ckfs"
	if os.Geteuid() == 0 {
		l, err := gemini.Launch(store, exe)
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Env) != 1 || !strings.HasPrefix(l.Env[0], "GEMINI_CLI_SYSTEM_DEFAULTS_PATH=") {
			t.Fatalf("launch env %v", l.Env)
		}
		path := strings.TrimPrefix(l.Env[0], "GEMINI_CLI_SYSTEM_DEFAULTS_PATH=")
		b, _ := os.ReadFile(path)
		if !strings.Contains(string(b), "vimMode") || !strings.Contains(string(b), "BeforeTool") {
			t.Errorf("one-run defaults:\n%s", b)
		}
		if l.Temp != "" {
			os.Remove(l.Temp)
		}
	} else if _, err := gemini.Launch(store, exe); err == nil || !strings.Contains(err.Error(), "ckfs hooks install gemini") {
		t.Errorf("launch as another user than root: %v", err)
	}
	user, _ := gemini.SettingsPath()
	var sink strings.Builder
	if err := InstallHooks(user, gemini.HookSettings(exe), nil, false, time.Now(), &sink, &sink); err != nil {
		t.Fatal(err)
	}
	if l, err := gemini.Launch(store, exe); err != nil || len(l.Args)+len(l.Env) != 0 || l.Temp != "" {
		t.Errorf("launch with the hooks installed: %+v, %v", l, err)
	}
}

// ckfs agent qwen passes its hooks as the system defaults file, unless the
// user installed them (then each would run twice).
func TestQwenLaunch(t *testing.T) {
	t.Setenv("QWEN_HOME", t.TempDir())
	t.Setenv("QWEN_CODE_SYSTEM_DEFAULTS_PATH", "")
	t.Setenv("QWEN_CODE_SYSTEM_SETTINGS_PATH", filepath.Join(t.TempDir(), "settings.json"))
	store, exe := t.TempDir(), "/usr/local/bin/ckfs"
	l, err := qwen.Launch(store, exe)
	if err != nil || len(l.Env) != 1 || l.Env[0] != "QWEN_CODE_SYSTEM_DEFAULTS_PATH="+workspace.Layout(store).AgentSettings("qwen") {
		t.Fatalf("launch: %+v, %v", l, err)
	}
	user, _ := qwen.SettingsPath()
	var sink strings.Builder
	if err := InstallHooks(user, qwen.HookSettings(exe), nil, false, time.Now(), &sink, &sink); err != nil {
		t.Fatal(err)
	}
	if l, err := qwen.Launch(store, exe); err != nil || len(l.Env)+len(l.Args) != 0 {
		t.Errorf("launch with the hooks installed: %+v, %v", l, err)
	}
}
