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
			var ready io.Writer = io.Discard
			if readyFd > 0 {
				f := os.NewFile(uintptr(readyFd), "ready")
				defer f.Close()
				ready = f
			}
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
