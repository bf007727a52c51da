package agent_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ckfs-dev/ckfs/agent"
)

// ckfs hooks install merges into the user's own settings: their settings
// and hooks stay, ours are added once (a second run changes nothing), a
// copy of the old file is kept, --dry-run writes nothing, and a file that
// is not JSON is refused untouched.
func TestHooksInstallMerges(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	mine := `{"model": "opus", "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "my-guard"}]}]}}`
	os.WriteFile(path, []byte(mine), 0o600)
	ours := agent.Must("claude").HookSettings("/usr/local/bin/ckfs")
	now := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	var out, msg bytes.Buffer

	if err := agent.InstallHooks(path, ours, nil, true, now, &out, &msg); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != mine {
		t.Fatal("--dry-run wrote the file")
	}
	if !strings.Contains(out.String(), "my-guard") || !strings.Contains(out.String(), "ckfs hook claude") {
		t.Errorf("dry run output:\n%s", out.String())
	}

	if err := agent.InstallHooks(path, ours, nil, false, now, &out, &msg); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Model string                       `json:"model"`
		Hooks map[string][]json.RawMessage `json:"hooks"`
	}
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Model != "opus" || len(got.Hooks["PreToolUse"]) != 2 || !strings.Contains(string(got.Hooks["PreToolUse"][0]), "my-guard") {
		t.Fatalf("merged settings:\n%s", b)
	}
	for ev := range ours["hooks"].(map[string]any) {
		if len(got.Hooks[ev]) == 0 {
			t.Errorf("event %s not installed", ev)
		}
	}
	if backup, err := os.ReadFile(path + ".ckfs-backup-20261203T090000Z"); err != nil || string(backup) != mine {
		t.Errorf("backup: %q %v", backup, err)
	}

	msg.Reset()
	if err := agent.InstallHooks(path, ours, nil, false, now.Add(time.Minute), &out, &msg); err != nil {
		t.Fatal(err)
	}
	if b2, _ := os.ReadFile(path); !bytes.Equal(b, b2) || !strings.Contains(msg.String(), "already") {
		t.Errorf("a second install changed the file or did not say so: %s", msg.String())
	}

	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("{not json"), 0o600)
	if err := agent.InstallHooks(bad, ours, nil, false, now, &out, &msg); err == nil || !strings.Contains(err.Error(), "nothing was changed") {
		t.Errorf("invalid JSON: %v", err)
	}
	if b, _ := os.ReadFile(bad); string(b) != "{not json" {
		t.Error("an invalid file was changed")
	}
}

// Whatever the user's settings hold, merging never panics, and a merge
// that succeeds keeps every top-level setting and is idempotent.
func FuzzMergeHooks(f *testing.F) {
	f.Add([]byte(`{"model":"opus","hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"g"}]}]}}`))
	f.Add([]byte(`{"hooks":{"Stop":"oops"}}`))
	f.Add([]byte(`{"hooks":[1,2]}`))
	ours := agent.Must("claude").HookSettings("/usr/local/bin/ckfs")["hooks"].(map[string]any)
	f.Fuzz(func(t *testing.T, b []byte) {
		var settings map[string]any
		if json.Unmarshal(b, &settings) != nil || settings == nil {
			return
		}
		keys := len(settings)
		if _, err := agent.MergeHooks(settings, ours); err != nil {
			return
		}
		if len(settings) < keys {
			t.Fatal("a setting was dropped")
		}
		if n, err := agent.MergeHooks(settings, ours); err != nil || n != 0 {
			t.Fatalf("a second merge added %d groups (%v)", n, err)
		}
	})
}

func TestHookSettingsShape(t *testing.T) {
	var s struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Type    string `json:"type"`
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	b, _ := json.Marshal(agent.Must("claude").HookSettings("/opt/my tools/ckfs"))
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure"} {
		g := s.Hooks[ev]
		if len(g) != 1 || len(g[0].Hooks) != 1 || g[0].Hooks[0].Type != "command" || g[0].Hooks[0].Command != "'/opt/my tools/ckfs' hook claude" {
			t.Errorf("%s: %+v", ev, g)
		}
	}
	if s.Hooks["PreToolUse"][0].Matcher != "*" {
		t.Errorf("PreToolUse matcher %q", s.Hooks["PreToolUse"][0].Matcher)
	}
}

// With ckfs-hook beside ckfs, the hooks run it; an install over hooks
// that run "ckfs hook" changes them to it instead of adding a second set.
func TestHooksInstallSwitchesToTheHookExecutable(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "ckfs")
	os.WriteFile(exe, nil, 0o755)
	old := agent.Must("claude").HookSettings(exe) // no ckfs-hook yet: "ckfs hook claude"
	os.WriteFile(filepath.Join(dir, agent.HookExecutable), nil, 0o755)
	cmds := agent.Must("claude").HookCommands(exe)
	if cmds[0] != filepath.Join(dir, "ckfs-hook")+" claude" || cmds[1] != exe+" hook claude" {
		t.Fatalf("HookCommands = %q", cmds)
	}
	path := filepath.Join(dir, "settings.json")
	b, _ := json.Marshal(old)
	os.WriteFile(path, b, 0o600)
	var out, msg bytes.Buffer
	if err := agent.InstallHooks(path, agent.Must("claude").HookSettings(exe), cmds[1:], false, time.Now(), &out, &msg); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if n := strings.Count(string(got), "ckfs-hook claude"); n != 7 || strings.Contains(string(got), " hook claude") {
		t.Fatalf("after the install, %d hooks run ckfs-hook (want 7, and none the old form):\n%s", n, got)
	}
}

// A settings file that is a symbolic link is merged where it points and
// stays a link; a read-only one is refused and left as it is.
func TestHooksInstallKeepsLinksAndRespectsReadOnly(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles", "settings.json")
	os.MkdirAll(filepath.Dir(real), 0o755)
	os.WriteFile(real, []byte(`{"model":"x"}`+"\n"), 0o644)
	link := filepath.Join(dir, "settings.json")
	os.Symlink(real, link)
	ours := agent.Must("claude").HookSettings("/usr/bin/ckfs")
	var out, msg bytes.Buffer
	if err := agent.InstallHooks(link, ours, nil, false, time.Now(), &out, &msg); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(real); !bytes.Contains(b, []byte("PreToolUse")) || !bytes.Contains(b, []byte(`"model"`)) {
		t.Fatalf("the linked file was not merged:\n%s", b)
	}
	if fi, _ := os.Stat(real); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %o, want the file's own 0644", fi.Mode().Perm())
	}
	ro := filepath.Join(dir, "ro.json")
	os.WriteFile(ro, []byte("{}\n"), 0o444)
	err := agent.InstallHooks(ro, ours, nil, false, time.Now(), &out, &msg)
	if err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("a read-only settings file: %v", err)
	}
	if b, _ := os.ReadFile(ro); string(b) != "{}\n" {
		t.Errorf("the read-only file changed: %q", b)
	}
}

// Uninstall takes out exactly ckfs's hooks: the user's own hook in the
// same event and every later change stay, empty groups and events go, a
// copy is kept, and a second run changes nothing.
func TestUninstallKeepsTheUsersChanges(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	os.WriteFile(path, []byte(`{"theme":"dark","hooks":{"BeforeTool":[{"matcher":"write_file","hooks":[{"type":"command","command":"lint"}]}]}}`), 0o600)
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	cmds := agent.Must("gemini").HookCommands("/usr/bin/ckfs")
	var out, errw bytes.Buffer
	if err := agent.InstallHooks(path, agent.Must("gemini").HookSettings("/usr/bin/ckfs"), cmds[1:], false, now, &out, &errw); err != nil {
		t.Fatal(err)
	}
	// The user changes the file after the install.
	b, _ := os.ReadFile(path)
	os.WriteFile(path, bytes.Replace(b, []byte(`"dark"`), []byte(`"light"`), 1), 0o600)
	if err := agent.UninstallHooks(path, cmds, false, now.Add(time.Second), &out, &errw); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	b, _ = os.ReadFile(path)
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"theme": "light", "hooks": map[string]any{"BeforeTool": []any{map[string]any{"matcher": "write_file",
		"hooks": []any{map[string]any{"type": "command", "command": "lint"}}}}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after uninstall:\n%s", b)
	}
	if _, err := os.Stat(path + ".ckfs-backup-20261205T120001Z"); err != nil {
		t.Errorf("no copy kept: %v", err)
	}
	errw.Reset()
	if err := agent.UninstallHooks(path, cmds, false, now.Add(2*time.Second), &out, &errw); err != nil || !strings.Contains(errw.String(), "nothing was changed") {
		t.Errorf("a second uninstall: %v, %s", err, errw.String())
	}
}

// OpenCode's hooks are a plugin file: install writes ckfs's, once; a file
// of the same name that is not ckfs's is never replaced or removed; and
// uninstall removes ckfs's.
func TestOpenCodePluginInstall(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	a := agent.Must("opencode")
	path, _ := a.SettingsPath()
	var out, msg bytes.Buffer
	now := time.Now()
	if err := a.Install("/usr/bin/ckfs", false, now, &out, &msg); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || !bytes.Contains(b, []byte(`const HOOK = "/usr/bin/ckfs hook opencode"`)) || !bytes.Contains(b, []byte(`"tool.execute.before"`)) {
		t.Fatalf("plugin at %s: %v\n%s", path, err, b)
	}
	msg.Reset()
	if err := a.Install("/usr/bin/ckfs", false, now, &out, &msg); err != nil || !strings.Contains(msg.String(), "nothing was changed") {
		t.Errorf("a second install: %v, %s", err, msg.String())
	}
	if err := a.Uninstall("/usr/bin/ckfs", false, now, &out, &msg); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the plugin is still there: %v", err)
	}
	os.WriteFile(path, []byte("export const Mine = async () => ({})\n"), 0o644)
	for _, op := range []func(string, bool, time.Time, io.Writer, io.Writer) error{a.Install, a.Uninstall} {
		if err := op("/usr/bin/ckfs", false, now, &out, &msg); err == nil || !strings.Contains(err.Error(), "not ckfs's plugin") {
			t.Errorf("a user's own plugin file: %v", err)
		}
	}
	if b, _ := os.ReadFile(path); string(b) != "export const Mine = async () => ({})\n" {
		t.Errorf("the user's plugin changed:\n%s", b)
	}
}
