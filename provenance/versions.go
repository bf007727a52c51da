package provenance

import (
	"cmp"
	"slices"
	"time"

	"fmt"

	"github.com/ckfs-dev/ckfs/index"
)

// blamer holds what one Blame reads: the timeline, the store, and the
// paths being followed (a rename chain never loops).
type blamer struct {
	records []index.Record
	get     Content
	ops     map[string]bool
	seen    map[string]bool
	hist    *index.History
	// origins are every origin a line was given; lines hold indexes.
	origins    []Origin
	restoredAs map[restoreKey]int32
}

// version is one recorded state of a path and the change that made it.
type version struct {
	by     string // ByWindow, ByYou, ByBefore, ByRewind
	window string // the window or operation that made it
	op     bool   // a rewind or revert made it
	seq    uint64
	time   time.Time
	path   string
	state  index.State
	// unknown: its content was not stored (a skip, or content collected).
	unknown bool
	data    []byte
	loaded  bool
}

// versions lists the states of path recorded up to checkpoint at, oldest
// first, each differing from the one before; the last is the path's state
// at at by StateAt's rules (a lazy baseline or a found change recorded
// after at included).
func (b *blamer) versions(path string, at uint64) ([]version, error) {
	var out []version
	for i := range b.records {
		r := &b.records[i]
		if r.Seq > at {
			break
		}
		if !r.IsImage() || r.Path != path {
			continue
		}
		v := b.versionOf(r, len(out) > 0)
		if len(out) > 0 && sameVersion(out[len(out)-1], v) {
			continue
		}
		out = append(out, v)
	}
	if b.hist == nil {
		h := index.NewHistory(b.records)
		b.hist = &h
	}
	e, ok := b.hist.At(path, at)
	if !ok || e.Seq <= at {
		return out, nil
	}
	if e.Unknown {
		return nil, fmt.Errorf("%s: its content at checkpoint %d is not known: %s", path, at, e.Reason)
	}
	v := version{by: ByBefore, seq: e.Seq, path: path, state: e.State}
	if e.Found {
		v.by = ByYou
	}
	if i, ok := slices.BinarySearchFunc(b.records, e.Seq, func(r index.Record, seq uint64) int { return cmp.Compare(r.Seq, seq) }); ok {
		v.time = b.records[i].Time
	}
	if len(out) == 0 || !sameVersion(out[len(out)-1], v) {
		out = append(out, v)
	}
	return out, nil
}

// versionOf is the version record r gives; prev says whether the path has
// an earlier version, so a pre-image that differs from it is a change
// nobody recorded as it was made (the user's).
func (b *blamer) versionOf(r *index.Record, prev bool) version {
	v := version{seq: r.Seq, time: r.Time, path: r.Path, state: *r.State, window: r.Window}
	v.unknown = r.Kind == index.KindSkip || (r.State.Type == index.TypeFile && r.State.Hash == "" && r.State.Size > 0)
	switch {
	case (r.Kind == index.KindAfter || r.Kind == index.KindSkip) && b.ops[r.Window]:
		v.by, v.op = ByRewind, true
	case r.Kind == index.KindAfter || r.Kind == index.KindSkip:
		v.by = ByWindow
	case r.Kind == index.KindOutside && r.Image == index.ImageAfter, prev:
		v.by, v.window = ByYou, ""
	default:
		v.by, v.window = ByBefore, ""
	}
	return v
}

// sameVersion reports whether b holds what a held (a version whose
// content is not known is never taken as the same).
func sameVersion(a, b version) bool {
	return !a.unknown && !b.unknown && a.state.Type == b.state.Type && a.state.Hash == b.state.Hash
}

// load reads a version's content; false when it is not available (not
// stored, or collected since).
func (b *blamer) load(v *version) ([]byte, bool) {
	if v.loaded {
		return v.data, true
	}
	if v.unknown {
		return nil, false
	}
	data, err := b.get(v.state)
	if err != nil {
		return nil, false
	}
	v.data, v.loaded = data, true
	return data, true
}
