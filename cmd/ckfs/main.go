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

	"github.com/spf13/cobra"
)

func main() {
	// Commands read whole timelines into memory and exit: trade memory
	// for less garbage collection. The daemon sets its own target.
	debug.SetGCPercent(400)
	// CKFS_CPUPROFILE=FILE writes a CPU profile of this command (for
	// finding where a slow command spends its time).
	if p := os.Getenv("CKFS_CPUPROFILE"); p != "" {
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
	root := newRootCmd()
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if !ee.silent {
			fmt.Fprintln(os.Stderr, "ckfs:", err)
		}
		return ee.code
	}
	fmt.Fprintln(os.Stderr, "ckfs:", err)
	return ExitError
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "ckfs",
		Short: "An undo layer for coding agents",
		Long: `ckfs mounts a repository through a FUSE passthrough that captures every
write (from an agent's edit tool, sed -i, a build, git checkout) per
tool-call window, so that any window can be inspected and rewound.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().String("store", "", "store directory (default: derived from the repository under $CKFS_HOME or $XDG_STATE_HOME/ckfs)")
	root.AddCommand(newMountCmd(), newDaemonCmd(), newUnmountCmd(), newStatusCmd(), newWindowCmd(), newRunCmd(), newFlushCmd(), newRewindCmd(), newLogCmd(), newDiffCmd(), newShowCmd(), newDemoCmd(), newVerifyCmd(), newGCCmd(), newDUCmd(), newConfigCmd(), newHookCmd(), newHooksCmd(), newAgentCmd(), newMarkCmd())
	return root
}
