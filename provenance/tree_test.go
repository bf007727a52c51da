package provenance

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ckfs-dev/ckfs/index"
)

func treeString(es []TreeEntry) string {
	var out []string
	for _, e := range es {
		s := fmt.Sprintf("%s:%s:%s", e.Path, e.State.Type, e.From)
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

func TestTreeAtACheckpoint(t *testing.T) {
	tl := newTimeline()
	w1 := tl.window("w1", "src/a.go", str("old\n"), str("new\n"))
	tl.window("w2", "gone.txt", str("bye\n"), nil)
	tl.window("w3", "later.txt", nil, str("made later\n"))
	at := tl.recs[w1-1].Time
	old := at.Add(-time.Hour).UnixNano()
	live := []TreeEntry{
		{Path: "src", State: index.State{Type: index.TypeDir, Mode: 0o755}},
		{Path: "src/a.go", State: index.State{Type: index.TypeFile, MTime: old}},
		{Path: "src/b.go", State: index.State{Type: index.TypeFile, MTime: old}},                                      // never recorded, untouched: live
		{Path: "src/c.go", State: index.State{Type: index.TypeFile, MTime: at.Add(time.Hour).UnixNano()}},             // never recorded, changed since: unavailable
		{Path: "src/d.go", State: index.State{Type: index.TypeFile, MTime: old}, CTime: at.Add(time.Hour).UnixNano()}, // never recorded, renamed into place since: unavailable
		{Path: "later.txt", State: index.State{Type: index.TypeFile, MTime: old}},
		{Path: ".git", State: index.State{Type: index.TypeDir}},
		{Path: ".git/HEAD", State: index.State{Type: index.TypeFile, MTime: old}},
	}
	got := treeString(Tree(tl.recs, w1, at, live))
	want := "gone.txt:file:store src:dir:live src/a.go:file:store src/b.go:file:live src/c.go:file:unavailable src/d.go:file:unavailable"
	if got != want {
		t.Errorf("tree before w1:\n got %s\nwant %s", got, want)
	}
	// At the end: a.go as w1 left it, gone.txt gone, later.txt from the store.
	end := tl.recs[len(tl.recs)-1]
	got = treeString(Tree(tl.recs, end.Seq, end.Time, live))
	want = "later.txt:file:store src:dir:live src/a.go:file:store src/b.go:file:live src/c.go:file:unavailable src/d.go:file:unavailable"
	if got != want {
		t.Errorf("tree at the end:\n got %s\nwant %s", got, want)
	}
}

func TestTreeLeavesOutWhatWasNotThere(t *testing.T) {
	tl := newTimeline()
	// w1 created the directory d: before it, nothing under d existed,
	// whatever the live tree holds there now.
	w1 := tl.add(index.Record{Kind: index.KindOpen, Window: "w1", Tool: "Bash"})
	tl.add(index.Record{Kind: index.KindBefore, Window: "w1", Path: "d", State: tl.state(nil)})
	tl.add(index.Record{Kind: index.KindAfter, Window: "w1", Path: "d", State: &index.State{Type: index.TypeDir, Mode: 0o755}})
	tl.add(index.Record{Kind: index.KindClose, Window: "w1"})
	at := tl.recs[w1-1].Time
	live := []TreeEntry{
		{Path: "d", State: index.State{Type: index.TypeDir}},
		{Path: "d/x", State: index.State{Type: index.TypeFile, MTime: at.Add(-time.Hour).UnixNano()}},
	}
	if got := treeString(Tree(tl.recs, w1, at, live)); got != "" {
		t.Errorf("tree before d was made: %s; want nothing", got)
	}
}
