package index

import "math"

// Retention. Every checkpoint at or after the watermark is restorable; the
// ones before it stopped being restorable when a garbage collection
// removed what only they needed. A watermark record states this in the
// timeline itself, so a rewind below it is explained, not attempted.

// Watermark returns the effective watermark of the timeline (the greatest
// target of its watermark records) and the record that set it; 0 and nil
// when every checkpoint is restorable.
func Watermark(records []Record) (uint64, *Record) {
	var w uint64
	var rec *Record
	for i := range records {
		r := &records[i]
		if r.Kind == KindWatermark && r.Target != nil && *r.Target > w {
			w, rec = *r.Target, r
		}
	}
	return w, rec
}

// Forever is the NeedUntil value of content the latest state names.
const Forever = math.MaxUint64

// NeedUntil returns, for every content hash the timeline names, the
// watermark from which it is no longer needed: restoring every checkpoint
// >= w needs hash h exactly when w < NeedUntil(records)[h].
//
// By the rules of StateAt, a record of a path decides the path's state at
// every checkpoint from its own seq up to (not including) the path's next
// image record, and a baseline pre-image decides the checkpoints before
// it. So a record is needed while the watermark is below the seq of the
// path's next image record (forever for a path's last record).
func NeedUntil(records []Record) map[Hash]uint64 {
	need := make(map[Hash]uint64)
	last := make(map[string]*Record)
	mark := func(r *Record, until uint64) {
		if r.State != nil && r.Hash != "" && need[r.Hash] < until {
			need[r.Hash] = until
		}
	}
	for i := range records {
		r := &records[i]
		if !r.IsImage() {
			continue
		}
		if prev := last[r.Path]; prev != nil {
			mark(prev, r.Seq)
		}
		last[r.Path] = r
	}
	for _, r := range last {
		mark(r, Forever)
	}
	return need
}

// Live returns the content hashes needed to restore every checkpoint at or
// after watermark w.
func Live(records []Record, w uint64) map[Hash]bool {
	live := make(map[Hash]bool)
	for h, until := range NeedUntil(records) {
		if w < until {
			live[h] = true
		}
	}
	return live
}
