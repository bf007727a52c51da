package main

import (
	"os"
	"time"

	"github.com/ckfs-dev/ckfs/agent"
	"github.com/spf13/cobra"
)

func newHookCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "hook " + agentChoice,
		Short: "Handle an agent hook event (installed by ckfs agent or ckfs hooks install)",
		Long: `Read one hook event as JSON on stdin, as the agent sends it (Gemini CLI's
events under its own names: BeforeTool is PreToolUse, AfterTool
PostToolUse, BeforeAgent UserPromptSubmit, AfterAgent Stop), and record
it: PreToolUse opens a window named by the tool_use_id (for Gemini CLI,
which sends no call id, one ckfs makes; its AfterTool closes the oldest
open call with the same tool and input),
PostToolUse and PostToolUseFailure close it, UserPromptSubmit writes a mark
(the file checkpoint and the conversation position, paired), SessionStart
registers the session. Stop (the end of a turn), UserPromptSubmit and
SessionStart first close every call of the session's main thread that
never got its Post event (rejected, blocked, aborted, left running), marked
unfinished; a subagent's calls (agent_id in the input) are closed so at
SubagentStop or the next SessionStart. It always exits 0 and prints nothing, so it can never
block or steer the agent; problems go to hook.log in the store.`,
		Example:   `  echo '{"hook_event_name":"SessionStart","session_id":"s1","cwd":"'$PWD'"}' | ckfs hook claude`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: agent.Names(),
		RunE: func(cmd *cobra.Command, args []string) error {
			agent.RunHook(args[0], os.Stdin, cmd.ErrOrStderr(), time.Now())
			return nil
		},
	}
}
