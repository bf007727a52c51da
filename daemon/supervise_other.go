//go:build !linux

package daemon

import (
	"context"
	"io"
	"os"

	"github.com/ckfs-dev/ckfs/fusefs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// Succession is a Linux worker's; elsewhere a daemon serves alone.
type Succession struct {
	Handoff        *os.File
	FuseFd, RootFd int
	Init           []byte
}

// Supervise serves in this process where no supervisor can keep a mount
// alive (no FUSE_NOTIFY_RESEND).
func Supervise(exe string, o Options, readyFd int) error {
	ready := io.Writer(io.Discard)
	if readyFd > 0 {
		f := os.NewFile(uintptr(readyFd), "ready")
		defer f.Close()
		ready = f
	}
	return Run(context.Background(), o, ready)
}

// ParseSuccession: no successor elsewhere.
func ParseSuccession(handoffFd, fuseFd, rootFd int, init string) (Succession, error) {
	return Succession{FuseFd: -1, RootFd: -1}, nil
}

func (d *daemon) handOff() {}

func (d *daemon) takeOver(fsys *fusefs.FS, fo fusefs.Options) (*fuse.Server, error) {
	return nil, os.ErrInvalid
}
