package main

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/ckfs-dev/ckfs/agent"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/spf13/cobra"
)

// hooksOptions are ckfs hooks print's and install's.
type hooksOptions struct {
	Agent  string // one of agent.Names()
	DryRun bool   // install: print the merged settings, write nothing
}

func newHooksInstallCmd() *cobra.Command {
	var o hooksOptions
	cmd := &cobra.Command{
		Use:   "install " + agentChoice,
		Short: "Add ckfs's hooks to the agent's own settings, safely",
		Long: `Merge ckfs's hooks into the agent's user settings: for Claude Code
~/.claude/settings.json ($CLAUDE_CONFIG_DIR if set), for Codex CLI
~/.codex/hooks.json ($CODEX_HOME if set), for Gemini CLI
~/.gemini/settings.json ($GEMINI_CLI_HOME in place of ~ if set), for Qwen
Code ~/.qwen/settings.json ($QWEN_HOME if set). For OpenCode, which loads
plugins rather than commands, ckfs's plugin is written to
~/.config/opencode/plugin/ckfs.js ($XDG_CONFIG_HOME if set), and a file of
that name that is not ckfs's is never replaced. Every other setting and every
other hook is kept as it is; a hook that is there already is not added
again, so running it twice changes nothing. The file is replaced
atomically, after a copy of it is kept beside it (FILE.ckfs-backup-TIME).
--dry-run prints the merged file and writes nothing. Codex runs a hook only
once it has been reviewed: trust ckfs's in Codex's /hooks afterwards.`,
		Example:   "  ckfs hooks install claude --dry-run\n  ckfs hooks install gemini",
		Args:      cobra.ExactArgs(1),
		ValidArgs: agent.Names(),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Agent = args[0]
			return runHooksInstall(cmd.Context(), o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().BoolVar(&o.DryRun, "dry-run", false, "print the merged settings, write nothing")
	return cmd
}

func newHooksUninstallCmd() *cobra.Command {
	var o hooksOptions
	cmd := &cobra.Command{
		Use:   "uninstall " + agentChoice,
		Short: "Remove ckfs's hooks from the agent's own settings",
		Long: `Remove every hook that runs ckfs (either form of its hook command) from the
agent's user settings, the file ckfs hooks install writes, and the groups
and events that leaves empty. Every other setting and hook, and whatever
you changed since the install, stays. A copy of the file is kept beside it
(FILE.ckfs-backup-TIME); running it again changes nothing. For OpenCode
it removes ckfs's plugin file, and no file that is not ckfs's. --dry-run
prints the result and writes nothing.`,
		Example:   "  ckfs hooks uninstall claude --dry-run\n  ckfs hooks uninstall gemini",
		Args:      cobra.ExactArgs(1),
		ValidArgs: agent.Names(),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Agent = args[0]
			a, exe, err := hooksFor("uninstall", o.Agent)
			if err != nil {
				return err
			}
			return a.Uninstall(exe, o.DryRun, time.Now(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().BoolVar(&o.DryRun, "dry-run", false, "print the settings without ckfs's hooks, write nothing")
	return cmd
}

// runHooksInstall merges ckfs's hooks into the agent's own settings.
func runHooksInstall(ctx context.Context, o hooksOptions, stdout, stderr io.Writer) error {
	a, exe, err := hooksFor("install", o.Agent)
	if err != nil {
		return err
	}
	return a.Install(exe, o.DryRun, time.Now(), stdout, stderr)
}

// runHooksPrint prints the hook settings that connect the agent to ckfs.
func runHooksPrint(ctx context.Context, o hooksOptions, stdout io.Writer) error {
	a, exe, err := hooksFor("print", o.Agent)
	if err != nil {
		return err
	}
	return a.PrintHooks(exe, stdout)
}

// hooksFor returns the agent named name and the ckfs binary its hooks run.
func hooksFor(verb, name string) (*agent.Agent, string, error) {
	a, err := agent.Lookup(name)
	if err != nil {
		return nil, "", workspace.Errorf(workspace.ErrUsage, "hooks %s: %v", verb, err)
	}
	exe, err := os.Executable()
	return a, exe, err
}
