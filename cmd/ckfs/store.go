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

// findStore locates the store of the workspace that contains start: the
// --store flag; else the store of the live mount nearest at or above start
// (each daemon registers its mountpoint, so a --store given at mount is
// found too); else the default store of start or of one of its parents.
func findStore(cmd *cobra.Command, start string) (string, *workspace.Meta, error) {
	s, err := storeFlag(cmd)
	if err != nil {
		return "", nil, err
	}
	return workspace.Find(s, start)
}
