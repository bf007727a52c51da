package agent

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/ckfs-dev/ckfs/internal/durable"
	"github.com/ckfs-dev/ckfs/transcript"
	"github.com/ckfs-dev/ckfs/workspace"
)

// claude is Claude Code. Its hooks live in settings.json; for one run ckfs
// passes a settings file of its own, kept in the store, with --settings.
// It sends PostToolUseFailure for a call that failed, and a Post event for
// every call that ran.
var claude = &Agent{
	Name:       "claude",
	Title:      "Claude Code",
	Binary:     "claude",
	BinaryEnv:  "CKFS_CLAUDE",
	Package:    "@anthropic-ai/claude-code",
	Dialect:    transcript.Claude,
	matchAll:   "*",
	timeout:    60, // seconds
	toolEvents: []string{"PostToolUseFailure"},
	turnEvents: []string{"SubagentStop"},
	settingsPath: func() (string, error) {
		return userPath("CLAUDE_CONFIG_DIR", ".claude", "settings.json")
	},
	launch: func(store string, hooks map[string]any) (*Launch, error) {
		settings := workspace.Layout(store).AgentSettings("claude")
		if err := writeSettings(settings, hooks); err != nil {
			return nil, err
		}
		return &Launch{Args: []string{"--settings", settings}}, nil
	},
}

// writeSettings writes a settings file ckfs keeps in the store for one run.
func writeSettings(path string, settings map[string]any) error {
	b, _ := json.MarshalIndent(settings, "", "  ")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return durable.WriteFile(path, append(b, '\n'), 0o600)
}
