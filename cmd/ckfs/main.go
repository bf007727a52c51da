// Command ckfs is the undo layer for coding agents: it mounts a repository
// through a capturing FUSE passthrough, opens and closes tool-call windows,
// and shows and rewinds what each window changed.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"

	"github.com/ckfs-dev/ckfs/doctor"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/spf13/cobra"
)

func main() {
	// Commands read whole timelines into memory and exit: trade memory
	// for less garbage collection. The daemon sets its own target.
	debug.SetGCPercent(400)
	// CKFS_CPUPROFILE=FILE writes a CPU profile of this command (for
	// finding where a slow command spends its time); a %p in FILE is the
	// process id, as a mount's daemon is several processes.
	if p := os.Getenv("CKFS_CPUPROFILE"); p != "" {
		p = strings.ReplaceAll(p, "%p", strconv.Itoa(os.Getpid()))
		if f, err := os.Create(p); err == nil {
			pprof.StartCPUProfile(f)
			code := run(context.Background(), os.Args[1:])
			pprof.StopCPUProfile()
			f.Close()
			os.Exit(code)
		}
	}
	os.Exit(run(context.Background(), os.Args[1:]))
}

// run executes the command line and returns the process exit code.
func run(ctx context.Context, args []string) int {
	// A shell left inside a mount whose daemon died has a working
	// directory that no longer answers: say so, with the way out.
	if _, err := os.Getwd(); doctor.IsNotConnected(err) {
		dir := os.Getenv("PWD")
		fmt.Fprintf(os.Stderr, "ckfs: the current directory %s is on a dead ckfs mount (transport endpoint is not connected: its daemon is gone); clean it up with: cd / && ckfs unmount %s\n", dir, dir)
		return ExitNotMounted
	}
	root := newRootCmd()
	root.SetArgs(args)
	pg := startPager(root, args)
	err := root.ExecuteContext(ctx)
	pg.Wait()
	if err == nil {
		return ExitOK
	}
	if doctor.IsNotConnected(err) {
		err = fmt.Errorf("%w: a ckfs mount whose daemon is gone; ckfs doctor names it and the command that cleans it up", err)
	}
	if ee := (*exitError)(nil); !errors.As(err, &ee) || !ee.silent {
		fmt.Fprintln(os.Stderr, "ckfs:", err)
	}
	return exitCode(err)
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "ckfs",
		Short: "An undo layer for coding agents",
		Long: `ckfs mounts a repository through a FUSE passthrough that captures every
write (from an agent's edit tool, sed -i, a build, git checkout) per
tool-call window, so that any window can be inspected and rewound — the
files, the agent's conversation, both, or neither (a preview).

Exit codes: 0 success, 1 error, 2 bad command line, 3 refused by a safety
check (nothing was changed), 4 not mounted or the daemon is dead, 5 already
mounted, locked or busy; ckfs run exits with its command's code.`,
		Example: `  ckfs demo                      # see it work on a scratch repository
  ckfs doctor                    # check that this machine can mount
  ckfs agent claude              # run Claude Code with every tool call captured
  ckfs mount . && cd "$PWD"      # or mount by hand, for any agent
  ckfs log                       # what each tool call changed
  ckfs rewind --mark 3 --files   # put the files back to turn 3`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// An unknown command is a usage error; no command shows the help.
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return workspace.Errorf(workspace.ErrUsage, "unknown command %q (see ckfs --help)", args[0])
			}
			return cmd.Help()
		},
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return workspace.Errorf(workspace.ErrUsage, "%v (see ckfs %s --help)", err, c.Name())
	})
	root.PersistentFlags().String("store", "", "store directory (default: derived from the repository under $CKFS_HOME or $XDG_STATE_HOME/ckfs)")
	root.PersistentFlags().Bool("no-pager", false, "do not page the output on a terminal (CKFS_PAGER or PAGER, default less -FRX)")
	root.AddCommand(quiet(newMountCmd()), newDaemonCmd(), quiet(newUnmountCmd()), newUpgradeCmd(), newStatusCmd(), newWindowCmd(), newRunCmd(), newFlushCmd(), newRewindCmd(), newRevertCmd(), newLogCmd(), newDiffCmd(), newShowCmd(), newBlameCmd(), newBisectCmd(), newViewCmd(), newViewServeCmd(), newDemoCmd(), newVerifyCmd(), quiet(newGCCmd()), newDUCmd(), newConfigCmd(), newHookCmd(), newHooksCmd(), newAgentCmd(), quiet(newMarkCmd()), newDoctorCmd(), newRemoteCmd(), newPushCmd(), newWorkspacesCmd(), newRestoreCmd())
	for _, c := range extraCmds {
		root.AddCommand(c())
	}
	usageArgs(root)
	return root
}

// usageArgs makes every command's argument errors usage errors (exit code
// 2), with a pointer to its help.
func usageArgs(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				if len(args) == 0 && strings.Contains(err.Error(), "arg(s)") {
					return missingArgs(cmd) // cobra's own wording, not a command's
				}
				return workspace.Errorf(workspace.ErrUsage, "%s: %v (see %s --help)", cmd.CommandPath(), err, cmd.CommandPath())
			}
			return nil
		}
	}
	for _, s := range c.Commands() {
		usageArgs(s)
	}
}

// missingArgs is the usage error of a command given none of the
// arguments it needs: its usage line and its first example.
func missingArgs(cmd *cobra.Command) error {
	msg := fmt.Sprintf("%s: missing arguments: %s", cmd.CommandPath(), strings.TrimSuffix(cmd.UseLine(), " [flags]"))
	if ex, _, _ := strings.Cut(strings.TrimSpace(cmd.Example), "\n"); ex != "" {
		ex, _, _ = strings.Cut(ex, "  #") // its comment
		msg += "; for example: " + strings.TrimSpace(ex)
	}
	return workspace.Errorf(workspace.ErrUsage, "%s (see %s --help)", msg, cmd.CommandPath())
}

// extraCmds are commands compiled in only by build tags (gen-docs).
var extraCmds []func() *cobra.Command
