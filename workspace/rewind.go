package workspace

import (
	"errors"
	"fmt"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/rewind"
	"golang.org/x/sys/unix"
)

// Rewind runs req through the daemon when mounted, or here otherwise.
func (v *View) Rewind(req rewind.Request) (*rewind.Outcome, error) {
	if v.Mounted {
		return DaemonOf(v.Store).Rewind(req)
	}
	var out *rewind.Outcome
	err := v.Local(func(env rewind.Env) error {
		o, err := rewind.Run(env, req)
		out = o
		return err
	})
	return out, err
}

// JournalOp rolls back or abandons (name) the rewind op: in the daemon
// when mounted, here otherwise.
func (v *View) JournalOp(name, op string) error {
	if v.Mounted {
		return DaemonOf(v.Store).Journal(name, op)
	}
	return v.Local(func(env rewind.Env) error {
		if name == OpAbandon {
			return env.Applier.Abandon(op)
		}
		return env.Applier.Rollback(op)
	})
}

// Local runs fn on the unmounted workspace, holding the store's lock.
func (v *View) Local(fn func(rewind.Env) error) error {
	if MountedAt(v.Meta.Root) {
		return Errorf(ErrNotMounted, "%s has a ckfs mount whose daemon is gone: run ckfs unmount %s first", v.Meta.Root, v.Meta.Root)
	}
	w, _, err := index.OpenWriter(v.Store, index.WriterOptions{})
	if errors.Is(err, index.ErrLocked) {
		return Errorf(ErrBusy, "%v", err)
	}
	if err != nil {
		return err
	}
	defer w.Close()
	root, err := AbsDir(v.Meta.Root)
	if err != nil {
		return fmt.Errorf("workspace %s: %w", v.Meta.Root, err)
	}
	fd, err := OpenRoot(root)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	cs, err := cas.Open(v.Store, nil)
	if err != nil {
		return err
	}
	// The view's records were read before the lock was taken: use them
	// only if nothing was appended since.
	recs := v.Records
	if n := len(recs); n > 0 && w.LastSeq() != recs[n-1].Seq || n == 0 && w.LastSeq() != 0 {
		recs = nil
	}
	env, err := RewindEnv(v.Store, v.Meta.Root, root, cs, fd, w.Append, nil, recs)
	if err != nil {
		return err
	}
	return fn(env)
}
