package integration

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/gc"
	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/internal/testenv"
	ctl "github.com/ckfs-dev/ckfs/workspace"
	"golang.org/x/sys/unix"
	"pgregory.net/rapid"
)

// collect runs a collection in the daemon, as ckfs gc does (objects of
// any age: CKFS_TEST_SWEEP_GRACE, set by the test).
func (m *inproc) collect(p gc.Policy) (*gc.Result, error) {
	rep, err := ctl.Call(m.store, ctl.Request{Op: "gc", GC: &ctl.GCRequest{Policy: p}})
	if err != nil {
		return nil, err
	}
	return rep.GC, nil
}

// TestGCPropertyThroughMount plays random windows through a real mount,
// collecting with a random policy between windows, then requires every
// checkpoint at or after the final watermark to rewind byte for byte, every
// checkpoint below it to be refused with the watermark explained, and every
// object the kept checkpoints need to exist.
func TestGCPropertyThroughMount(t *testing.T) {
	testenv.RequireFUSE(t)
	t.Setenv("CKFS_TEST_SWEEP_GRACE", "-1h")
	rapid.Check(t, func(rt *rapid.T) {
		m := mountInProc(t)
		defer m.unmount()
		old := unix.Umask(0o022)
		defer unix.Umask(old)
		snaps := map[uint64]string{}
		var cps []uint64
		deleted := 0
		windows := rapid.IntRange(2, 6).Draw(rt, "windows")
		for w := range windows {
			id := fmt.Sprintf("w%d", w)
			open, err := m.openWindow(id)
			if err != nil {
				rt.Fatal(err)
			}
			snaps[open], cps = tree(rt, m.root), append(cps, open)
			playOps(rt, m.root, rapid.IntRange(1, 6).Draw(rt, "ops"), 4)
			closeSeq, err := m.closeWindow(id)
			if err != nil {
				rt.Fatal(err)
			}
			snaps[closeSeq], cps = tree(rt, m.root), append(cps, closeSeq)
			if rapid.Bool().Draw(rt, "collect") {
				res, err := m.collect(gc.Policy{Keep: rapid.IntRange(1, 3).Draw(rt, "keep")})
				if err != nil {
					rt.Fatal(err)
				}
				deleted += res.Deleted
			}
		}
		res, err := m.collect(gc.Policy{Keep: rapid.IntRange(1, windows).Draw(rt, "final keep")})
		if err != nil {
			rt.Fatal(err)
		}
		deleted += res.Deleted
		recs, _, err := index.Load(filepath.Join(m.store, index.TimelineFile))
		if err != nil {
			rt.Fatal(err)
		}
		w, _ := index.Watermark(recs)
		for h := range index.Live(recs, w) {
			ch, _ := cas.ParseHash(string(h))
			if ok, _ := m.cas.Has(ch); !ok {
				rt.Fatalf("object %s is needed from watermark %d on and was deleted", h, w)
			}
		}
		rt.Logf("watermark %d, %d objects deleted", w, deleted)
		order := rapid.Permutation(cps).Draw(rt, "order")
		for _, cp := range order {
			_, err := m.rewindTo(cp)
			// The daemon's refusal, as ckfs rewind prints it.
			switch {
			case cp < w && err != nil && strings.Contains(err.Error(), "is no longer restorable"):
				continue
			case cp < w && err == nil:
				// Allowed only as the undo of the last rewind.
			case err != nil:
				rt.Fatalf("rewind to %d (watermark %d): %v", cp, w, err)
			}
			if got := tree(rt, m.root); got != snaps[cp] {
				rt.Fatalf("after rewind to %d (watermark %d) the mount shows\n%s\nwant\n%s", cp, w, got, snaps[cp])
			}
		}
	})
}
