package fusefs

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// servePath names the backing directory by its descriptor, which stays
// valid (and reachable) when the directory is mounted over.
func servePath(fd int, _ string) string { return fmt.Sprintf("/proc/self/fd/%d", fd) }

// ServeFromCwd moves the process's working directory to the backing
// directory and resolves every backing path from there, relative, instead
// of through /proc/self/fd/N, whose procfs lookup every path pays (about
// a tenth of a file create; bench/RESULTS.md). The working directory is
// the process's own, so only a process that serves this one mount may call
// it (the ckfs daemon does; an in-process Start does not), before Mount,
// and nothing in the process may change directory or open a relative path
// of its own afterwards.
func (f *FS) ServeFromCwd() error {
	if err := unix.Fchdir(f.rootFd); err != nil {
		return fmt.Errorf("enter the backing directory: %w", err)
	}
	f.root.RootData.Path = "."
	return nil
}
