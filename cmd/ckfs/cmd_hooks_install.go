package main

import (
	"os"
	"time"

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
			return workspace.InstallHooks(path, workspace.HookSettings(exe, args[0]), workspace.HookCommands(exe, args[0])[1:], dryRun, time.Now(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the merged settings, write nothing")
	return cmd
}
