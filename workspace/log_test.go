package workspace

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ckfs-dev/ckfs/index"
	"github.com/google/go-cmp/cmp"
)

func TestAlongside(t *testing.T) {
	w := func(id string, open uint64, close uint64) index.Window {
		win := index.Window{ID: id, Open: &index.Record{Seq: open}}
		if close > 0 {
			win.Close = &index.Record{Seq: close}
		}
		return win
	}
	// a spans b and c; b and c touch at seq 6 without overlapping; d is
	// alone; e is still open and overlaps nothing before it.
	wins := []index.Window{w("a", 1, 9), w("b", 2, 6), w("c", 6, 8), w("d", 10, 12), w("e", 13, 0)}
	got := alongside(wins, 20)
	want := [][]string{{"b", "c"}, {"a"}, {"a"}, nil, nil}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("alongside (-want +got):\n%s", d)
	}
}

// ckfs log -n 1 of a session reads the contents of the entry it shows
// and no other's: counting lines reads two contents from the store, and a
// long session holds thousands.
func TestLogCountsLinesOnlyOfWhatItShows(t *testing.T) {
	at := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	var recs []index.Record
	seq := uint64(0)
	add := func(r index.Record) {
		seq++
		r.Seq, r.Time = seq, at
		recs = append(recs, r)
	}
	file := func(h string) *index.State {
		return &index.State{Type: index.TypeFile, Hash: index.Hash(h), Mode: 0o644}
	}
	prev := "0"
	for i := range 50 {
		id, next := fmt.Sprintf("w%d", i), fmt.Sprint(i+1)
		add(index.Record{Kind: index.KindOpen, Window: id, Tool: "Bash"})
		add(index.Record{Kind: index.KindBefore, Window: id, Path: "a.txt", State: file(prev)})
		add(index.Record{Kind: index.KindAfter, Window: id, Path: "a.txt", State: file(next)})
		add(index.Record{Kind: index.KindClose, Window: id})
		prev = next
	}
	v := &View{Workspace: &Workspace{Store: t.TempDir()}, Records: recs}
	var read []string
	content := func(s index.State) ([]byte, error) {
		read = append(read, string(s.Hash))
		return []byte(string(s.Hash) + "\n"), nil
	}
	got, err := v.log(LogFilter{Max: 1}, content)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != "w49" || len(got[0].Files) != 1 || got[0].Files[0].Added != 1 || got[0].Files[0].Removed != 1 {
		t.Fatalf("log -n 1: %+v", got)
	}
	if want := []string{"49", "50"}; !slices.Equal(read, want) {
		t.Errorf("log -n 1 read contents %v, want only %v", read, want)
	}
}
