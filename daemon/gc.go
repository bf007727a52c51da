package daemon

import (
	"time"

	"github.com/ckfs-dev/ckfs/gc"
	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/workspace"
)

// collect runs a collection in the daemon. The watermark is decided with
// capture paused (so no object can be stored unseen between reading the
// timeline and starting the sweep); the sweep runs while capture goes on,
// and the store refuses to delete anything stored meanwhile.
func (d *daemon) collect(p gc.Policy, dry bool) (*gc.Result, error) {
	d.opMu.Lock()
	defer d.opMu.Unlock()
	res, err := gc.Collect(workspace.CollectOptions(d.o.Store, d.store, p, dry, func(fn func(func(...*index.Record) error) error) error {
		return d.rec.Exclusive(func(appendFn func(...*index.Record) error, _ []string) error { return fn(appendFn) })
	}))
	if err == nil && !dry {
		d.log.Info("collected", "policy", res.Policy, "watermark", res.Watermark, "deleted", res.Deleted, "freed", res.Freed)
	}
	return res, err
}

// maybeCollect collects when automatic collection is on and the store has
// grown past its size limit; it measures at most once a sizeCheckEvery.
func (d *daemon) maybeCollect(now time.Time) {
	r := d.o.Retention
	if !r.AutoGC || r.MaxSize <= 0 || now.Sub(d.lastSizeCheck) < d.sizeEvery {
		return
	}
	d.lastSizeCheck = now
	if n := workspace.DirBytes(workspace.Layout(d.o.Store).Objects()); n <= r.MaxSize {
		return
	}
	if _, err := d.collect(gc.RetentionPolicy(r), false); err != nil {
		d.log.Error("automatic collection", "err", err)
	}
}

// collectAtStop applies the retention policy once capture has stopped,
// when automatic collection is on.
func (d *daemon) collectAtStop(tl *index.Writer) {
	r := d.o.Retention
	if !r.AutoGC {
		return
	}
	d.opMu.Lock()
	defer d.opMu.Unlock()
	res, err := gc.Collect(workspace.CollectOptions(d.o.Store, d.store, gc.RetentionPolicy(r), false,
		func(fn func(func(...*index.Record) error) error) error { return fn(tl.Append) }))
	if err != nil {
		d.log.Error("collection after unmount", "err", err)
		return
	}
	d.log.Info("collected after unmount", "watermark", res.Watermark, "deleted", res.Deleted, "freed", res.Freed)
}
