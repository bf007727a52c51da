package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/ckfs-dev/ckfs/cas"
)

// TestKillDuringRmOfAnOldTree deletes a tree that was there before the
// mount (its pre-images are taken in batches), kills the daemon with
// SIGKILL in the middle, remounts, and rewinds: every file comes back with
// its content. Then the same delete runs to its end and is rewound too.
func TestKillDuringRmOfAnOldTree(t *testing.T) {
	const dirs, files = 30, 20
	w := mountWorkspace(t, fmt.Sprintf(`
for tree in tree tree2; do
  for d in $(seq %d); do
    mkdir -p $tree/d$d/sub
    for f in $(seq %d); do echo "file $d $f" > $tree/d$d/f$f; echo "deep $d $f" > $tree/d$d/sub/g$f; done
  done
done`, dirs, files))
	check := func(tree, when string) {
		t.Helper()
		for d := 1; d <= dirs; d++ {
			for f := 1; f <= files; f++ {
				for _, c := range [][2]string{{fmt.Sprintf("%s/d%d/f%d", tree, d, f), fmt.Sprintf("file %d %d\n", d, f)}, {fmt.Sprintf("%s/d%d/sub/g%d", tree, d, f), fmt.Sprintf("deep %d %d\n", d, f)}} {
					b, err := os.ReadFile(filepath.Join(w.root, c[0]))
					if err != nil || string(b) != c[1] {
						t.Fatalf("%s: %s holds %q, %v; want %q", when, c[0], b, err, c[1])
					}
				}
			}
		}
	}

	w.ckfs("window", "open", "--id", "rm1", "--tool", "Bash", "--label", "rm -rf tree")
	rm := exec.Command("rm", "-rf", "tree")
	rm.Dir = w.root
	if err := rm.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill once the delete is under way: a directory of the tree is gone.
	for i := 0; i < 2000; i++ {
		if ents, err := os.ReadDir(filepath.Join(w.root, "tree")); err != nil || len(ents) < dirs-2 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	w.killHard()
	rm.Wait()
	for i := 0; i < 1000 && alive(w.pid); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	reap(w.pid)
	if out, err := w.ckfsErr("unmount", w.root); err != nil {
		t.Fatalf("unmount of the dead mount: %v\n%s", err, out)
	}
	left, _ := exec.Command("sh", "-c", "find "+filepath.Join(w.root, "tree")+" -type f | wc -l").Output()
	t.Logf("files left after the kill: %s", left)
	w.ckfs("mount", w.root)
	w.refreshPids()
	w.ckfs("rewind", "--files", "--to", "rm1")
	check("tree", "after the kill and a rewind")
	w.ckfs("verify")

	// The whole delete of the other tree, in a window, rewound.
	w.window("rm2", "rm -rf tree2")
	if _, err := os.Stat(filepath.Join(w.root, "tree2")); !os.IsNotExist(err) {
		t.Fatalf("tree2 still there after rm -rf: %v", err)
	}
	var st struct {
		Daemon struct {
			Batched int `json:"pre_images_batched"`
		} `json:"daemon"`
	}
	if err := json.Unmarshal([]byte(w.ckfs("status", "--json")), &st); err != nil || st.Daemon.Batched < dirs*files {
		t.Errorf("status: %d pre-images batched (%v), want most of the %d files", st.Daemon.Batched, err, 2*dirs*files)
	}
	// The batches' pre-images went into packs, a file per batch, not an
	// object file each.
	if n := cas.PackedObjects(w.store); n < dirs*files {
		t.Errorf("%d objects packed, want most of the %d files deleted", n, 2*dirs*files)
	}
	w.ckfs("rewind", "--files", "--to", "rm2")
	check("tree2", "after a rewind of the whole delete")
	// Undo of the rewind deletes the tree again.
	w.ckfs("rewind", "--files", "--undo")
	if _, err := os.Stat(filepath.Join(w.root, "tree2")); !os.IsNotExist(err) {
		t.Fatalf("tree2 back after undoing the rewind: %v", err)
	}
}
