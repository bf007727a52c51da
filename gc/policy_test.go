package gc

import (
	"fmt"
	"testing"
	"time"

	"github.com/ckfs-dev/ckfs/index"
)

var t0 = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// session builds n windows, one a day, each rewriting a.txt with content
// i (size 100 stored bytes each).
func session(n int) ([]index.Record, map[index.Hash]int64) {
	var recs []index.Record
	stored := map[index.Hash]int64{}
	seq := uint64(0)
	add := func(r index.Record) {
		seq++
		r.V, r.Seq = 1, seq
		recs = append(recs, r)
	}
	hash := func(i int) index.Hash { return index.Hash(fmt.Sprintf("blake3:%064x", i)) }
	for i := 1; i <= n; i++ {
		when := t0.Add(time.Duration(i) * 24 * time.Hour)
		id := fmt.Sprintf("w%d", i)
		add(index.Record{Kind: index.KindOpen, Window: id, Time: when})
		add(index.Record{Kind: index.KindBefore, Window: id, Path: "a.txt", Time: when, State: &index.State{Hash: hash(i - 1), Size: 100, Type: index.TypeFile}})
		add(index.Record{Kind: index.KindAfter, Window: id, Path: "a.txt", Time: when, State: &index.State{Hash: hash(i), Size: 100, Type: index.TypeFile}})
		add(index.Record{Kind: index.KindClose, Window: id, Time: when})
		stored[hash(i-1)], stored[hash(i)] = 100, 100
	}
	return recs, stored
}

func TestDecide(t *testing.T) {
	recs, stored := session(10) // opens at seqs 1, 5, 9, ... 37
	now := t0.Add(11 * 24 * time.Hour)
	for _, tc := range []struct {
		name       string
		p          Policy
		watermark  uint64
		restorable int
	}{
		{"nothing", Policy{}, 0, 10},
		{"keep more than there are", Policy{Keep: 20}, 0, 10},
		{"keep 3", Policy{Keep: 3}, 29, 3},
		{"younger than 4.5 days", Policy{MaxAge: 108 * time.Hour}, 25, 4},
		{"all too old", Policy{MaxAge: time.Hour}, 40, 0},
		{"size for 5 contents", Policy{MaxSize: 500}, 25, 4},
		{"tightest limit wins", Policy{Keep: 8, MaxAge: 1000 * time.Hour, MaxSize: 300}, 33, 2},
		{"size below the current state", Policy{MaxSize: 1}, 40, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(recs, tc.p, stored, now)
			if d.Watermark != tc.watermark || d.Restorable != tc.restorable {
				t.Errorf("Decide(%s) = watermark %d, restorable %d; want %d, %d (%v)", tc.p, d.Watermark, d.Restorable, tc.watermark, tc.restorable, d.Reasons)
			}
			if tc.p.MaxSize > 1 && d.Needed > tc.p.MaxSize {
				t.Errorf("needed %d bytes > max size %d", d.Needed, tc.p.MaxSize)
			}
		})
	}
	// The watermark never moves back.
	w := uint64(33)
	withMark := append(recs, index.Record{V: 1, Seq: 41, Time: now, Kind: index.KindWatermark, Target: &w, Reason: "earlier"})
	if d := Decide(withMark, Policy{Keep: 9}, stored, now); d.Watermark != 33 || d.Previous != 33 {
		t.Errorf("watermark moved back: %+v", d)
	}
}

// A ceiling (what a remote has not got yet) holds the watermark back
// whatever the limits say, and never moves it back.
func TestDecideCeiling(t *testing.T) {
	recs, stored := session(10) // opens at seqs 1, 5, 9, ... 37
	now := t0.Add(11 * 24 * time.Hour)
	c := uint64(13)
	d := Decide(recs, Policy{Keep: 1, Ceiling: &c, CeilingWhy: "not pushed"}, stored, now)
	if d.Watermark != 13 || d.Restorable != 7 || d.Reasons[len(d.Reasons)-1] != "held back: not pushed" {
		t.Fatalf("keep 1 under ceiling 13: %+v", d)
	}
	zero := uint64(0)
	if d := Decide(recs, Policy{MaxAge: time.Hour, Ceiling: &zero}, stored, now); d.Watermark != 0 {
		t.Fatalf("ceiling 0 (nothing pushed): watermark %d", d.Watermark)
	}
	// A watermark already past the ceiling stays where it is.
	w := uint64(21)
	recs = append(recs, index.Record{V: 1, Seq: 41, Kind: index.KindWatermark, Target: &w})
	if d := Decide(recs, Policy{Keep: 1, Ceiling: &c}, stored, now); d.Watermark != 21 {
		t.Fatalf("earlier watermark 21, ceiling 13: watermark %d", d.Watermark)
	}
}
