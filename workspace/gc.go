package workspace

import (
	"errors"
	"fmt"
	"time"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/gc"
	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/internal/testhooks"
)

// Collect runs a collection: in the daemon when the workspace is mounted,
// here (holding the timeline's writer lock) when it is not.
func (ws *Workspace) Collect(p gc.Policy, dry bool) (*gc.Result, error) {
	store := ws.Store
	if ws.Alive() {
		return DaemonOf(store).Collect(GCRequest{Policy: p, DryRun: dry})
	}
	w, rep, err := index.OpenWriter(store, index.WriterOptions{})
	if errors.Is(err, index.ErrLocked) {
		return nil, Errorf(ErrBusy, "the store %s is in use (a mount starting or stopping, or a rewind): try again in a moment", store)
	}
	if err != nil {
		return nil, err
	}
	defer w.Close()
	_ = rep // a torn tail was repaired; the collection reads the repaired timeline
	s, err := cas.Open(store, nil)
	if err != nil {
		return nil, err
	}
	return gc.Collect(CollectOptions(store, s, p, dry, func(fn func(func(...*index.Record) error) error) error {
		return fn(w.Append)
	}))
}

// CollectOptions is one collection of store; hold keeps writers still.
func CollectOptions(store string, s *cas.Local, p gc.Policy, dry bool, hold func(func(func(...*index.Record) error) error) error) gc.Options {
	// With remotes, what is not yet pushed stays restorable here.
	if seq, why, ok, err := pushCeiling(store); ok && err == nil {
		p.Ceiling, p.CeilingWhy = &seq, why
	} else if err != nil {
		zero := uint64(0)
		p.Ceiling, p.CeilingWhy = &zero, fmt.Sprintf("the remotes file cannot be read (%v), so nothing is known to be pushed", err)
	}
	o := gc.Options{Store: store, CAS: s, Policy: p, DryRun: dry, Now: time.Now(), Hold: hold}
	// Tests collect objects written a moment ago, and kill the collection
	// part way (internal/testhooks).
	if g, ok := testhooks.SweepGrace(); ok {
		o.Grace = g
	}
	o.AfterDelete = testhooks.GCKill()
	return o
}

// GCRequest asks a daemon to collect.
type GCRequest struct {
	Policy gc.Policy `json:"policy"`
	DryRun bool      `json:"dry_run,omitempty"`
}
