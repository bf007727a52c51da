package doctor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ckfs-dev/ckfs/agent"
)

// ckfs doctor names, for every agent, where its executable is (or how to
// get it) and whether ckfs's hooks are installed in its settings.
func TestDoctorNamesEachAgentsSetup(t *testing.T) {
	home, bin := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	for _, v := range []string{"GEMINI_CLI_HOME", "QWEN_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "CKFS_GEMINI", "CKFS_QWEN", "CKFS_CLAUDE", "CKFS_CODEX"} {
		t.Setenv(v, "")
	}
	t.Setenv("PATH", bin)
	os.WriteFile(filepath.Join(bin, "gemini"), []byte("#!/bin/sh\n"), 0o755)
	exe, _ := os.Executable()
	g, _ := agent.Lookup("gemini")
	path, _ := g.SettingsPath()
	var sink strings.Builder
	if err := agent.InstallHooks(path, g.HookSettings(exe), nil, false, time.Now(), &sink, &sink); err != nil {
		t.Fatal(err)
	}
	got := map[string]Diagnosis{}
	for _, d := range agentChecks() {
		got[d.Check] = d
	}
	if d := got["agent gemini"]; d.Status != "ok" || !strings.Contains(d.Detail, filepath.Join(bin, "gemini")) || !strings.Contains(d.Detail, "installed in "+path) {
		t.Errorf("gemini: %+v", d)
	}
	if d := got["agent qwen"]; d.Status != "info" || !strings.Contains(d.Detail, "npm install -g @qwen-code/qwen-code") || !strings.Contains(d.Detail, "passed for each run") {
		t.Errorf("qwen: %+v", d)
	}
	if len(got) != len(agent.Names()) {
		t.Errorf("%d agent checks for %v", len(got), agent.Names())
	}
}
