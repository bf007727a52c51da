package main

import (
	"errors"
	"fmt"

	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/rewind"
)

// rewind runs a file rewind (or its rollback or abandon) inside the
// daemon, with capture stopped, then drops the kernel's caches of every
// path it wrote so the mount shows the restored bytes at once.
func (d *daemon) rewind(req request) reply {
	d.opMu.Lock()
	defer d.opMu.Unlock()
	var out *rewind.Outcome
	var touched []string
	err := d.rec.Exclusive(func(appendFn func(...*index.Record) error, openWindows []string) error {
		meta, err := readMeta(d.o.Store)
		if err != nil {
			return err
		}
		env, err := rewindEnv(d.o.Store, meta.Root, d.o.Root, d.store, d.rootFd, appendFn, openWindows, nil)
		if err != nil {
			return err
		}
		switch req.Op {
		case "rollback", "abandon":
			j, err := rewind.ReadJournal(env.Applier.JournalDir, req.RunOp)
			if err != nil {
				return err
			}
			for _, p := range j.Paths {
				touched = append(touched, p.Path)
			}
			if req.Op == "abandon" {
				return env.Applier.Abandon(req.RunOp)
			}
			return env.Applier.Rollback(req.RunOp)
		}
		if req.Rewind == nil {
			return errors.New("rewind request without parameters")
		}
		o, err := rewind.Run(env, *req.Rewind)
		out = o
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
			return reply{Error: err.Error(), Code: ExitRefused, Refused: true, Outcome: out}
		}
		if errors.Is(err, rewind.ErrRefused) {
			return reply{Error: err.Error(), Code: ExitRefused, Outcome: out}
		}
		return reply{Error: fmt.Sprint(err), Code: ExitError, Outcome: out}
	}
	return reply{OK: true, Outcome: out}
}
