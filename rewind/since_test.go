package rewind

import (
	"strings"
	"testing"

	"github.com/ckfs-dev/ckfs/index"
)

// The revert a refused rewind offers names each window since the target
// that wrote something, once: not a read-only call (a build, a test run),
// and not twice a window reopened under its id after a daemon's death.
func TestWindowsSinceWrote(t *testing.T) {
	st := &index.State{Type: index.TypeFile, Hash: "h", Size: 1}
	var recs []index.Record
	add := func(kind index.Kind, window, path string) {
		r := index.Record{Seq: uint64(len(recs) + 1), Kind: kind, Window: window, Path: path}
		if path != "" {
			r.State = st
		}
		recs = append(recs, r)
	}
	add(index.KindOpen, "early", "")
	add(index.KindBefore, "early", "x.txt")
	add(index.KindClose, "early", "")
	target := uint64(len(recs) + 1)
	add(index.KindOpen, "edit", "")
	add(index.KindBefore, "edit", "a.txt")
	add(index.KindAfter, "edit", "a.txt")
	add(index.KindClose, "edit", "")
	add(index.KindOpen, "build", "") // read only
	add(index.KindClose, "build", "")
	add(index.KindOpen, "gen", "")
	add(index.KindBefore, "gen", "b.txt")
	add(index.KindClose, "gen", "") // interrupted: reopened under its id
	add(index.KindOpen, "gen", "")
	add(index.KindBefore, "gen", "c.txt")
	add(index.KindClose, "gen", "")
	if got := strings.Join(windowsSince(recs, target), " "); got != "edit gen" {
		t.Errorf("windows since checkpoint %d: %q, want edit gen", target, got)
	}
}
