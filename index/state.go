package index

import (
	"path"
	"sort"
	"time"
)

// Entry is the state of one path at a checkpoint, as StateAt derives it.
type Entry struct {
	State
	// Seq is the record the state comes from.
	Seq uint64
	// Kind is that record's kind.
	Kind Kind
	// Baseline is true when the state comes from the path's first pre-image
	// after the checkpoint: the path was untouched since the mount until
	// then (the lazy baseline).
	Baseline bool
	// Unknown is true when ckfs cannot say what the content was: the
	// deciding record is a skip (Reason says why) or the path's first
	// record after the checkpoint is not a pre-image.
	Unknown bool
	Reason  string
	// Found is true when the state comes from a found record after the
	// checkpoint, in the period the checkpoint starts: a change made
	// behind the mount at a time ckfs cannot know, which the period's
	// first change found and a rewind to the checkpoint keeps (StateAt).
	Found bool
}

// StateAt returns the state of every recorded path at checkpoint seq.
//
// For each path, the image record with the greatest seq <= seq gives its
// state. A path with no such record whose first record after seq is a
// pre-image was unchanged from the mount until that record, so that
// pre-image is its state (the lazy baseline: capture never walks the tree,
// and a path's first pre-image is its baseline). Paths that were never
// recorded are not in the result: ckfs knows nothing about them and a
// rewind never touches them.
//
// A change that the check before a path's first change in a period found
// on disk (a found record, FoundChange: made behind the mount at a time
// ckfs cannot know) counts from the start of its period: the state before
// a window is what the window found, so a rewind to before it keeps that
// change (Entry.Found). A change found at mount is already before every
// window of its session and needs no such rule.
//
// A path first recorded absent after a mount record that came after seq
// (the workspace was unmounted and mounted again in between) is unknown
// at seq: it may have existed then and been removed while nothing was
// mounted, which leaves no trace.
//
// records must be in seq order, as Load returns them. StateAt is pure.
func StateAt(records []Record, seq uint64) map[string]Entry {
	out := make(map[string]Entry)
	decided := make(map[string]bool) // path has a record <= seq
	later := make(map[string]bool)   // path has a record > seq, seen already
	bound := uint64(0)               // the last boundary so far
	var at time.Time                 // the time of the checkpoint's record
	remounted := false               // a mount record came after seq
	for i := range records {
		r := &records[i]
		if r.IsBoundary() {
			bound = r.Seq
		}
		if r.Kind == KindMount && r.Seq > seq {
			remounted = true
		}
		if r.Seq <= seq {
			at = r.Time
		}
		if !r.IsImage() {
			continue
		}
		if r.Seq <= seq {
			out[r.Path] = entryOf(r, false)
			decided[r.Path] = true
			continue
		}
		if later[r.Path] {
			continue // the first record after seq decided already
		}
		later[r.Path] = true
		switch {
		case FoundAt(r, bound, seq):
			e := entryOf(r, !decided[r.Path])
			e.Found = true
			out[r.Path] = e
		case decided[r.Path]:
		case remounted && r.IsPreImage() && r.State.Type == TypeAbsent:
			e := entryOf(r, true)
			e.Unknown = true
			e.Reason = remountedReason
			out[r.Path] = e
		case r.IsPreImage() || r.Found != "":
			out[r.Path] = baselineOf(r, at)
		default:
			e := entryOf(r, true)
			e.Unknown = true
			if e.Reason == "" {
				e.Reason = "no pre-image recorded before its first change"
			}
			out[r.Path] = e
		}
	}
	for p, e := range out {
		if guessed(e) && ancestorRulesOut(p, e, func(dir string) (Entry, bool) { a, ok := out[dir]; return a, ok }) {
			out[p] = absentUnder(e)
		}
	}
	return out
}

// guessed reports whether e is a state StateAt inferred from a record after
// the checkpoint (a baseline) that says the path existed, or could not say.
func guessed(e Entry) bool { return e.Baseline && (e.Unknown || e.Type != TypeAbsent) }

// ancestorRulesOut reports whether an ancestor of p, whose guessed state
// e comes from p's first record after the checkpoint, was absent or not a
// directory at the checkpoint by a record older than that one (at or
// before the checkpoint, or the ancestor's own earlier first record); at
// gives an ancestor's state. Then p was absent too, whatever its later
// first record suggests: a directory created while nothing was mounted
// and removed by a later window has its pre-image there, not at the
// checkpoint.
func ancestorRulesOut(p string, e Entry, at func(dir string) (Entry, bool)) bool {
	for dir := path.Dir(p); dir != "." && dir != "/"; dir = path.Dir(dir) {
		if a, ok := at(dir); ok && (!a.Baseline || a.Seq < e.Seq) && !a.Unknown && a.Type != TypeDir {
			return true
		}
	}
	return false
}

// absentUnder is e, a guessed state, made absent because its parent was
// not a directory at the checkpoint: a fact, not a guess.
func absentUnder(e Entry) Entry {
	e.State = State{Type: TypeAbsent}
	e.Unknown, e.Reason, e.Found = false, "", false
	return e
}

// remountedReason says why a path first recorded absent after a remount is
// unknown before it.
const remountedReason = "first recorded absent after ckfs was mounted again: it may have existed then, and been removed while nothing was mounted"

// FoundAt reports whether r, a record in the period that began at
// boundary bound, is a change found on disk that counts as there at
// checkpoint seq: made behind the mount at a time no record tells, it is
// dated to the start of the period it was found in, so every checkpoint
// from that boundary on holds it.
func FoundAt(r *Record, bound, seq uint64) bool {
	return r.Found == FoundChange && bound <= seq
}

// baselineOf is the lazy baseline that r, a path's first record, gives
// at a checkpoint taken at time at: unknown when the path's content was
// modified after the checkpoint (its mtime says so), or the path was
// renamed, copied with its mtime kept or changed otherwise then (the
// pre-image's ctime says so), since it changed
// where ckfs could not see it (while nothing was mounted, say) and what it
// held at the checkpoint is not known.
func baselineOf(r *Record, at time.Time) Entry {
	e := entryOf(r, true)
	// File times come from a coarse clock (a few milliseconds behind the
	// one records are stamped with): within mtimeSlack of the checkpoint
	// counts as after it. A path that was changed through the mount is
	// recorded, so an unrecorded one modified that close to a checkpoint
	// was changed behind it anyway.
	if e.Unknown || e.Type != TypeFile && e.Type != TypeSymlink || at.IsZero() {
		return e
	}
	switch since := at.Add(-mtimeSlack).UnixNano(); {
	case e.MTime > since:
		e.Unknown = true
		e.Reason = "modified after this checkpoint, before ckfs first recorded it"
	case r.CTime > since:
		// A rename, a copy that kept the mtime (cp -p, tar, rsync -a)
		// or a chmod leaves the mtime as it was; the ctime moves.
		e.Unknown = true
		e.Reason = "renamed or changed after this checkpoint, before ckfs first recorded it"
	}
	return e
}

// mtimeSlack is how far behind the records' clock file times may be.
const mtimeSlack = 20 * time.Millisecond

func entryOf(r *Record, baseline bool) Entry {
	e := Entry{State: *r.State, Seq: r.Seq, Kind: r.Kind, Baseline: baseline}
	if r.Kind == KindSkip {
		e.Unknown = true
		e.Reason = r.Reason
	}
	return e
}

// LastImage returns, for every recorded path, its last image record: what
// ckfs last knew to be on disk.
func LastImage(records []Record) map[string]*Record {
	out := make(map[string]*Record)
	for i := range records {
		if records[i].IsImage() {
			out[records[i].Path] = &records[i]
		}
	}
	return out
}

// Window is one tool-call window of the timeline.
type Window struct {
	ID      string
	Tool    string
	Label   string
	Open    *Record // the open record; its seq is the checkpoint "before W"
	Close   *Record // nil while the window is open
	Paths   []string
	Skipped []string // paths with a skip record in the window
}

// Windows lists the windows of the timeline in the order they opened, each
// with the sorted paths it touched.
func Windows(records []Record) []Window {
	var out []Window
	byID := make(map[string]int)
	paths := make(map[int]map[string]bool)
	for i := range records {
		r := &records[i]
		switch r.Kind {
		case KindOpen:
			byID[r.Window] = len(out)
			out = append(out, Window{ID: r.Window, Tool: r.Tool, Label: r.Label, Open: r})
		case KindClose:
			if j, ok := byID[r.Window]; ok {
				out[j].Close = r
			}
		case KindBefore, KindAfter, KindSkip:
			j, ok := byID[r.Window]
			if !ok {
				continue // a rewind's images carry its op id
			}
			if paths[j] == nil {
				paths[j] = make(map[string]bool)
			}
			paths[j][r.Path] = true
			if r.Kind == KindSkip {
				out[j].Skipped = append(out[j].Skipped, r.Path)
			}
		}
	}
	for j, ps := range paths {
		for p := range ps {
			out[j].Paths = append(out[j].Paths, p)
		}
		sort.Strings(out[j].Paths)
	}
	return out
}

// History indexes a timeline by path, so the state of one path at any
// checkpoint costs a binary search rather than a pass over the timeline.
type History struct {
	paths  map[string][]*Record
	bounds []uint64 // the seqs of the boundaries, ascending
	mounts []uint64 // the seqs of the mount records, ascending
	seqs   []uint64 // every record's seq, ascending, and its time
	times  []time.Time
}

// NewHistory indexes the image records of records (in seq order).
func NewHistory(records []Record) History {
	h := History{paths: map[string][]*Record{}}
	h.seqs, h.times = make([]uint64, len(records)), make([]time.Time, len(records))
	for i := range records {
		h.seqs[i], h.times[i] = records[i].Seq, records[i].Time
		switch r := &records[i]; {
		case r.IsImage():
			h.paths[r.Path] = append(h.paths[r.Path], r)
		case r.IsBoundary():
			h.bounds = append(h.bounds, r.Seq)
		case r.Kind == KindMount:
			h.mounts = append(h.mounts, r.Seq)
		}
	}
	return h
}

// At returns the state of path at checkpoint seq by the rules of StateAt;
// false if the path was never recorded.
func (h History) At(p string, seq uint64) (Entry, bool) {
	e, ok := h.at(p, seq)
	if ok && guessed(e) && ancestorRulesOut(p, e, func(dir string) (Entry, bool) { return h.at(dir, seq) }) {
		return absentUnder(e), true
	}
	return e, ok
}

// at is At before the ancestors are consulted.
func (h History) at(path string, seq uint64) (Entry, bool) {
	recs := h.paths[path]
	if len(recs) == 0 {
		return Entry{}, false
	}
	i := sort.Search(len(recs), func(i int) bool { return recs[i].Seq > seq })
	if i < len(recs) && recs[i].Found == FoundChange && !h.boundaryIn(seq, recs[i].Seq) {
		e := entryOf(recs[i], i == 0)
		e.Found = true
		return e, true
	}
	if i > 0 {
		return entryOf(recs[i-1], false), true
	}
	first := recs[0]
	var at time.Time
	if j := sort.Search(len(h.seqs), func(j int) bool { return h.seqs[j] > seq }); j > 0 {
		at = h.times[j-1]
	}
	if first.IsPreImage() && first.State.Type == TypeAbsent && h.mountIn(seq, first.Seq) {
		e := entryOf(first, true)
		e.Unknown = true
		e.Reason = remountedReason
		return e, true
	}
	e := baselineOf(first, at)
	if !first.IsPreImage() && first.Found == "" && !e.Unknown {
		e.Unknown = true
		e.Reason = "no pre-image recorded before its first change"
	}
	return e, true
}

// mountIn reports whether a mount record lies in (from, to).
func (h History) mountIn(from, to uint64) bool {
	j := sort.Search(len(h.mounts), func(j int) bool { return h.mounts[j] > from })
	return j < len(h.mounts) && h.mounts[j] < to
}

// boundaryIn reports whether a boundary lies in (from, to).
func (h History) boundaryIn(from, to uint64) bool {
	j := sort.Search(len(h.bounds), func(j int) bool { return h.bounds[j] > from })
	return j < len(h.bounds) && h.bounds[j] < to
}
