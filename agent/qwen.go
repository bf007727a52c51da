package agent

import (
	"github.com/ckfs-dev/ckfs/transcript"
	"github.com/ckfs-dev/ckfs/workspace"
)

// qwen is Qwen Code. Its hooks are Claude Code's (the same events, a
// tool_use_id of its own on each tool event) in settings.json; it sends
// PostToolUseFailure for a call that failed, and a UserPromptSubmit with
// an empty prompt each time it goes on after tool results. For one run
// ckfs passes them as the system defaults file, copied from the one in
// place with ckfs's hooks added; nothing when they are installed in the
// user's settings already.
var qwen = &Agent{
	Name:       "qwen",
	Title:      "Qwen Code",
	Binary:     "qwen",
	BinaryEnv:  "CKFS_QWEN",
	Package:    "@qwen-code/qwen-code",
	Dialect:    transcript.Qwen,
	matchAll:   "*",
	timeout:    60, // seconds
	toolEvents: []string{"PostToolUseFailure"},
	turnEvents: []string{"SubagentStop"},
	settingsPath: func() (string, error) {
		return userPath("QWEN_HOME", ".qwen", "settings.json")
	},
	launch: func(store string, hooks map[string]any) (*Launch, error) {
		if user, err := userPath("QWEN_HOME", ".qwen", "settings.json"); err == nil && hasHooks(user, hooks) {
			return &Launch{}, nil // installed: each would run twice
		}
		return systemDefaults(workspace.Layout(store).AgentSettings("qwen"), "QWEN_CODE_SYSTEM_DEFAULTS_PATH", "QWEN_CODE_SYSTEM_SETTINGS_PATH", "/etc/qwen-code/settings.json", hooks)
	},
	continues: true,
}
