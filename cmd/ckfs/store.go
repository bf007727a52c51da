package main

import (
	"path/filepath"

	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/spf13/cobra"
)

// storeFlag returns --store as an absolute path, or "".
func storeFlag(cmd *cobra.Command) (string, error) {
	s, _ := cmd.Flags().GetString("store")
	if s == "" {
		return "", nil
	}
	return filepath.Abs(s)
}

// storeFor returns the store directory for the repository root.
func storeFor(cmd *cobra.Command, root string) (string, error) {
	if s, err := storeFlag(cmd); s != "" || err != nil {
		return s, err
	}
	return workspace.DefaultStore(root)
}

// workspaceArg is the part of a command's options naming its workspace:
// the --store flag and the optional DIR argument.
type workspaceArg struct {
	Store string // --store, or "" to find it from Dir
	Dir   string // the workspace: DIR, or the current directory
}

// fill sets the workspace from the command line.
func (w *workspaceArg) fill(cmd *cobra.Command, args []string) (err error) {
	w.Dir = "."
	if len(args) > 0 {
		w.Dir = args[0]
	}
	w.Store, err = storeFlag(cmd)
	return err
}

// openView finds the workspace of dir (or the store given) and reads its
// timeline.
func openView(store, dir string) (*workspace.View, error) {
	ws, err := workspace.Locate(store, dir)
	if err != nil {
		return nil, err
	}
	return ws.View()
}

// storeIfAny is the store of the workspace here (or the one given), ""
// when there is none: for commands that need none (a remote given by URL).
func storeIfAny(flag string) string {
	if ws, err := workspace.Locate(flag, "."); err == nil {
		return ws.Store
	}
	return ""
}
