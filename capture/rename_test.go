package capture_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ckfs-dev/ckfs/capture"
	"github.com/ckfs-dev/ckfs/index"
)

// A file's rename (sed -i, an editor's save) costs the same however many
// paths the period touched before it: it used to walk every one of them
// (and allocate a string for each), so that sed -i over 2,650 files right
// after an untar took 36 s. Counted in allocations, not time.
func TestFileRenameCostsNoPassOverTouchedPaths(t *testing.T) {
	e := newEnv(t, nil, capture.Options{})
	e.rec.OpenWindow("w", "", "")
	for i := range 5000 { // a burst: an untar, a generator
		if err := e.rec.BeforeChange(0, fmt.Sprintf("gen/f%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	// A name as long as real ones (past the 32 bytes Go concatenates
	// without allocating), so that a pass over the touched paths shows.
	name := "internal/generated/protocol/messages_gen.go"
	os.MkdirAll(filepath.Join(e.root, filepath.Dir(name)), 0o755)
	os.WriteFile(filepath.Join(e.root, name), []byte("x"), 0o644)
	allocs := testing.AllocsPerRun(20, func() {
		if err := e.rec.BeforeRename(0, name, name+".tmp", false); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 100 {
		t.Errorf("a file's rename after 5,000 touched paths: %.0f allocations, want a handful", allocs)
	}
	e.rec.CloseWindow("w")
}

// A directory renamed after it was made again in the same window (its
// first record there says "file") still takes the pre-images of what
// moves under the new name: the check is the disk, not the last record.
func TestRenameOfADirectoryMadeAgain(t *testing.T) {
	e := newEnv(t, nil, capture.Options{})
	os.WriteFile(filepath.Join(e.root, "d"), []byte("a file"), 0o644)
	e.rec.OpenWindow("w", "", "")
	if err := e.rec.BeforeChange(0, "d"); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(e.root, "d"))
	os.Mkdir(filepath.Join(e.root, "d"), 0o755)
	if err := e.rec.BeforeChange(0, "d/x"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(e.root, "d/x"), []byte("x"), 0o644)
	if err := e.rec.BeforeRename(0, "d", "e", false); err != nil {
		t.Fatal(err)
	}
	os.Rename(filepath.Join(e.root, "d"), filepath.Join(e.root, "e"))
	e.rec.CloseWindow("w")
	recs := e.records()
	before, after := index.StateAt(recs, recs[0].Seq), index.StateAt(recs, recs[len(recs)-1].Seq)
	if before["e/x"].Exists() || !after["e/x"].Exists() || after["e/x"].Size != 1 {
		t.Errorf("e/x: before %+v, after %+v; want absent, then the moved file", before["e/x"], after["e/x"])
	}
}

// A boundary never falls between a rename's pre-images and the rename
// itself: sed -i run by a background command renames its temp file over
// the file while the agent reports the call done. The boundary used to
// slip in after the pre-images and before the rename counted as in
// flight, took the file's post-image before the rename reached the disk,
// and the rename then landed in the next period with no record of it: a
// change ckfs never recorded, over which every rewind was refused.
func TestBoundaryWaitsForARenameInFlight(t *testing.T) {
	e := newEnv(t, nil, capture.Options{})
	os.WriteFile(filepath.Join(e.root, "a.py"), []byte("x = 1\n"), 0o644)
	e.rec.OpenWindow("w", "Bash", "")
	os.WriteFile(filepath.Join(e.root, "a.py.tmp"), []byte("x = 2\n"), 0o644)
	closed := make(chan error, 1)
	capture.AfterRenamePreImages(t, func() {
		// The agent reports the call done now. The boundary must wait
		// for the rename: it may not end before the rename does.
		go func() { _, err := e.rec.CloseWindow("w"); closed <- err }()
		select {
		case err := <-closed:
			t.Errorf("the window closed between the rename's pre-images and the rename (%v)", err)
			closed <- err
		case <-time.After(200 * time.Millisecond):
		}
	})
	done, err := e.rec.BeginRename(0, "a.py.tmp", "a.py", false)
	if err != nil {
		t.Fatal(err)
	}
	err = os.Rename(filepath.Join(e.root, "a.py.tmp"), filepath.Join(e.root, "a.py"))
	done()
	if err != nil {
		t.Fatal(err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if err := e.rec.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := e.imageOf("a.py", func(index.Record) bool { return true }); got != "x = 2\n" {
		t.Errorf("a.py's last record holds %q, the disk x = 2: the rename went unrecorded", got)
	}
}
