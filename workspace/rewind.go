package workspace

import (
	"errors"
	"fmt"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/rewind"
	"golang.org/x/sys/unix"
)

// Rewind runs req, to the checkpoint spec names when it is not nil: in
// the daemon when mounted (which flushes and reads the timeline once, and
// resolves spec against it), or here otherwise, reading the timeline once
// under the store's lock. It returns what the target is, for people.
func (w *Workspace) Rewind(req rewind.Request, spec *TargetSpec) (*rewind.Outcome, string, error) {
	if spec != nil {
		if err := spec.check(); err != nil {
			return nil, "", err
		}
	}
	if w.Alive() {
		return w.Daemon().Rewind(req, spec)
	}
	var out *rewind.Outcome
	var what string
	err := w.local(nil, func(env rewind.Env) error {
		o, wh, err := RunRewind(env, req, spec)
		out, what = o, wh
		return err
	})
	return out, what, err
}

// RunRewind resolves spec (when not nil) against the timeline env holds,
// and runs req to it: the one place a rewind's target is decided, in the
// daemon or here.
func RunRewind(env rewind.Env, req rewind.Request, spec *TargetSpec) (*rewind.Outcome, string, error) {
	what := ""
	if spec != nil {
		t, wh, err := (&View{Records: env.Records}).RewindTarget(spec.To, spec.Last, spec.Undo, spec.Guard)
		if err != nil {
			return nil, "", err
		}
		req.Target, what = t, wh
	}
	o, err := rewind.Run(env, req)
	return o, what, err
}

// TargetSpec is a rewind's checkpoint as the command line names it:
// exactly one of To (a checkpoint), Last (before the N-th most recent
// window) or Undo (before the last rewind). Guard refuses an undo that
// would overwrite work done since.
type TargetSpec struct {
	To    string `json:"to,omitempty"`
	Last  int    `json:"last,omitempty"`
	Undo  bool   `json:"undo,omitempty"`
	Guard bool   `json:"guard,omitempty"`
}

func (s TargetSpec) check() error {
	n := 0
	for _, b := range []bool{s.To != "", s.Last > 0, s.Undo} {
		if b {
			n++
		}
	}
	if n != 1 {
		return Errorf(ErrUsage, "give exactly one of --to CHECKPOINT, --last N or --undo")
	}
	return nil
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
func (v *View) Local(fn func(rewind.Env) error) error { return v.Workspace.local(v.Records, fn) }

// local runs fn on the unmounted workspace, holding the store's lock,
// with the timeline read once: recs when nothing was appended since they
// were read, else read under the lock.
func (ws *Workspace) local(recs []index.Record, fn func(rewind.Env) error) error {
	if MountedAt(ws.Meta.Root) {
		return Errorf(ErrNotMounted, "%s has a ckfs mount whose daemon is gone: run ckfs mount %s first (it detaches the dead mount and mounts again)", ws.Meta.Root, ws.Meta.Root)
	}
	w, _, err := index.OpenWriter(ws.Store, index.WriterOptions{})
	if errors.Is(err, index.ErrLocked) {
		return Errorf(ErrBusy, "%v", err)
	}
	if err != nil {
		return err
	}
	defer w.Close()
	root, err := AbsDir(ws.Meta.Root)
	if err != nil {
		return fmt.Errorf("workspace %s: %w", ws.Meta.Root, err)
	}
	fd, err := OpenRoot(root)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	cs, err := cas.Open(ws.Store, nil)
	if err != nil {
		return err
	}
	// Records read before the lock was taken are used only if nothing
	// was appended since.
	if n := len(recs); n > 0 && w.LastSeq() != recs[n-1].Seq || n == 0 && w.LastSeq() != 0 {
		recs = nil
	}
	env, err := RewindEnv(ws.Store, ws.Meta.Root, root, cs, fd, w.Append, nil, recs)
	if err != nil {
		return err
	}
	return fn(env)
}
