package index

import (
	"testing"

	"pgregory.net/rapid"
)

// TestLiveProperty: for any timeline and any watermark w, every content the
// state at any checkpoint >= w names is live at w; and raising the
// watermark never brings content back.
func TestLiveProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := runModel(t)
		last := uint64(len(m.recs))
		w := rapid.Uint64Range(0, last).Draw(t, "watermark")
		live := Live(m.recs, w)
		for c := w; c <= last; c++ {
			for p, e := range StateAt(m.recs, c) {
				if e.Hash != "" && !e.Unknown && !live[e.Hash] {
					t.Fatalf("checkpoint %d >= watermark %d needs %s for %s, but Live dropped it", c, w, e.Hash, p)
				}
			}
		}
		higher := Live(m.recs, rapid.Uint64Range(w, last).Draw(t, "higher"))
		for h := range higher {
			if !live[h] {
				t.Fatalf("%s is live at a higher watermark but not at %d", h, w)
			}
		}
	})
}

func TestLiveDropsSuperseded(t *testing.T) {
	recs := []Record{
		boundary(1, KindOpen, "w1"),
		rec(2, KindBefore, "w1", "a", file(1)),
		rec(3, KindAfter, "w1", "a", file(2)),
		boundary(4, KindClose, "w1"),
		boundary(5, KindOpen, "w2"),
		rec(6, KindBefore, "w2", "a", file(2)),
		rec(7, KindAfter, "w2", "a", file(3)),
		boundary(8, KindClose, "w2"),
	}
	for _, tc := range []struct {
		w    uint64
		want []int
	}{{0, []int{1, 2, 3}}, {2, []int{1, 2, 3}}, {3, []int{2, 3}}, {5, []int{2, 3}}, {7, []int{3}}, {8, []int{3}}} {
		live := Live(recs, tc.w)
		if len(live) != len(tc.want) {
			t.Errorf("w=%d: live %v, want contents %v", tc.w, live, tc.want)
		}
		for _, n := range tc.want {
			if !live[h(n)] {
				t.Errorf("w=%d: content %d not live", tc.w, n)
			}
		}
	}
	wm := Record{V: 1, Seq: 9, Time: t0, Kind: KindWatermark, Target: ptr(uint64(5)), Reason: "keep 1"}
	if err := wm.Validate(); err != nil {
		t.Fatal(err)
	}
	if w, r := Watermark(append(recs, wm)); w != 5 || r == nil {
		t.Errorf("Watermark = %d, %v", w, r)
	}
	bad := wm
	bad.Target = ptr(uint64(9))
	if bad.Validate() == nil {
		t.Error("a watermark at or after its own seq validated")
	}
}
