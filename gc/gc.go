package gc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/rewind"
)

// Options is one collection.
type Options struct {
	Store  string     // the store directory
	CAS    *cas.Local // its objects
	Policy Policy
	DryRun bool // decide and count, delete nothing, write nothing
	Now    time.Time
	// Grace protects objects written this long before the collection
	// (cas.DefaultGrace when zero; negative turns the guard off).
	Grace time.Duration

	// Hold runs fn while no writer can append to the timeline or store an
	// object unseen: the daemon runs it with capture paused; a command that
	// holds the timeline's writer lock runs it directly. appendFn appends
	// records durably.
	Hold func(fn func(appendFn func(...*index.Record) error) error) error

	// AfterDelete, if set, is called after each object deleted (tests kill
	// the process there).
	AfterDelete func(n int)
}

// Result is what a collection found and did.
type Result struct {
	Decision
	Policy       string `json:"policy"`
	DryRun       bool   `json:"dry_run"`
	Objects      int    `json:"objects"`
	StoredBytes  int64  `json:"stored_bytes"`
	Live         int    `json:"live_objects"`
	Deleted      int    `json:"deleted_objects"` // would be deleted, in a dry run
	Freed        int64  `json:"freed_bytes"`
	KeptRecent   int    `json:"kept_recent"` // unreferenced but stored during the collection
	TempsRemoved int    `json:"temps_removed"`
	// Missing and Damaged count objects that kept checkpoints need but the
	// store does not hold, or holds with a header that does not decode (a
	// collection reads headers only: ckfs verify rehashes every object).
	Missing int `json:"missing_objects,omitempty"`
	Damaged int `json:"damaged_objects,omitempty"`
}

// tempAge is how old a temp file must be before a collection removes it: a
// running writer never takes this long over one object.
const tempAge = time.Hour

// Collect places the watermark by the policy, appends a watermark record
// when it moved (before anything is deleted, so a collection killed midway
// is completed by running it again), and deletes every object that no
// checkpoint at or after the watermark, no pending rewind journal and no
// undo of the last rewind needs.
func Collect(o Options) (*Result, error) {
	res := &Result{Policy: o.Policy.String(), DryRun: o.DryRun}
	var sweep *cas.Sweep
	var live map[index.Hash]bool
	var objects []cas.Info
	err := o.Hold(func(appendFn func(...*index.Record) error) error {
		if !o.DryRun {
			grace := o.Grace
			if grace == 0 {
				grace = cas.DefaultGrace
			}
			s, err := o.CAS.BeginSweep(grace)
			if err != nil {
				return err
			}
			sweep = s
		}
		recs, tail, err := index.Load(filepath.Join(o.Store, index.TimelineFile))
		if err != nil {
			return err
		}
		if tail != nil && !tail.Torn {
			return fmt.Errorf("nothing was collected: %w", tail.Repair(filepath.Join(o.Store, index.TimelineFile)))
		}
		stored := map[index.Hash]int64{}
		var damaged []index.Hash
		err = o.CAS.Walk(func(i cas.Info) error {
			if i.Size < 0 {
				damaged = append(damaged, i.Hash)
			}
			objects = append(objects, i)
			stored[i.Hash] = i.Stored
			res.StoredBytes += i.Stored
			return nil
		})
		if err != nil {
			return fmt.Errorf("list objects of %s: %w", o.Store, err)
		}
		res.Objects = len(objects)
		res.Decision = Decide(recs, o.Policy, stored, o.Now)
		live = index.Live(recs, res.Watermark)
		if err := keepPending(o.Store, live); err != nil {
			return err
		}
		keepUndo(recs, live)
		for h := range live {
			if _, ok := stored[h]; !ok {
				res.Missing++
			}
		}
		for _, h := range damaged {
			if live[h] {
				res.Damaged++
			}
		}
		if o.DryRun || res.Watermark <= res.Previous {
			return nil
		}
		w := res.Watermark
		return appendFn(&index.Record{Kind: index.KindWatermark, Target: &w, Reason: reasons(res.Reasons)})
	})
	if sweep != nil {
		defer sweep.End()
	}
	if err != nil {
		return nil, err
	}
	res.Live = len(live)
	return res, sweepDead(o, sweep, objects, live, res)
}

// sweepDead deletes (or, dry, counts) the objects no live record needs.
func sweepDead(o Options, sweep *cas.Sweep, objects []cas.Info, live map[index.Hash]bool, res *Result) error {
	var deleted []cas.Hash
	if !o.DryRun {
		var dead []cas.Hash
		for _, i := range objects {
			if !live[i.Hash] {
				dead = append(dead, i.Hash)
			}
		}
		sweep.Dead(dead) // a pack of several is unpacked once
	}
	for _, i := range objects {
		if live[i.Hash] {
			continue
		}
		if o.DryRun {
			res.Deleted++
			res.Freed += i.Stored
			continue
		}
		ok, err := sweep.Delete(i.Hash)
		if err != nil {
			return err
		}
		if !ok {
			res.KeptRecent++
			continue
		}
		deleted = append(deleted, i.Hash)
		res.Deleted++
		res.Freed += i.Stored
		if o.AfterDelete != nil {
			o.AfterDelete(res.Deleted)
		}
	}
	if !o.DryRun {
		if err := sweep.SyncDirs(deleted); err != nil {
			return err
		}
		res.TempsRemoved = removeOldTemps(o.CAS.TempDir(), o.Now)
	}
	return nil
}

func reasons(rs []string) string {
	if len(rs) == 0 {
		return "ckfs gc"
	}
	s := rs[0]
	for _, r := range rs[1:] {
		s += "; " + r
	}
	return s
}

// keepPending marks what every pending rewind journal names: a rollback
// needs both sides. A journal that cannot be read stops the collection.
func keepPending(store string, live map[index.Hash]bool) error {
	dir := rewind.JournalDir(store)
	ops, err := rewind.PendingJournals(dir)
	if err != nil {
		return fmt.Errorf("list rewind journals in %s: %w", dir, err)
	}
	for _, op := range ops {
		j, err := rewind.ReadJournal(dir, op)
		if err != nil {
			return fmt.Errorf("rewind journal %s cannot be read, so nothing was collected: %w (ckfs rewind --rollback %s or --abandon %s first)", op, err, op, op)
		}
		for _, p := range j.Paths {
			for _, h := range []index.Hash{p.Target.Hash, p.Current.Hash} {
				if h != "" {
					live[h] = true
				}
			}
		}
	}
	return nil
}

// keepUndo marks the state the last rewind replaced, so ckfs rewind --undo
// works whatever the policy.
func keepUndo(recs []index.Record, live map[index.Hash]bool) {
	seq, _, err := rewind.UndoTarget(recs)
	if err != nil {
		return
	}
	for _, e := range index.StateAt(recs, seq) {
		if e.Hash != "" {
			live[e.Hash] = true
		}
	}
}

// removeOldTemps removes temp files left by a crash; it returns how many.
func removeOldTemps(dir string, now time.Time) int {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		info, err := e.Info()
		if err != nil || now.Sub(info.ModTime()) < tempAge {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err == nil || errors.Is(err, os.ErrNotExist) {
			n++
		}
	}
	return n
}
