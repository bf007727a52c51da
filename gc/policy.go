// Package gc governs what a store keeps: it turns a retention policy into
// a watermark on the file timeline, marks every object a kept checkpoint
// (or a pending journal, or the undo of the last rewind) still needs,
// sweeps the rest safely against concurrent writers, and measures the
// store (du). It never touches the workspace.
package gc

import (
	"fmt"
	"sort"
	"time"

	"github.com/ckfs-dev/ckfs/config"
	"github.com/ckfs-dev/ckfs/index"
)

// Policy says which checkpoints stay restorable. A checkpoint is the moment
// before a tool-call window (its open record). Every limit that is set
// applies: a checkpoint stays restorable while it is among the last Keep,
// younger than MaxAge, and the objects needed from it on fit in MaxSize.
// Zero means no limit of that kind.
type Policy struct {
	Keep    int           `json:"keep_last,omitempty"`
	MaxAge  time.Duration `json:"max_age_ns,omitempty"`
	MaxSize int64         `json:"max_size,omitempty"`
	// Ceiling, if set, is as far as the watermark may go whatever the
	// limits say: the checkpoints after it exist nowhere else yet (a
	// remote has not got them). CeilingWhy says so.
	Ceiling    *uint64 `json:"ceiling,omitempty"`
	CeilingWhy string  `json:"ceiling_why,omitempty"`
}

// String renders the policy for records and people.
func (p Policy) String() string {
	s := ""
	add := func(f string, a ...any) {
		if s != "" {
			s += ", "
		}
		s += fmt.Sprintf(f, a...)
	}
	if p.Keep > 0 {
		add("keep the last %d checkpoints", p.Keep)
	}
	if p.MaxAge > 0 {
		add("keep checkpoints younger than %s", p.MaxAge)
	}
	if p.MaxSize > 0 {
		add("keep the store under %d bytes", p.MaxSize)
	}
	if s == "" {
		return "keep everything"
	}
	return s
}

// Decision is where a policy puts the watermark.
type Decision struct {
	Watermark   uint64   `json:"watermark"`          // first restorable seq; 0: all
	Previous    uint64   `json:"previous_watermark"` // the timeline's watermark before
	Checkpoints int      `json:"checkpoints"`        // window checkpoints in the timeline
	Restorable  int      `json:"restorable"`         // of them, at or after the watermark
	Reasons     []string `json:"reasons,omitempty"`  // which limit moved the watermark
	Needed      int64    `json:"needed_bytes"`       // stored bytes of the live objects
}

// Decide places the watermark for policy over records. stored gives the
// stored size of each object (for MaxSize); now is the clock. The
// watermark never moves back: what an earlier collection removed stays
// removed.
func Decide(records []index.Record, p Policy, stored map[index.Hash]int64, now time.Time) Decision {
	prev, _ := index.Watermark(records)
	d := Decision{Watermark: prev, Previous: prev}
	var cps []*index.Record
	for i := range records {
		if records[i].Kind == index.KindOpen {
			cps = append(cps, &records[i])
		}
	}
	d.Checkpoints = len(cps)
	last := uint64(0)
	if n := len(records); n > 0 {
		last = records[n-1].Seq
	}
	raise := func(w uint64, why string) {
		if w > d.Watermark {
			d.Watermark = w
			d.Reasons = append(d.Reasons, why)
		}
	}
	if p.Keep > 0 && len(cps) > p.Keep {
		raise(cps[len(cps)-p.Keep].Seq, fmt.Sprintf("keep the last %d checkpoints", p.Keep))
	}
	if p.MaxAge > 0 {
		cut := now.Add(-p.MaxAge)
		i := sort.Search(len(cps), func(i int) bool { return !cps[i].Time.Before(cut) })
		switch {
		case i == len(cps) && len(cps) > 0:
			raise(last, fmt.Sprintf("every checkpoint is older than %s", p.MaxAge))
		case i > 0:
			raise(cps[i].Seq, fmt.Sprintf("keep checkpoints younger than %s", p.MaxAge))
		}
	}
	need := index.NeedUntil(records)
	if p.MaxSize > 0 {
		raise(sizeWatermark(cps, need, stored, d.Watermark, last, p.MaxSize), fmt.Sprintf("keep the store under %d bytes", p.MaxSize))
	}
	if p.Ceiling != nil && d.Watermark > *p.Ceiling {
		d.Watermark = max(*p.Ceiling, d.Previous)
		d.Reasons = append(d.Reasons, "held back: "+p.CeilingWhy)
	}
	for h, until := range need {
		if d.Watermark < until {
			d.Needed += stored[h]
		}
	}
	for _, c := range cps {
		if c.Seq >= d.Watermark {
			d.Restorable++
		}
	}
	return d
}

// sizeWatermark returns the lowest checkpoint at or above from whose live
// objects fit in max; the end of the timeline if none does (the latest
// state is always kept, whatever it costs).
func sizeWatermark(cps []*index.Record, need map[index.Hash]uint64, stored map[index.Hash]int64, from, last uint64, max int64) uint64 {
	type obj struct {
		until uint64
		size  int64
	}
	objs := make([]obj, 0, len(need))
	var total int64
	for h, until := range need {
		objs = append(objs, obj{until, stored[h]})
		total += stored[h]
	}
	sort.Slice(objs, func(i, j int) bool { return objs[i].until < objs[j].until })
	// As the watermark rises past an object's until, it stops counting.
	i := 0
	size := total
	for _, w := range append(candidates(cps, from), last) {
		for i < len(objs) && objs[i].until <= w {
			size -= objs[i].size
			i++
		}
		if size <= max {
			return w
		}
	}
	return last
}

func candidates(cps []*index.Record, from uint64) []uint64 {
	out := []uint64{from}
	for _, c := range cps {
		if c.Seq > from {
			out = append(out, c.Seq)
		}
	}
	return out
}

// RetentionPolicy is the configured retention as a policy.
func RetentionPolicy(r config.Retention) Policy {
	return Policy{Keep: r.Keep, MaxAge: r.MaxAge, MaxSize: r.MaxSize}
}
