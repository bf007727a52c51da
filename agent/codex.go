package agent

import "github.com/ckfs-dev/ckfs/transcript"

// codex is Codex CLI. Its hooks live in hooks.json, with matchers that are
// regular expressions; for one run ckfs passes them as a configuration
// override, with the trust bypass Codex needs to run hooks nobody has
// reviewed (it skips them silently otherwise). It sends no Post event for
// a patch it intercepts from a shell call and applies itself.
var codex = &Agent{
	Name:      "codex",
	Title:     "Codex CLI",
	Binary:    "codex",
	BinaryEnv: "CKFS_CODEX",
	Package:   "@openai/codex",
	Dialect:   transcript.Codex,
	matchAll:  ".*",
	timeout:   60, // seconds
	settingsPath: func() (string, error) {
		return userPath("CODEX_HOME", ".codex", "hooks.json")
	},
	launch: func(store string, hooks map[string]any) (*Launch, error) {
		return &Launch{Args: []string{"-c", "hooks=" + TOMLInline(hooks["hooks"]), "--dangerously-bypass-hook-trust"}}, nil
	},
	postless: true,
}
