package main

import (
	"io"
	"os"

	"github.com/ckfs-dev/ckfs/daemon"
	"github.com/spf13/cobra"
)

func newDaemonCmd() *cobra.Command {
	var readyFd, handoffFd, fuseFd, rootFd int
	var options, init string
	var worker bool
	cmd := &cobra.Command{
		Use:    "daemon --options JSON",
		Short:  "Serve a mount (started by ckfs mount)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o, err := daemon.ParseOptions(options)
			if err != nil {
				return err
			}
			o.OwnProcess = true
			// Never hold a reference into the mounted view.
			if err := os.Chdir("/"); err != nil {
				return err
			}
			if !worker {
				// The supervisor: it starts the worker that serves, and a
				// successor when a worker dies.
				exe, err := os.Executable()
				if err != nil {
					return err
				}
				return daemon.Supervise(exe, o, readyFd)
			}
			succ, err := daemon.ParseSuccession(handoffFd, fuseFd, rootFd, init)
			if err != nil {
				return err
			}
			ready, done := readyWriter(readyFd)
			defer done()
			return daemon.RunWorker(cmd.Context(), o, ready, succ)
		},
	}
	cmd.Flags().IntVar(&readyFd, "ready-fd", 0, "file descriptor to report readiness on")
	cmd.Flags().StringVar(&options, "options", "", "the daemon's options, as ckfs mount writes them")
	cmd.Flags().BoolVar(&worker, "worker", false, "serve, as the supervisor's worker")
	cmd.Flags().IntVar(&handoffFd, "handoff-fd", 0, "worker: the socket to hand the connection to the supervisor on")
	cmd.Flags().IntVar(&fuseFd, "fuse-fd", 0, "successor: the live connection's /dev/fuse descriptor")
	cmd.Flags().IntVar(&rootFd, "root-fd", 0, "successor: the backing directory's descriptor")
	cmd.Flags().StringVar(&init, "init", "", "successor: the kernel's INIT, in hex")
	return cmd
}

// readyWriter is where a process started in the background (a daemon, a
// view) reports that it serves: the descriptor its starter passed, or
// nowhere. done closes it.
func readyWriter(fd int) (io.Writer, func()) {
	if fd <= 0 {
		return io.Discard, func() {}
	}
	f := os.NewFile(uintptr(fd), "ready")
	return f, func() { f.Close() }
}
