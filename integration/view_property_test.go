package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ckfs-dev/ckfs/internal/testenv"
	"github.com/ckfs-dev/ckfs/pastfs"
	"github.com/ckfs-dev/ckfs/provenance"
	ctl "github.com/ckfs-dev/ckfs/workspace"
	"golang.org/x/sys/unix"
	"pgregory.net/rapid"
)

// TestViewPropertyThroughMount plays random windows of random operations
// through a real mount over a tree that had files before the mount,
// snapshots the tree after each window, then views every checkpoint (the
// real pastfs mount of provenance.Tree, served from the store and the
// live tree) and requires each snapshot, byte for byte and mode for mode:
// the rule for a checkpoint's whole tree, checked against what was there.
func TestViewPropertyThroughMount(t *testing.T) {
	testenv.RequireFUSE(t)
	rapid.Check(t, func(rt *rapid.T) {
		old := unix.Umask(0o022)
		defer unix.Umask(old)
		root := t.TempDir()
		// Files from before the mount, which no window may touch: served
		// from the live tree.
		for _, name := range rapid.SliceOfDistinct(rapid.SampledFrom(propNames), rapid.ID).Draw(rt, "before") {
			os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755)
			os.WriteFile(filepath.Join(root, name), []byte("from before "+name), 0o644)
		}
		time.Sleep(30 * time.Millisecond) // older than the first checkpoint
		m := mountInProcAt(t, root)
		defer m.unmount()
		snaps := map[uint64]map[string]string{}
		var cps []uint64
		for w := range rapid.IntRange(1, 4).Draw(rt, "windows") {
			id := fmt.Sprintf("w%d", w)
			open, err := m.openWindow(id)
			if err != nil {
				rt.Fatal(err)
			}
			if w == 0 {
				snaps[open], cps = treeMap(m.root), append(cps, open)
			}
			playOps(rt, m.root, rapid.IntRange(1, 8).Draw(rt, "ops"), 7)
			closeSeq, err := m.closeWindow(id)
			if err != nil {
				rt.Fatal(err)
			}
			snaps[closeSeq], cps = treeMap(m.root), append(cps, closeSeq)
		}
		ws, err := ctl.Open(m.store)
		if err != nil {
			rt.Fatal(err)
		}
		v, err := ws.View()
		if err != nil {
			rt.Fatal(err)
		}
		for _, cp := range cps {
			tree, err := v.TreeAt(cp)
			if err != nil {
				rt.Fatal(err)
			}
			for _, e := range tree {
				if e.From == provenance.Unavailable {
					rt.Fatalf("checkpoint %d: %s is unavailable (%s), though every change went through the mount", cp, e.Path, e.Reason)
				}
			}
			dir := t.TempDir()
			srv, err := pastfs.Mount(dir, tree, &ctl.TreeSource{View: v}, pastfs.Options{Name: "prop"})
			if err != nil {
				rt.Fatal(err)
			}
			got := treeMap(dir)
			srv.Unmount()
			want := snaps[cp]
			for p := range merged(got, want) {
				if got[p] != want[p] {
					rt.Fatalf("the view of checkpoint %d shows %s as %q; it was %q", cp, p, got[p], want[p])
				}
			}
		}
	})
}

func merged(a, b map[string]string) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}
