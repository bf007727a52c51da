package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/ckfs-dev/ckfs/internal/durable"
	"github.com/ckfs-dev/ckfs/transcript"
	"github.com/spf13/cobra"
)

func newHooksInstallCmd() *cobra.Command {
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "install (claude|codex)",
		Short: "Add ckfs's hooks to the agent's own settings, safely",
		Long: `Merge ckfs's hooks into the agent's user settings: for Claude Code
~/.claude/settings.json ($CLAUDE_CONFIG_DIR if set), for Codex CLI
~/.codex/hooks.json ($CODEX_HOME if set). Every other setting and every
other hook is kept as it is; a hook that is there already is not added
again, so running it twice changes nothing. The file is replaced
atomically, after a copy of it is kept beside it (FILE.ckfs-backup-TIME).
--dry-run prints the merged file and writes nothing. Codex runs a hook only
once it has been reviewed: trust ckfs's in Codex's /hooks afterwards.`,
		Example:   "  ckfs hooks install claude --dry-run\n  ckfs hooks install codex",
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{transcript.Claude, transcript.Codex},
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] != transcript.Claude && args[0] != transcript.Codex {
				return withCode(ExitUsage, "hooks install %s: ckfs has hooks for claude and codex; for other agents use ckfs run -- CMD", args[0])
			}
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			path, err := agentSettingsPath(args[0])
			if err != nil {
				return err
			}
			return installHooks(path, hookSettings(exe, args[0]), dryRun, time.Now(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the merged settings, write nothing")
	return cmd
}

// agentSettingsPath is the user settings file an agent reads its hooks
// from.
func agentSettingsPath(agent string) (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	if agent == transcript.Claude {
		if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
			return filepath.Join(d, "settings.json"), nil
		}
		return filepath.Join(home, ".claude", "settings.json"), nil
	}
	if d := os.Getenv("CODEX_HOME"); d != "" {
		return filepath.Join(d, "hooks.json"), nil
	}
	return filepath.Join(home, ".codex", "hooks.json"), nil
}

// installHooks merges ours into the settings at path.
func installHooks(path string, ours map[string]any, dryRun bool, now time.Time, stdout, stderr io.Writer) error {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	settings := map[string]any{}
	if len(bytes.TrimSpace(old)) > 0 {
		if err := json.Unmarshal(old, &settings); err != nil {
			return withCode(ExitError, "%s is not valid JSON (%v): fix it first; nothing was changed", path, err)
		}
	}
	added, err := mergeHooks(settings, ours["hooks"].(map[string]any))
	if err != nil {
		return withCode(ExitError, "%s: %v; nothing was changed", path, err)
	}
	merged, _ := json.MarshalIndent(settings, "", "  ")
	merged = append(merged, '\n')
	if dryRun {
		stdout.Write(merged)
		fmt.Fprintf(stderr, "dry run: %d hook groups would be added to %s; nothing was written\n", added, path)
		return nil
	}
	if added == 0 {
		fmt.Fprintf(stderr, "%s has ckfs's hooks already; nothing was changed\n", path)
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if old != nil {
		backup := path + ".ckfs-backup-" + now.UTC().Format("20060102T150405Z")
		if err := durable.WriteFile(backup, old, 0o600); err != nil {
			return fmt.Errorf("keep a copy of %s: %w; nothing was changed", path, err)
		}
		fmt.Fprintf(stderr, "kept a copy of %s in %s\n", path, backup)
	}
	if err := durable.WriteFile(path, merged, 0o600); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "added %d hook groups to %s\n", added, path)
	return nil
}

// mergeHooks adds each of our event's hook groups to settings["hooks"]
// unless a group with the same matcher and command is there; it returns
// how many it added.
func mergeHooks(settings map[string]any, ours map[string]any) (int, error) {
	hooks, ok := settings["hooks"].(map[string]any)
	if settings["hooks"] != nil && !ok {
		return 0, errors.New(`"hooks" is not an object`)
	}
	if hooks == nil {
		hooks = map[string]any{}
		settings["hooks"] = hooks
	}
	added := 0
	for event, groups := range ours {
		have, ok := hooks[event].([]any)
		if hooks[event] != nil && !ok {
			return 0, fmt.Errorf(`"hooks.%s" is not a list`, event)
		}
		for _, g := range groups.([]map[string]any) {
			if containsGroup(have, g) {
				continue
			}
			// Through JSON, so the stored group is plain data.
			b, _ := json.Marshal(g)
			var plain any
			json.Unmarshal(b, &plain)
			have = append(have, plain)
			added++
		}
		hooks[event] = have
	}
	return added, nil
}

// containsGroup reports whether a group with g's matcher runs g's command.
func containsGroup(have []any, g map[string]any) bool {
	want := g["hooks"].([]any)[0].(map[string]any)["command"]
	for _, h := range have {
		m, _ := h.(map[string]any)
		if m == nil || fmt.Sprint(m["matcher"]) != fmt.Sprint(g["matcher"]) {
			continue
		}
		inner, _ := m["hooks"].([]any)
		for _, x := range inner {
			if xm, _ := x.(map[string]any); xm != nil && xm["command"] == want {
				return true
			}
		}
	}
	return false
}
