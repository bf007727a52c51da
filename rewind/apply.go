package rewind

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
)

// Applier carries out plans on a workspace.
type Applier struct {
	Store      cas.Store
	Dir        *Dir
	JournalDir string
	Root       string // recorded in journals
	// Append appends records durably to the timeline (through the
	// recorder when mounted, so it knows the new states).
	Append func(recs ...*index.Record) error
	// AfterAction, if set, is called after the journal is written (i == -1)
	// and after each operation; an error stops the apply there, leaving
	// the journal, as any failure does. Tests use it to inject failures.
	AfterAction func(i int, op PathAction) error
	Now         func() time.Time
}

// ApplyError is a failure during apply: the journal is left in place.
// Rollback, when set, is why putting back what it changed failed too.
type ApplyError struct {
	Op       string
	Err      error
	Rollback error
}

func (e *ApplyError) Error() string {
	also := ""
	if e.Rollback != nil {
		also = fmt.Sprintf("; putting back what it changed failed too (%v)", e.Rollback)
	}
	return fmt.Sprintf("rewind %s failed part way: %v%s; the workspace is partly rewound and the journal is kept: fix the cause, then run ckfs rewind --rollback %s to put back what was there, or --abandon %s", e.Op, e.Err, also, e.Op, e.Op)
}

func (e *ApplyError) Unwrap() error { return e.Err }

// RolledBackError is a failure during apply after which what the rewind
// had changed was put back (Rollback): the files are as they were.
type RolledBackError struct {
	Op  string
	Err error
}

func (e *RolledBackError) Error() string {
	return fmt.Sprintf("rewind %s failed: %v; what it had changed is put back, and the files are as they were before it", e.Op, e.Err)
}

func (e *RolledBackError) Unwrap() error { return e.Err }

// Apply carries out plan as operation op:
//  1. stores the current content of every path it will touch (so the
//     rewind can be undone) and checks every target object is present;
//  2. writes and fsyncs the journal;
//  3. applies each operation (temp file + rename + fsync for contents);
//  4. appends the rewind record with before and after images of each path;
//  5. removes the journal.
//
// A failure before step 2 changes nothing. A failure after it returns an
// *ApplyError and leaves the journal for Rollback.
func (a *Applier) Apply(plan *Plan, op string) error {
	if !ValidOp(op) {
		return fmt.Errorf("bad operation id %q", op)
	}
	if len(plan.Steps) == 0 {
		return nil
	}
	j := &Journal{V: JournalVersion, Op: op, Target: plan.Target, Root: a.Root, Created: a.now()}
	if !plan.targetsVerified {
		if bad := badObjects(a.Store, plan.Steps, func(s Step) index.State { return s.Target }); len(bad) > 0 {
			return &ObjectError{What: "rewind", Bad: bad}
		}
	}
	for _, s := range plan.Steps {
		if err := a.saveCurrent(s); err != nil {
			return nothingChanged(err)
		}
		j.Paths = append(j.Paths, JournalPath{Path: s.Path, Target: s.Target, Current: s.Current})
	}
	// Everything rollback would need is in the store; make it durable in
	// one go, and read it back, before the journal promises it.
	if err := a.syncStore(); err != nil {
		return nothingChanged(err)
	}
	if bad := badObjects(a.Store, plan.Steps, func(s Step) index.State { return s.Current }); len(bad) > 0 {
		return &ObjectError{What: "rewind", Bad: bad}
	}
	if err := WriteJournal(a.JournalDir, j); err != nil {
		return nothingChanged(fmt.Errorf("write rewind journal: %w", err))
	}
	if err := a.hook(-1, PathAction{}); err != nil {
		return &ApplyError{Op: op, Err: err}
	}
	for i, o := range plan.Ordered() {
		if err := a.do(o); err != nil {
			return &ApplyError{Op: op, Err: err}
		}
		if err := a.hook(i, o); err != nil {
			return &ApplyError{Op: op, Err: err}
		}
	}
	// Files were written without a sync each (the journal covers a crash
	// until here); make them durable before the timeline says so.
	if err := a.Dir.SyncFS(); err != nil {
		return &ApplyError{Op: op, Err: err}
	}
	if err := a.record(op, plan.Target, plan.Label, plan.Steps); err != nil {
		return &ApplyError{Op: op, Err: err}
	}
	if err := RemoveJournal(a.JournalDir, op); err != nil {
		return fmt.Errorf("rewind %s is complete but its journal could not be removed: %w; run ckfs rewind --abandon %s", op, err, op)
	}
	return nil
}

// nothingChanged says of a failure before the journal, which changed
// nothing, that nothing was changed, and what to do when the store's
// disk is full (what the rewind overwrites is kept there first).
func nothingChanged(err error) error {
	switch {
	case errors.Is(err, ErrRefused):
		return err
	case errors.Is(err, syscall.ENOSPC):
		return fmt.Errorf("%w; nothing was changed: the store's disk is full, and what a rewind overwrites is kept there first: free space on it, run ckfs gc, or move the store (CKFS_HOME) to a larger disk", err)
	}
	return fmt.Errorf("%w; nothing was changed", err)
}

func (a *Applier) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now().UTC()
}

func (a *Applier) hook(i int, o PathAction) error {
	if a.AfterAction == nil {
		return nil
	}
	return a.AfterAction(i, o)
}

// saveCurrent stores what is at the step's path now, checking it is still
// what the plan saw.
func (a *Applier) saveCurrent(s Step) error {
	if err := a.saveXAttrs(s); err != nil {
		return err
	}
	if s.Current.Hash == "" {
		return nil
	}
	b, err := a.Dir.Content(s.Path)
	if err != nil {
		return fmt.Errorf("capture %s before overwriting it: %w", s.Path, err)
	}
	put := a.Store.Put
	if d, ok := a.Store.(deferredStore); ok {
		put = d.PutDeferred // synced once, in syncStore, before the journal
	}
	h, _, err := put(b)
	if err != nil {
		return fmt.Errorf("capture %s before overwriting it: %w", s.Path, err)
	}
	if h != s.Current.Hash {
		return fmt.Errorf("%s changed while the rewind was being prepared (run it again)", s.Path)
	}
	return nil
}

// saveXAttrs stores the extended attributes the step's path has now.
func (a *Applier) saveXAttrs(s Step) error {
	if s.Current.XAttrs == "" {
		return nil
	}
	attrs, err := a.Dir.XAttrs(s.Path)
	if err != nil {
		return fmt.Errorf("capture the extended attributes of %s before changing them: %w", index.Display(s.Path), err)
	}
	h, _, err := a.Store.Put(index.EncodeXAttrs(attrs))
	if err != nil {
		return fmt.Errorf("capture the extended attributes of %s before changing them: %w", index.Display(s.Path), err)
	}
	if h != s.Current.XAttrs {
		return fmt.Errorf("%s changed while the rewind was being prepared (run it again)", index.Display(s.Path))
	}
	return nil
}

// do applies one operation.
func (a *Applier) do(o PathAction) error {
	t := o.Target
	m, err := a.metaOf(t)
	if err != nil {
		return fmt.Errorf("restore %s: %w", index.Display(o.Path), err)
	}
	switch o.Action {
	case ActDelete:
		return a.Dir.Remove(o.Path)
	case ActRmdir:
		return a.Dir.Rmdir(o.Path)
	case ActMkdir:
		return a.Dir.Mkdir(o.Path, m)
	case ActChmod, ActMetadata:
		return a.Dir.SetMeta(o.Path, m)
	case ActRestore, ActRecreate, ActRelink:
		if t.Type.Special() {
			return a.Dir.Mknod(o.Path, t)
		}
		h := t.Hash
		if t.Type == index.TypeSymlink {
			b, err := a.Store.Get(h)
			if err != nil {
				return fmt.Errorf("restore %s: %w", index.Display(o.Path), err)
			}
			owner := ""
			if m.Full {
				owner = m.Owner
			}
			return a.Dir.Symlink(o.Path, string(b), owner)
		}
		rc, err := a.Store.Open(h)
		if err != nil {
			return fmt.Errorf("restore %s: %w", index.Display(o.Path), err)
		}
		defer rc.Close()
		// The stream verifies the content as it is copied; a corrupt
		// object fails before the rename, leaving the file as it was.
		return a.Dir.writeFile(o.Path, rc, m, false)
	}
	return fmt.Errorf("unknown action %q", o.Action)
}

// record appends, in one batch, the before images of every path the
// rewind wrote, the rewind record, and the after images. The before images
// come first so that the rewind record's seq is a checkpoint holding
// exactly what was on disk before it, changes ckfs never recorded (and
// that --force overwrote) included: undo rewinds to it.
func (a *Applier) record(op string, target uint64, label string, steps []Step) error {
	tgt := target
	var recs []*index.Record
	for _, s := range steps {
		cur := s.Current
		recs = append(recs, &index.Record{Kind: index.KindBefore, Window: op, Path: s.Path, State: &cur})
	}
	recs = append(recs, &index.Record{Kind: index.KindRewind, Op: op, Target: &tgt, Label: label})
	for _, s := range steps {
		// What was written is the target, verified as it was copied: take
		// only the new times from the disk.
		now, err := a.Dir.Stat(s.Path)
		if err != nil {
			return err
		}
		if now.Type == s.Target.Type && now.Type != index.TypeAbsent {
			now.Hash, now.Size, now.XAttrs = s.Target.Hash, s.Target.Size, s.Target.XAttrs
			if !s.Target.HasMeta() {
				// Only the mode was restored: record the attributes the
				// path has now.
				if st, err := a.Dir.State(s.Path); err == nil {
					now.XAttrs = st.XAttrs
				}
			}
		} else if now.Type != index.TypeAbsent && now.Type != index.TypeDir {
			if now, err = a.Dir.State(s.Path); err != nil {
				return err
			}
		}
		recs = append(recs, &index.Record{Kind: index.KindAfter, Window: op, Path: s.Path, State: &now})
	}
	return a.Append(recs...)
}

// Rollback puts back exactly what the journal of op says was there before
// the rewind began, removes the journal, and records what it wrote.
func (a *Applier) Rollback(op string) error {
	j, err := ReadJournal(a.JournalDir, op)
	if err != nil {
		return err
	}
	if j.Root != a.Root {
		return fmt.Errorf("rollback of %s refused; nothing was changed: its journal is for %s, not %s (roll it back where it was made, or --abandon it): %w", op, j.Root, a.Root, ErrRefused)
	}
	plan := &Plan{}
	for _, p := range j.Paths {
		cur, err := a.Dir.State(p.Path)
		if err != nil {
			return err
		}
		if acts := actions(cur, p.Current); len(acts) > 0 {
			plan.Steps = append(plan.Steps, Step{Path: p.Path, Actions: acts, Current: cur, Target: p.Current})
		}
	}
	if bad := badObjects(a.Store, plan.Steps, func(s Step) index.State { return s.Target }); len(bad) > 0 {
		return &ObjectError{What: "rollback of " + op, Bad: bad}
	}
	for _, s := range plan.Steps {
		if err := a.saveCurrent(s); err != nil {
			return nothingChanged(err)
		}
	}
	if err := a.syncStore(); err != nil {
		return nothingChanged(err)
	}
	if bad := badObjects(a.Store, plan.Steps, func(s Step) index.State { return s.Current }); len(bad) > 0 {
		return &ObjectError{What: "rollback of " + op, Bad: bad}
	}
	for _, o := range plan.Ordered() {
		if err := a.do(o); err != nil {
			return fmt.Errorf("rollback %s: %w (the journal is kept; fix the cause and run it again)", op, err)
		}
	}
	if err := a.Dir.SyncFS(); err != nil {
		return err
	}
	if len(plan.Steps) > 0 {
		if err := a.record(op+"-rollback", j.Target, "rollback of "+op, plan.Steps); err != nil {
			return err
		}
	}
	return RemoveJournal(a.JournalDir, op)
}

// Abandon forgets the journal of op without touching the workspace.
// A journal that cannot be read back is set aside (OP.json.damaged).
func (a *Applier) Abandon(op string) error {
	_, err := ReadJournal(a.JournalDir, op)
	var damaged *DamagedJournalError
	switch {
	case errors.As(err, &damaged):
		return setAside(a.JournalDir, op)
	case err != nil:
		return err
	}
	return RemoveJournal(a.JournalDir, op)
}

// deferredStore is a store that can batch durability (cas.Local).
type deferredStore interface {
	PutDeferred([]byte) (cas.Hash, bool, error)
	Sync() error
}

func (a *Applier) syncStore() error {
	if d, ok := a.Store.(deferredStore); ok {
		return d.Sync()
	}
	return nil
}

var errNoRewind = errors.New("there is no rewind to undo")

// UndoTarget returns the checkpoint that undoes the last rewind: the
// state just before it.
func UndoTarget(records []index.Record) (uint64, string, error) {
	for i := len(records) - 1; i >= 0; i-- {
		if records[i].Kind == index.KindRewind {
			return records[i].Seq, records[i].Op, nil
		}
	}
	return 0, "", errNoRewind
}

// ChangedSince lists the paths whose state changed after the rewind op
// whose record is at seq, by anything but that rewind's own images: work
// done since the rewind (by a tool window, or by hand), which undoing the
// rewind would overwrite.
func ChangedSince(records []index.Record, seq uint64, op string) []string {
	prev := map[string]index.State{}
	seen := map[string]bool{}
	var out []string
	for i := range records {
		r := &records[i]
		if !r.IsImage() {
			continue
		}
		p, had := prev[r.Path]
		prev[r.Path] = *r.State
		if r.Seq <= seq || r.Window == op || r.Window == op+"-rollback" || seen[r.Path] {
			continue
		}
		if had && !p.SameContent(*r.State) {
			seen[r.Path] = true
			out = append(out, r.Path)
		}
	}
	return out
}
