package workspace

import (
	"testing"

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
