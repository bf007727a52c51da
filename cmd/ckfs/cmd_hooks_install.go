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
	"github.com/ckfs-dev/ckfs/workspace"
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
				return workspace.Errorf(workspace.ErrUsage, "hooks install %s: ckfs has hooks for claude and codex; for other agents use ckfs run -- CMD", args[0])
			}
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			path, err := workspace.AgentSettingsPath(args[0])
			if err != nil {
				return err
			}
			return installHooks(path, workspace.HookSettings(exe, args[0]), workspace.HookCommands(exe, args[0])[1:], dryRun, time.Now(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the merged settings, write nothing")
	return cmd
}

// installHooks merges ours into the settings at path.
func installHooks(path string, ours map[string]any, alternates []string, dryRun bool, now time.Time, stdout, stderr io.Writer) error {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	settings := map[string]any{}
	if len(bytes.TrimSpace(old)) > 0 {
		if err := json.Unmarshal(old, &settings); err != nil {
			return fmt.Errorf("%s is not valid JSON (%v): fix it first; nothing was changed", path, err)
		}
	}
	added, err := workspace.MergeHooks(settings, ours["hooks"].(map[string]any), alternates...)
	if err != nil {
		return fmt.Errorf("%s: %v; nothing was changed", path, err)
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
