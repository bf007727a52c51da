package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"

	"github.com/ckfs-dev/ckfs/transcript"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/spf13/cobra"
)

func newHooksCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "hooks", Short: "Print or install the hook configuration for an agent"}
	cmd.AddCommand(newHooksInstallCmd())
	cmd.AddCommand(&cobra.Command{
		Use:   "print (claude|codex)",
		Short: "Print the hook settings that connect an agent to ckfs",
		Long: `Print the JSON that installs ckfs's hooks. For Claude Code it is a settings
file: pass it with claude --settings FILE (which is what ckfs agent claude
does), or merge it into ~/.claude/settings.json. For Codex CLI it is a
hooks.json: put it in ~/.codex/hooks.json and review and trust the hooks
in Codex's /hooks (Codex skips unreviewed hooks silently); ckfs agent codex
passes them for one run instead.`,
		Example:   "  ckfs hooks print claude > ~/ckfs-claude.json && claude --settings ~/ckfs-claude.json\n  ckfs hooks print codex > ~/.codex/hooks.json",
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{transcript.Claude, transcript.Codex},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runHooksPrint(cmd.Context(), hooksOptions{Agent: args[0]}, cmd.OutOrStdout())
		},
	})
	return cmd
}

func newAgentCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "agent (claude|codex) [ARGS...]",
		Short: "Run Claude Code or Codex CLI on this repository with ckfs capturing every tool call",
		Long: `Mount the current repository if it is not mounted, then start the agent with
ckfs's hooks installed for this run only: every tool call becomes a window,
every prompt a mark. ARGS go to the agent unchanged. When the agent exits, a
mount this command made is unmounted again.

claude gets a settings file kept in the store (claude --settings FILE),
never written into the repository or your own settings. codex gets the
hooks as configuration overrides (-c hooks=...) and
--dangerously-bypass-hook-trust, because Codex skips hooks nobody has
reviewed, silently; Codex says so when it starts, and the bypass also lets
any other hook you have configured but not reviewed run. To review ckfs's
hooks in Codex's /hooks instead, install them with ckfs hooks print codex.

Set CKFS_CLAUDE or CKFS_CODEX to run another binary.`,
		Example: "  ckfs agent claude\n  ckfs agent claude --resume 7f3c2a9e-4b1d-4e8a-9c2f-1a2b3c4d5e6f\n  ckfs agent codex\n  ckfs agent codex exec resume 0199ffff-0000-7000-8000-000000000001 'go on'",
		Args:    cobra.MinimumNArgs(1),
		// Everything after the agent name belongs to the agent.
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] == "-h" || args[0] == "--help" {
				return cmd.Help()
			}
			if args[0] != transcript.Claude && args[0] != transcript.Codex {
				return workspace.Errorf(workspace.ErrUsage, "agent %s: ckfs agent runs claude or codex; for any other agent use ckfs run -- CMD", args[0])
			}
			return runAgent(cmd.Context(), agentOptions{Agent: args[0], Args: args[1:]}, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}

// agentOptions are ckfs agent's: the agent and its arguments.
type agentOptions struct {
	Agent string   // claude or codex
	Args  []string // passed to the agent unchanged
}

// runAgent runs the agent with ckfs's hooks, mounting first if need be,
// and exits with the agent's code.
func runAgent(ctx context.Context, o agentOptions, stdout, stderr io.Writer) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	err = workspace.RunAgent(exe, o.Agent, o.Args, stdout, stderr)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return &exitError{code: ee.ExitCode(), err: err, silent: true}
	}
	return err
}
