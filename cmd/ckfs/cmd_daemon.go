package main

import (
	"io"
	"os"

	"github.com/ckfs-dev/ckfs/daemon"
	"github.com/spf13/cobra"
)

func newDaemonCmd() *cobra.Command {
	var readyFd int
	var options string
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
			ready, done := readyWriter(readyFd)
			defer done()
			// Never hold a reference into the mounted view.
			if err := os.Chdir("/"); err != nil {
				return err
			}
			return daemon.Run(cmd.Context(), o, ready)
		},
	}
	cmd.Flags().IntVar(&readyFd, "ready-fd", 0, "file descriptor to report readiness on")
	cmd.Flags().StringVar(&options, "options", "", "the daemon's options, as ckfs mount writes them")
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
