package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/ckfs-dev/ckfs/agent"
	"github.com/ckfs-dev/ckfs/capture"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/google/uuid"
	"github.com/spf13/cobra"
)

// agentChoice is the agents' names as a usage line writes a choice.
var agentChoice = "(" + strings.Join(agent.Names(), "|") + ")"

func newHooksCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "hooks", Short: "Print, install or uninstall the hook configuration for an agent"}
	cmd.AddCommand(newHooksInstallCmd(), newHooksUninstallCmd())
	cmd.AddCommand(&cobra.Command{
		Use:   "print " + agentChoice,
		Short: "Print the hook settings that connect an agent to ckfs",
		Long: `Print the JSON that holds ckfs's hooks, in the shape of the agent's own
settings file: Claude Code's settings.json (pass it with claude --settings
FILE, which is what ckfs agent claude does), Codex CLI's hooks.json,
Gemini CLI's and Qwen Code's settings.json (their event names: Gemini's
BeforeTool, AfterTool, BeforeAgent, AfterAgent); for OpenCode, which has
no command hooks, the source of ckfs's plugin. To put them in the
agent's own settings, merging with what is there, use ckfs hooks install
NAME; ckfs agent NAME passes them for one run instead.`,
		Example:   "  ckfs hooks print claude > ~/ckfs-claude.json && claude --settings ~/ckfs-claude.json\n  ckfs hooks print gemini",
		Args:      cobra.ExactArgs(1),
		ValidArgs: agent.Names(),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runHooksPrint(cmd.Context(), hooksOptions{Agent: args[0]}, cmd.OutOrStdout())
		},
	})
	return cmd
}

func newAgentCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "agent " + agentChoice + " [ARGS...]",
		Short: "Run a coding agent on this repository with ckfs capturing every tool call",
		Long: `Mount the current repository if it is not mounted, then start the agent with
ckfs's hooks installed for this run only: every tool call becomes a window,
every prompt a mark. ARGS go to the agent unchanged. When the agent exits, a
mount this command made is unmounted again. The agent's environment gets
CKFS_AGENT_RUN, a new id for the run: a command a call leaves running with &
keeps it after its shell exits, so its later writes stay that call's.

claude gets a settings file kept in the store (claude --settings FILE),
never written into the repository or your own settings. codex gets the
hooks as configuration overrides (-c hooks=...) and
--dangerously-bypass-hook-trust, because Codex skips hooks nobody has
reviewed, silently; Codex says so when it starts, and the bypass also lets
any other hook you have configured but not reviewed run. To review ckfs's
hooks in Codex's /hooks instead, install them with ckfs hooks install codex.
qwen gets them as its system defaults file (QWEN_CODE_SYSTEM_DEFAULTS_PATH,
a copy of yours with ckfs's hooks added, kept in the store). gemini reads
such a file only where root owns it and the directories above it: as root
ckfs passes one the same way (GEMINI_CLI_SYSTEM_DEFAULTS_PATH); anyone else
installs the hooks once with ckfs hooks install gemini (they do nothing
outside a ckfs mount), and ckfs agent gemini then adds nothing. opencode
gets ckfs's plugin, named in a configuration file of ckfs's
(OPENCODE_CONFIG; yours, if you set one, is kept with the plugin added).
OpenCode keeps its conversations in its own database: ckfs rewinds its
files, not its conversation (its marks carry no conversation position).

Set CKFS_CLAUDE, CKFS_CODEX, CKFS_GEMINI, CKFS_QWEN or CKFS_OPENCODE to run
another binary.`,
		Example: "  ckfs agent claude\n  ckfs agent claude --resume 7f3c2a9e-4b1d-4e8a-9c2f-1a2b3c4d5e6f\n  ckfs agent codex\n  ckfs agent codex exec resume 0199ffff-0000-7000-8000-000000000001 'go on'\n  ckfs agent gemini --resume 3452936c-ea71-469d-917e-fbfc10ff75e9\n  ckfs agent qwen -p 'fix the tests' --yolo\n  ckfs agent opencode run --continue 'go on'",
		Args:    cobra.MinimumNArgs(1),
		// Everything after the agent name belongs to the agent.
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] == "-h" || args[0] == "--help" {
				return cmd.Help()
			}
			if _, err := agent.Lookup(args[0]); err != nil {
				return workspace.Errorf(workspace.ErrUsage, "agent: %v", err)
			}
			return runAgent(cmd.Context(), agentOptions{Agent: args[0], Args: args[1:]}, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}

// agentOptions are ckfs agent's: the agent and its arguments.
type agentOptions struct {
	Agent string   // one of agent.Names()
	Args  []string // passed to the agent unchanged
}

// runAgent runs the agent on the repository in the current directory with
// ckfs's hooks, mounting it first when it is not mounted and unmounting
// it again afterwards, and exits with the agent's code. The agent gets
// this process's stdin.
func runAgent(ctx context.Context, o agentOptions, stdout, stderr io.Writer) error {
	a, err := agent.Lookup(o.Agent)
	if err != nil {
		return workspace.Errorf(workspace.ErrUsage, "agent: %v", err)
	}
	bin, err := a.Executable()
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	root, err := workspace.AbsDir(".")
	if err != nil {
		return err
	}
	ws, err := workspace.Locate("", root)
	mountedHere := false
	if err != nil || !ws.Alive() {
		if ws, err = mountForAgent(ctx, root, stderr); err != nil {
			return fmt.Errorf("mount %s before starting %s: %w", root, a.Title, err)
		}
		mountedHere = true
	}
	l, err := a.Launch(ws.Store, exe)
	if err != nil {
		return err
	}
	if l.Temp != "" {
		defer os.Remove(l.Temp)
	}
	c := exec.CommandContext(ctx, bin, append(l.Args, o.Args...)...)
	c.Dir = root // entered after the mount: the agent sees the mounted view
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, stdout, stderr
	// PWD names the directory the agent starts in: some agents (OpenCode)
	// take their project from it rather than from getcwd.
	// The run id marks every process the agent starts, also one that
	// outlives its shell (capture.Agent.Run).
	c.Env = append(append(os.Environ(), l.Env...), "CKFS_STORE="+ws.Store, "PWD="+root, capture.AgentRunEnv+"="+uuid.NewString())
	runErr := c.Run()
	if mountedHere {
		msg, err := ws.Unmount()
		if err != nil {
			fmt.Fprintf(stderr, "ckfs: %s stays mounted: %v\n", root, err)
		}
		// What a remote still lacks is said; the rest is routine.
		for _, l := range strings.Split(msg, "\n") {
			if strings.HasPrefix(l, "warning:") {
				fmt.Fprintln(stderr, "ckfs: "+l)
			}
		}
	}
	var ee *exec.ExitError
	if errors.As(runErr, &ee) {
		return &exitError{code: ee.ExitCode(), err: runErr, silent: true}
	}
	return runErr
}

// mountForAgent mounts root in place as ckfs mount would, with the
// configuration that applies there, saying so on w.
func mountForAgent(ctx context.Context, root string, w io.Writer) (*workspace.Workspace, error) {
	store, err := workspace.DefaultStore(root)
	if err != nil {
		return nil, err
	}
	o := mountOptions{ForAgent: true}
	o.Root, o.Mountpoint, o.Store = root, root, store
	if err := o.configure(func(string) bool { return false }); err != nil {
		return nil, err
	}
	if err := workspace.CheckMountable(o.Store, o.Root, o.Mountpoint); err != nil {
		return nil, err
	}
	if err := runMount(ctx, o, w, w); err != nil {
		return nil, err
	}
	return workspace.Open(store)
}
