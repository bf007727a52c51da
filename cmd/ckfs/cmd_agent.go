package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ckfs-dev/ckfs/internal/atomicfile"
	"github.com/ckfs-dev/ckfs/transcript"
	"github.com/spf13/cobra"
)

// hookSettings is the hook configuration that sends every event ckfs uses
// to `ckfs hook AGENT`, in the shape Claude Code's settings files and Codex
// CLI's hooks.json share.
func hookSettings(exe, agent string) map[string]any {
	cmd := map[string]any{"type": "command", "command": shellQuote(exe) + " hook " + agent, "timeout": 60}
	all := "*"
	if agent == transcript.Codex {
		all = ".*" // Codex matchers are regular expressions
	}
	group := func(matcher bool) []map[string]any {
		g := map[string]any{"hooks": []any{cmd}}
		if matcher {
			g["matcher"] = all
		}
		return []map[string]any{g}
	}
	hooks := map[string]any{
		"SessionStart":     group(false),
		"UserPromptSubmit": group(false),
		"PreToolUse":       group(true),
		"PostToolUse":      group(true),
		// The end of a turn closes every call that never reported back.
		"Stop": group(false),
	}
	if agent == transcript.Claude {
		hooks["PostToolUseFailure"] = group(true)
	}
	return map[string]any{"hooks": hooks}
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func newHooksCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "hooks", Short: "Print the hook configuration for an agent"}
	cmd.AddCommand(&cobra.Command{
		Use:   "print (claude|codex)",
		Short: "Print the hook settings that connect an agent to ckfs",
		Long: `Print the JSON that installs ckfs's hooks. For Claude Code it is a settings
file: pass it with claude --settings FILE (which is what ckfs agent claude
does), or merge it into ~/.claude/settings.json. For Codex CLI it is a
hooks.json: put it in ~/.codex/hooks.json and turn hooks on in
~/.codex/config.toml with [features] codex_hooks = true.`,
		Example:   "  ckfs hooks print claude > ~/ckfs-claude.json && claude --settings ~/ckfs-claude.json\n  ckfs hooks print codex > ~/.codex/hooks.json",
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{transcript.Claude, transcript.Codex},
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] != transcript.Claude && args[0] != transcript.Codex {
				return withCode(ExitUsage, "hooks print %s: ckfs has hooks for claude and codex; for other agents use ckfs run -- CMD", args[0])
			}
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			return printJSON(cmd.OutOrStdout(), hookSettings(exe, args[0]))
		},
	})
	return cmd
}

func printJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func newAgentCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "agent claude [ARGS...]",
		Short: "Run Claude Code on this repository with ckfs capturing every tool call",
		Long: `Mount the current repository if it is not mounted, then start claude with
a settings file (kept in the store, never in the repository) that installs
ckfs's hooks: every tool call becomes a window, every prompt a mark. ARGS
go to claude unchanged. When claude exits, a mount this command made is
unmounted again. Set CKFS_CLAUDE to run another claude binary.`,
		Example: "  ckfs agent claude\n  ckfs agent claude --resume 7f3c2a9e-4b1d-4e8a-9c2f-1a2b3c4d5e6f",
		Args:    cobra.MinimumNArgs(1),
		// Everything after the agent name belongs to the agent.
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] == "-h" || args[0] == "--help" {
				return cmd.Help()
			}
			if args[0] != transcript.Claude {
				return withCode(ExitUsage, "agent %s: ckfs agent runs claude; for Codex CLI install the hooks (ckfs hooks print codex), for any other agent use ckfs run -- CMD", args[0])
			}
			return runAgentClaude(args[1:], cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}

func runAgentClaude(args []string, stdout, stderr io.Writer) error {
	root, err := absDir(".")
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	bin := os.Getenv("CKFS_CLAUDE")
	if bin == "" {
		bin = "claude"
	}
	if _, err := exec.LookPath(bin); err != nil {
		return withCode(ExitError, "%s is not installed or not on PATH (npm install -g @anthropic-ai/claude-code), or set CKFS_CLAUDE", bin)
	}
	store, _, err := findStoreFrom("", root)
	mountedHere := false
	if err != nil || !daemonAlive(store) {
		mount := exec.Command(exe, "mount", root)
		mount.Stdout, mount.Stderr = stderr, stderr
		if err := mount.Run(); err != nil {
			return fmt.Errorf("mount %s before starting claude: %w", root, err)
		}
		mountedHere = true
		if store, _, err = findStoreFrom("", root); err != nil {
			return err
		}
	}
	settings := filepath.Join(store, "agent", "claude-settings.json")
	b, _ := json.MarshalIndent(hookSettings(exe, transcript.Claude), "", "  ")
	if err := os.MkdirAll(filepath.Dir(settings), 0o700); err != nil {
		return err
	}
	if err := atomicfile.Write(settings, append(b, '\n'), 0o600); err != nil {
		return err
	}
	c := exec.Command(bin, append([]string{"--settings", settings}, args...)...)
	c.Dir = root // entered after the mount: the agent sees the mounted view
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, stdout, stderr
	c.Env = append(os.Environ(), "CKFS_STORE="+store)
	runErr := c.Run()
	if mountedHere {
		um := exec.Command(exe, "unmount", root)
		um.Dir = "/"
		if out, err := um.CombinedOutput(); err != nil {
			fmt.Fprintf(stderr, "ckfs: %s stays mounted: %s", root, out)
		}
	}
	var ee *exec.ExitError
	if errors.As(runErr, &ee) {
		return &exitError{code: ee.ExitCode(), err: runErr, silent: true}
	}
	return runErr
}
