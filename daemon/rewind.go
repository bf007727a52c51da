package daemon

import (
	"errors"
	"fmt"

	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/rewind"
	"github.com/ckfs-dev/ckfs/workspace"
)

// rewind runs a file rewind (or its rollback or abandon) inside the
// daemon, with capture stopped, then drops the kernel's caches of every
// path it wrote so the mount shows the restored bytes at once.
func (d *daemon) rewind(req workspace.Request) workspace.Reply {
	d.opMu.Lock()
	defer d.opMu.Unlock()
	var out *rewind.Outcome
	var what string
	var touched []string
	// Exclusive flushes capture first; the timeline is read once, inside.
	err := d.rec.Exclusive(func(appendFn func(...*index.Record) error, openWindows []string) error {
		env, err := workspace.RewindEnv(d.o.Store, d.meta.Root, d.o.Root, d.store, d.rootFd, appendFn, openWindows, nil)
		if err != nil {
			return err
		}
		switch req.Op {
		case workspace.OpRollback, workspace.OpAbandon:
			j, err := rewind.ReadJournal(env.Applier.JournalDir, req.RewindOp)
			var damaged *rewind.DamagedJournalError
			if err != nil && (req.Op != workspace.OpAbandon || !errors.As(err, &damaged)) {
				return err // a damaged journal can only be set aside
			}
			if j != nil {
				for _, p := range j.Paths {
					touched = append(touched, p.Path)
				}
			}
			if req.Op == workspace.OpAbandon {
				return env.Applier.Abandon(req.RewindOp)
			}
			return env.Applier.Rollback(req.RewindOp)
		}
		if req.Rewind == nil {
			return errors.New("rewind request without parameters")
		}
		o, wh, err := workspace.RunRewind(env, *req.Rewind, req.Target)
		out, what = o, wh
		if o != nil && o.Plan != nil && req.Rewind.Apply {
			for _, s := range o.Plan.Steps {
				touched = append(touched, s.Path)
			}
		}
		return err
	})
	for _, p := range touched {
		d.fsys.Invalidate(p)
	}
	if err != nil {
		d.log.Warn("rewind", "op", req.Op, "err", err)
		var re *rewind.RefusedError
		if errors.As(err, &re) {
			return workspace.Reply{Error: err.Error(), Code: workspace.CodeRefused, Refused: true, Outcome: out, What: what}
		}
		if errors.Is(err, rewind.ErrRefused) {
			return workspace.Reply{Error: err.Error(), Code: workspace.CodeRefused, Outcome: out, What: what}
		}
		return workspace.Reply{Error: fmt.Sprint(err), Code: codeOf(err), Outcome: out, What: what}
	}
	return workspace.Reply{OK: true, Outcome: out, What: what}
}
