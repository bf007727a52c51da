package index

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// h returns a distinct well-formed hash for a small integer.
func h(n int) Hash { return Hash(fmt.Sprintf("blake3:%064x", n)) }

func file(n int) State { return State{Hash: h(n), Size: int64(n), Mode: 0o644, Type: TypeFile} }
func absent() State    { return State{Type: TypeAbsent} }
func dir() State       { return State{Type: TypeDir, Mode: 0o755} }
func link(n int) State { return State{Hash: h(n), Size: 1, Mode: 0o777, Type: TypeSymlink} }
func rec(seq uint64, k Kind, w, p string, s State) Record {
	return Record{V: 1, Seq: seq, Time: t0, Kind: k, Window: w, Path: p, State: &s}
}
func boundary(seq uint64, k Kind, w string) Record {
	return Record{V: 1, Seq: seq, Time: t0, Kind: k, Window: w}
}

func TestStateAtRules(t *testing.T) {
	// Two windows: w1 edits a (1->2) and creates n; w2 edits a (2->3),
	// deletes n, and first touches b (baseline 7). Then an outside edit of
	// b (7->8) and a skipped big file.
	recs := []Record{
		boundary(1, KindOpen, "w1"),
		rec(2, KindBefore, "w1", "a", file(1)),
		rec(3, KindBefore, "w1", "n", absent()),
		rec(4, KindAfter, "w1", "a", file(2)),
		rec(5, KindAfter, "w1", "n", file(5)),
		boundary(6, KindClose, "w1"),
		boundary(7, KindOpen, "w2"),
		rec(8, KindBefore, "w2", "a", file(2)),
		rec(9, KindBefore, "w2", "n", file(5)),
		rec(10, KindBefore, "w2", "b", file(7)),
		rec(11, KindAfter, "w2", "a", file(3)),
		rec(12, KindAfter, "w2", "n", absent()),
		boundary(13, KindClose, "w2"),
		{V: 1, Seq: 14, Time: t0, Kind: KindOutside, Path: "b", State: ptr(file(7)), Image: ImageBefore},
		{V: 1, Seq: 15, Time: t0, Kind: KindOutside, Path: "b", State: ptr(file(8)), Image: ImageAfter},
		boundary(16, KindOpen, "w3"),
		{V: 1, Seq: 17, Time: t0, Kind: KindSkip, Window: "w3", Path: "big", State: &State{Type: TypeFile, Size: 1 << 30}, Reason: "over the size limit"},
		boundary(18, KindClose, "w3"),
	}
	cases := []struct {
		name string
		seq  uint64
		path string
		want State
		base bool
		unk  bool
	}{
		{"before anything, a is its first pre-image", 0, "a", file(1), true, false},
		{"new file did not exist before w1", 1, "n", absent(), true, false},
		{"after w1", 6, "a", file(2), false, false},
		{"after w1, n created", 6, "n", file(5), false, false},
		{"b untouched until w2: lazy baseline", 6, "b", file(7), true, false},
		{"before w2 is the open boundary", 7, "a", file(2), false, false},
		{"after w2", 13, "a", file(3), false, false},
		{"after w2, n deleted", 13, "n", absent(), false, false},
		{"b after w2", 13, "b", file(7), false, false},
		{"outside edit counts", 16, "b", file(8), false, false},
		{"skipped file is unknown after", 18, "big", State{Type: TypeFile, Size: 1 << 30}, false, true},
		{"skipped file is unknown before too", 0, "big", State{Type: TypeFile, Size: 1 << 30}, true, true},
		{"target beyond the end", 1000, "a", file(3), false, false},
	}
	for _, c := range cases {
		st := StateAt(recs, c.seq)
		e, ok := st[c.path]
		if !ok {
			t.Errorf("%s: %q missing", c.name, c.path)
			continue
		}
		if e.State != c.want || e.Baseline != c.base || e.Unknown != c.unk {
			t.Errorf("%s: StateAt(%d)[%q] = %+v, want %+v baseline=%v unknown=%v", c.name, c.seq, c.path, e, c.want, c.base, c.unk)
		}
		if len(st) != 4 {
			t.Errorf("%s: %d paths, want the 4 recorded", c.name, len(st))
		}
	}
	// An after with no pre-image before it is unknown, not guessed.
	odd := []Record{boundary(1, KindOpen, "w"), rec(2, KindAfter, "w", "x", file(1))}
	if e := StateAt(odd, 1)["x"]; !e.Unknown {
		t.Errorf("state from a lone after: %+v", e)
	}
	if len(StateAt(nil, 5)) != 0 {
		t.Error("empty timeline has state")
	}
}

func ptr[T any](v T) *T { return &v }

// A change made behind the mount, found by a check, is the state before
// the window that found it: what that window found is what a rewind to
// before it gives back; every window's own change stays its own.
func TestStateAtFound(t *testing.T) {
	found := func(seq uint64, p string, s State, where string) Record {
		return Record{V: 1, Seq: seq, Time: t0, Kind: KindOutside, Path: p, State: &s, Image: ImageAfter, Found: where}
	}
	recs := []Record{
		boundary(1, KindOpen, "w1"),
		rec(2, KindBefore, "w1", "f", absent()),
		rec(3, KindAfter, "w1", "f", file(1)),
		boundary(4, KindClose, "w1"),
		// unmounted: the user edits f (1 -> 2); the next mount finds it
		found(5, "f", file(2), FoundMount),
		boundary(6, KindOpen, "w2"),
		rec(7, KindBefore, "w2", "f", file(2)),
		rec(8, KindAfter, "w2", "f", file(3)),
		boundary(9, KindClose, "w2"),
		boundary(10, KindOpen, "w3"),
		// behind the mount, f becomes 4; w3's first change finds it
		found(11, "f", file(4), FoundChange),
		rec(12, KindBefore, "w3", "f", file(4)),
		rec(13, KindAfter, "w3", "f", file(5)),
		boundary(14, KindClose, "w3"),
	}
	for _, c := range []struct {
		seq   uint64
		want  State
		found bool
	}{
		{1, absent(), false},
		{4, file(1), false}, // after w1: what w1 wrote
		{5, file(2), false}, // the mount found the user's edit
		{6, file(2), false}, // before w2: what w2 found
		{9, file(3), false}, // after w2: what w2 wrote
		{10, file(4), true}, // before w3: what w3 found
		{14, file(5), false},
	} {
		e := StateAt(recs, c.seq)["f"]
		if e.State != c.want || e.Found != c.found {
			t.Errorf("StateAt(%d)[f] = %+v, want %+v found=%v", c.seq, e, c.want, c.found)
		}
		if got, _ := NewHistory(recs).At("f", c.seq); got != e {
			t.Errorf("History.At(f, %d) = %+v, StateAt says %+v", c.seq, got, e)
		}
	}
	for i := range recs {
		if err := recs[i].Validate(); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	bad := found(1, "f", file(1), "guess")
	if bad.Validate() == nil {
		t.Error("found with an unknown value validated")
	}
	bad = found(1, "f", file(1), FoundMount)
	bad.Image = ImageBefore
	if bad.Validate() == nil {
		t.Error("found on a before image validated")
	}
}

// A path first recorded absent after a remount may have existed before
// it: removed while nothing was mounted, it left no trace. Its state at a
// checkpoint before the mount record is unknown, never "absent" (a rewind
// there would delete what the window after it made, and could not give
// back what was there); at a checkpoint after the mount it is absent.
func TestStateAtAbsentAfterARemountIsUnknown(t *testing.T) {
	recs := []Record{
		boundary(1, KindOpen, "w1"),
		boundary(2, KindClose, "w1"),
		{V: 1, Seq: 3, Time: t0, Kind: KindMount},
		boundary(4, KindOpen, "w2"),
		rec(5, KindBefore, "w2", "a", absent()),
		rec(6, KindAfter, "w2", "a", file(1)),
		boundary(7, KindClose, "w2"),
	}
	for _, seq := range []uint64{1, 2} {
		if e := StateAt(recs, seq)["a"]; !e.Unknown {
			t.Errorf("StateAt(%d)[a] = %+v: want unknown (before the remount)", seq, e)
		}
		if e, _ := NewHistory(recs).At("a", seq); !e.Unknown {
			t.Errorf("History.At(a, %d) = %+v: want unknown (before the remount)", seq, e)
		}
	}
	if e := StateAt(recs, 4)["a"]; e.Unknown || e.State != absent() {
		t.Errorf("StateAt(4)[a] = %+v: want absent (after the remount)", e)
	}
	if err := recs[2].Validate(); err != nil {
		t.Errorf("a mount record: %v", err)
	}
	bad := Record{V: 1, Seq: 3, Time: t0, Kind: KindMount, Window: "w"}
	if bad.Validate() == nil {
		t.Error("a mount record with a window validated")
	}
}

// A directory made while nothing was mounted, inside a directory an
// earlier window created, and removed by a later window has its first
// pre-image (a directory) after both: at a checkpoint before the earlier
// window its parent was absent, so it was absent too, never the
// directory its later pre-image suggests (a rewind there would make it
// under a parent it removes).
func TestStateAtNothingUnderAnAbsentParent(t *testing.T) {
	recs := []Record{
		boundary(1, KindOpen, "w1"),
		rec(2, KindBefore, "w1", "d", absent()),
		rec(3, KindAfter, "w1", "d", dir()),
		rec(4, KindBefore, "w1", "d/b", absent()),
		rec(5, KindAfter, "w1", "d/b", file(1)),
		boundary(6, KindClose, "w1"),
		{V: 1, Seq: 7, Time: t0, Kind: KindMount},
		boundary(8, KindOpen, "w2"),
		rec(9, KindBefore, "w2", "d/e", dir()),
		rec(10, KindAfter, "w2", "d/e", absent()),
		rec(11, KindBefore, "w2", "d/e/f", file(2)),
		rec(12, KindAfter, "w2", "d/e/f", absent()),
		boundary(13, KindClose, "w2"),
	}
	h := NewHistory(recs)
	for _, tc := range []struct {
		seq  uint64
		want map[string]State
	}{
		{1, map[string]State{"d": absent(), "d/b": absent(), "d/e": absent(), "d/e/f": absent()}}, // the parent's own baseline is older
		{6, map[string]State{"d": dir(), "d/b": file(1), "d/e": dir(), "d/e/f": file(2)}},         // the parent a directory: the baseline stands
		{8, map[string]State{"d": dir(), "d/b": file(1), "d/e": dir(), "d/e/f": file(2)}},         // after the mount
		{13, map[string]State{"d": dir(), "d/b": file(1), "d/e": absent(), "d/e/f": absent()}},    // recorded
	} {
		got := StateAt(recs, tc.seq)
		for p, want := range tc.want {
			if e := got[p]; e.Unknown || e.State != want {
				t.Errorf("StateAt(%d)[%s] = %+v, want %+v", tc.seq, p, e, want)
			}
			if e, _ := h.At(p, tc.seq); e != got[p] {
				t.Errorf("History.At(%s, %d) = %+v, want %+v", p, tc.seq, e, got[p])
			}
		}
	}
	// A record at or before the checkpoint decides too: the parent
	// removed in w0, the child's pre-image later.
	decided := append([]Record{
		boundary(1, KindOpen, "w0"),
		rec(2, KindBefore, "w0", "x", dir()),
		rec(3, KindAfter, "w0", "x", absent()),
		boundary(4, KindClose, "w0"),
	}, rec(5, KindBefore, "w1", "x/y", file(3)))
	if e := StateAt(decided, 4)["x/y"]; e.Unknown || e.State != absent() {
		t.Errorf("StateAt(4)[x/y] = %+v, want absent (x was removed at 3)", e)
	}
	if e := StateAt(decided, 1)["x/y"]; e.State != file(3) {
		t.Errorf("StateAt(1)[x/y] = %+v, want the baseline (x was a directory)", e)
	}
}

func TestWindows(t *testing.T) {
	recs := []Record{
		boundary(1, KindOpen, "w1"),
		rec(2, KindBefore, "w1", "b", file(1)),
		rec(3, KindBefore, "w1", "a", file(1)),
		rec(4, KindAfter, "w1", "b", file(2)),
		boundary(5, KindClose, "w1"),
		boundary(6, KindOpen, "w2"),
		{V: 1, Seq: 7, Time: t0, Kind: KindSkip, Window: "w2", Path: "big", State: &State{Type: TypeFile}, Reason: "size"},
	}
	ws := Windows(recs)
	if len(ws) != 2 || ws[0].ID != "w1" || ws[0].Open.Seq != 1 || ws[0].Close.Seq != 5 || !slices.Equal(ws[0].Paths, []string{"a", "b"}) {
		t.Fatalf("windows: %+v", ws)
	}
	if ws[1].Close != nil || !slices.Equal(ws[1].Skipped, []string{"big"}) {
		t.Errorf("open window: %+v", ws[1])
	}
}

// model is the property test's filesystem: the true state of every path,
// with a recorder that writes records exactly as the capture layer does.
type model struct {
	cur      map[string]State
	recs     []Record
	recorded map[string]bool
	snaps    map[uint64]map[string]State // state at each boundary
	initial  map[string]State
}

func (m *model) add(r Record) uint64 {
	r.V, r.Seq, r.Time = 1, uint64(len(m.recs)+1), t0
	if r.State != nil {
		m.recorded[r.Path] = true
	}
	m.recs = append(m.recs, r)
	return r.Seq
}

func (m *model) snap(seq uint64) { m.snaps[seq] = maps.Clone(m.cur) }

var modelPaths = []string{"a", "b", "d/c", "d/e", "link"}

func (m *model) get(p string) State {
	if s, ok := m.cur[p]; ok {
		return s
	}
	return absent()
}

// genState draws the next state of a path.
func genState(t *rapid.T) State {
	switch rapid.IntRange(0, 5).Draw(t, "op") {
	case 0:
		return absent()
	case 1:
		return dir()
	case 2:
		return link(rapid.IntRange(100, 103).Draw(t, "target"))
	case 3:
		s := file(rapid.IntRange(1, 6).Draw(t, "content"))
		s.Mode = 0o755 // chmod +x
		return s
	default:
		return file(rapid.IntRange(1, 6).Draw(t, "content"))
	}
}

// runModel plays random windows and outside edits and returns the model.
func runModel(t *rapid.T) *model {
	m := &model{cur: map[string]State{}, recorded: map[string]bool{}, snaps: map[uint64]map[string]State{}}
	for _, p := range modelPaths {
		if rapid.Bool().Draw(t, "exists-"+p) {
			m.cur[p] = file(rapid.IntRange(1, 6).Draw(t, "init-"+p))
		}
	}
	m.initial = maps.Clone(m.cur)
	m.snap(0)
	last := map[string]State{} // last recorded state of each path
	steps := rapid.IntRange(1, 12).Draw(t, "steps")
	for i := range steps {
		if rapid.IntRange(0, 4).Draw(t, "outside") == 0 {
			p := rapid.SampledFrom(modelPaths).Draw(t, "path")
			before := m.get(p)
			m.add(Record{Kind: KindOutside, Path: p, State: ptr(before), Image: ImageBefore})
			m.cur[p] = genState(t)
			m.add(Record{Kind: KindOutside, Path: p, State: ptr(m.get(p)), Image: ImageAfter})
			last[p] = m.get(p)
			continue
		}
		if rapid.IntRange(0, 4).Draw(t, "unmounted") == 0 {
			// Changed while nothing was mounted: the next mount finds it.
			// (A path never recorded that changes so has its lazy
			// baseline: what the window finds is all ckfs can know.)
			p := rapid.SampledFrom(modelPaths).Draw(t, "path")
			if _, ok := last[p]; ok {
				m.cur[p] = genState(t)
			}
			if _, ok := last[p]; ok && last[p] != m.get(p) {
				m.add(Record{Kind: KindOutside, Path: p, State: ptr(m.get(p)), Image: ImageAfter, Found: FoundMount})
				last[p] = m.get(p)
			}
		}
		// Changed behind the mount before the window: its first change
		// of the path finds it.
		behind := ""
		if rapid.IntRange(0, 3).Draw(t, "behind") == 0 {
			behind = rapid.SampledFrom(modelPaths).Draw(t, "path")
			if _, ok := last[behind]; ok {
				m.cur[behind] = genState(t)
			}
		}
		w := fmt.Sprintf("w%d", i)
		m.snap(m.add(Record{Kind: KindOpen, Window: w}))
		touched := map[string]bool{}
		ops := rapid.IntRange(0, 6).Draw(t, "ops")
		if behind != "" {
			ops++ // the window changes the path first
		}
		for j := range ops {
			p := behind
			if j > 0 || behind == "" {
				p = rapid.SampledFrom(modelPaths).Draw(t, "path")
			}
			if !touched[p] {
				touched[p] = true
				if l, ok := last[p]; ok && p == behind && l != m.get(p) {
					m.add(Record{Kind: KindOutside, Path: p, State: ptr(m.get(p)), Image: ImageAfter, Found: FoundChange})
				}
				m.add(Record{Kind: KindBefore, Window: w, Path: p, State: ptr(m.get(p))})
				last[p] = m.get(p)
			}
			m.cur[p] = genState(t)
			if rapid.Bool().Draw(t, "release") { // last writable handle released
				m.add(Record{Kind: KindAfter, Window: w, Path: p, State: ptr(m.get(p))})
				last[p] = m.get(p)
			}
		}
		for _, p := range slices.Sorted(maps.Keys(touched)) {
			if last[p] != m.get(p) {
				m.add(Record{Kind: KindAfter, Window: w, Path: p, State: ptr(m.get(p))})
				last[p] = m.get(p)
			}
		}
		m.snap(m.add(Record{Kind: KindClose, Window: w}))
	}
	return m
}

// checkStateAt compares stateAt with the model at every boundary.
func checkStateAt(m *model, stateAt func([]Record, uint64) map[string]Entry) error {
	for _, seq := range slices.Sorted(maps.Keys(m.snaps)) {
		got := stateAt(m.recs, seq)
		if len(got) != len(m.recorded) {
			return fmt.Errorf("StateAt(%d) has %d paths, want the %d recorded", seq, len(got), len(m.recorded))
		}
		for p := range m.recorded {
			want, ok := m.snaps[seq][p]
			if !ok {
				want = absent()
			}
			if got[p].State != want {
				return fmt.Errorf("StateAt(%d)[%q] = %+v, want %+v", seq, p, got[p].State, want)
			}
		}
	}
	return nil
}

// TestStateAtProperty checks StateAt against a model filesystem at every
// boundary of random sessions. Deleting the `r.Seq <= seq` comparison in
// StateAt makes every path take its last record whatever the target, and
// this property fails at once (TestCheckerCatchesMissingSeq proves it on
// exactly that mutant).
func TestStateAtProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := runModel(t)
		for i := range m.recs {
			if err := m.recs[i].Validate(); err != nil {
				t.Fatalf("model wrote an invalid record: %v", err)
			}
		}
		if err := checkStateAt(m, StateAt); err != nil {
			t.Fatal(err)
		}
	})
}

// stateAtWithoutSeq is StateAt with its seq comparison deleted: the failure
// that turns every rewind into a silent no-op.
func stateAtWithoutSeq(records []Record, _ uint64) map[string]Entry {
	out := map[string]Entry{}
	for i := range records {
		if records[i].IsImage() {
			out[records[i].Path] = entryOf(&records[i], false)
		}
	}
	return out
}

func TestCheckerCatchesMissingSeq(t *testing.T) {
	failures := 0
	rapid.Check(t, func(t *rapid.T) {
		m := runModel(t)
		if checkStateAt(m, stateAtWithoutSeq) != nil {
			failures++
		}
	})
	if failures == 0 {
		t.Fatal("the property check never caught StateAt without its seq comparison")
	}
}

// History.At agrees with StateAt for every path at every seq.
func TestHistoryMatchesStateAt(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := runModel(t)
		h := NewHistory(m.recs)
		for seq := uint64(0); seq <= uint64(len(m.recs)); seq++ {
			want := StateAt(m.recs, seq)
			for p, e := range want {
				got, ok := h.At(p, seq)
				if !ok || got != e {
					t.Fatalf("At(%q, %d) = %+v, want %+v", p, seq, got, e)
				}
			}
		}
	})
}

// A lazy baseline whose mtime is after a checkpoint was changed where ckfs
// could not see it (created while nothing was mounted, say): its state at
// that checkpoint is unknown, never guessed.
func TestLazyBaselineChangedAfterCheckpoint(t *testing.T) {
	late := file(1)
	late.MTime = t0.Add(time.Hour).UnixNano()
	early := file(2)
	early.MTime = t0.Add(-time.Hour).UnixNano()
	recs := []Record{
		boundary(1, KindOpen, "w1"),
		boundary(2, KindClose, "w1"),
		{V: 1, Seq: 3, Time: t0.Add(2 * time.Hour), Kind: KindOpen, Window: "w2"},
		{V: 1, Seq: 4, Time: t0.Add(2 * time.Hour), Kind: KindBefore, Window: "w2", Path: "late", State: &late},
		{V: 1, Seq: 5, Time: t0.Add(2 * time.Hour), Kind: KindBefore, Window: "w2", Path: "early", State: &early},
	}
	st := StateAt(recs, 1)
	if e := st["late"]; !e.Unknown {
		t.Errorf("a baseline modified after the checkpoint: %+v, want unknown", e)
	}
	if e := st["early"]; e.Unknown || e.State != early {
		t.Errorf("a baseline older than the checkpoint: %+v", e)
	}
	if e := StateAt(recs, 3)["late"]; e.Unknown {
		t.Errorf("at the window that found it, the baseline is known: %+v", e)
	}
	h := NewHistory(recs)
	for _, seq := range []uint64{1, 3} {
		for _, p := range []string{"late", "early"} {
			if got, _ := h.At(p, seq); got != StateAt(recs, seq)[p] {
				t.Errorf("History.At(%s, %d) = %+v, StateAt says %+v", p, seq, got, StateAt(recs, seq)[p])
			}
		}
	}
}

// A baseline whose mtime is older than the checkpoint but whose ctime is
// newer was renamed into place, copied with its mtime kept, or changed
// otherwise where ckfs could not see it after the checkpoint: its state
// there is not known (a rename while nothing was mounted left it looking
// as if it had always been there).
func TestLazyBaselineRenamedAfterCheckpoint(t *testing.T) {
	renamed := file(1)
	renamed.MTime = t0.Add(-time.Hour).UnixNano()
	recs := []Record{
		boundary(1, KindOpen, "w1"),
		boundary(2, KindClose, "w1"),
		{V: 1, Seq: 3, Time: t0.Add(2 * time.Hour), Kind: KindMount},
		{V: 1, Seq: 4, Time: t0.Add(2 * time.Hour), Kind: KindOpen, Window: "w2"},
		{V: 1, Seq: 5, Time: t0.Add(2 * time.Hour), Kind: KindBefore, Window: "w2", Path: "renamed", State: &renamed, CTime: t0.Add(time.Hour).UnixNano()},
		{V: 1, Seq: 6, Time: t0.Add(2 * time.Hour), Kind: KindBefore, Window: "w2", Path: "kept", State: &renamed, CTime: t0.Add(-time.Hour).UnixNano()},
		{V: 1, Seq: 7, Time: t0.Add(2 * time.Hour), Kind: KindBefore, Window: "w2", Path: "old record", State: &renamed},
	}
	st := StateAt(recs, 1)
	if e := st["renamed"]; !e.Unknown || !strings.Contains(e.Reason, "renamed") {
		t.Errorf("a baseline renamed after the checkpoint: %+v, want unknown", e)
	}
	for _, p := range []string{"kept", "old record"} {
		if e := st[p]; e.Unknown || e.State != renamed {
			t.Errorf("%s: a baseline unchanged since before the checkpoint: %+v", p, e)
		}
	}
	if e := StateAt(recs, 4)["renamed"]; e.Unknown {
		t.Errorf("at the window that found it, the baseline is known: %+v", e)
	}
	h := NewHistory(recs)
	for _, seq := range []uint64{1, 4} {
		for _, p := range []string{"renamed", "kept", "old record"} {
			if got, _ := h.At(p, seq); got != StateAt(recs, seq)[p] {
				t.Errorf("History.At(%s, %d) = %+v, StateAt says %+v", p, seq, got, StateAt(recs, seq)[p])
			}
		}
	}
}
