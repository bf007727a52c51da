package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/spf13/cobra"
)

func newUpgradeCmd() *cobra.Command {
	var store string
	return &cobra.Command{
		Use:   "upgrade [REPO]",
		Short: "Serve a live mount with the ckfs binary installed since it was mounted",
		Long: `After installing a new ckfs over the one a mount runs (go install, a package
upgrade), upgrade has that mount served by the new binary without
unmounting: capture is flushed, the daemon answers the directory
operations in flight and holds later ones for its successor (so none is
done twice), and the supervisor retires it and starts one from the binary
now at the same path, which takes the mount over as after a crash. Processes inside the repository (the agent, its
shells, your editor) keep their working directories and open files; a
tool call that runs goes on in its window. A mount that cannot outlive
its daemon (ckfs doctor says why) must be unmounted and mounted again.`,
		Example: "  ckfs upgrade .",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			var err error
			if store, err = storeFlag(cmd); err != nil {
				return err
			}
			return runUpgrade(store, dir, cmd.OutOrStdout())
		},
	}
}

// runUpgrade hands the mount of dir to a daemon of the installed binary.
func runUpgrade(store, dir string, stdout io.Writer) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	ws, err := workspace.Locate(store, abs)
	if err != nil {
		return err
	}
	msg, err := ws.Upgrade()
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, msg)
	return nil
}
