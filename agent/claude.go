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
	toolEvents: []string{"PostToolUseFailure"},
	settingsPath: func() (string, error) {
		return userPath("CLAUDE_CONFIG_DIR", ".claude", "settings.json")
	},
	launch: func(store string, hooks map[string]any) ([]string, error) {
		settings := workspace.Layout(store).ClaudeSettings()
		b, _ := json.MarshalIndent(hooks, "", "  ")
		if err := os.MkdirAll(filepath.Dir(settings), 0o700); err != nil {
			return nil, err
		}
		if err := durable.WriteFile(settings, append(b, '\n'), 0o600); err != nil {
			return nil, err
		}
		return []string{"--settings", settings}, nil
	},
}
