package agent_test

import (
	"fmt"
	"slices"

	"github.com/ckfs-dev/ckfs/agent"
)

// Each agent ckfs has hooks for is one descriptor: its hook settings send
// every event ckfs uses to ckfs's hook command.
func ExampleLookup() {
	a, err := agent.Lookup("codex")
	if err != nil {
		panic(err)
	}
	hooks := a.HookSettings("/usr/local/bin/ckfs")["hooks"].(map[string]any)
	events := make([]string, 0, len(hooks))
	for ev := range hooks {
		events = append(events, ev)
	}
	slices.Sort(events)
	fmt.Println(a.Title, a.Binary, a.Package)
	fmt.Println(events)
	_, err = agent.Lookup("vim")
	fmt.Println(err)
	// Output:
	// Codex CLI codex @openai/codex
	// [PostToolUse PreToolUse SessionStart Stop UserPromptSubmit]
	// "vim": ckfs has hooks for claude, codex, gemini, qwen and opencode; for other agents use ckfs run -- CMD
}
