package capture_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ckfs-dev/ckfs/capture"
	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
	"golang.org/x/sys/unix"
)

// restart stands for a daemon killed and started again: the recorder is
// dropped without a flush or a boundary, and a new one starts on the same
// store from the timeline on disk.
func (e *env) restart() *capture.Recorder {
	e.t.Helper()
	e.tl.Close()
	var err error
	if e.tl, _, err = index.OpenWriter(e.store, index.WriterOptions{}); err != nil {
		e.t.Fatal(err)
	}
	fd, err := unix.Open(e.root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { unix.Close(fd) })
	rec, err := capture.New(capture.Options{Store: e.cas, Timeline: e.tl, Source: capture.NewDirSource(fd), History: e.records()})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { rec.Close() }) // stops its post-image worker
	return rec
}

// A window the daemon died in is closed at the next start, as
// "interrupted", with post-images of what its writes left on disk; a
// change made outside windows just before the death gets its post-image
// too, and paths of windows closed before the death are left alone.
func TestReconcileClosesInterruptedWindows(t *testing.T) {
	e := newEnv(t, nil, capture.Options{})
	os.WriteFile(filepath.Join(e.root, "a.txt"), []byte("a0\n"), 0o644)
	os.WriteFile(filepath.Join(e.root, "done.txt"), []byte("d0\n"), 0o644)
	e.rec.OpenWindow("w0", "Bash", "")
	e.write("done.txt", "d1\n")
	closed, _ := e.rec.CloseWindow("w0")
	e.rec.OpenWindow("w1", "Bash", "")
	// Writes whose handles are never released: the daemon dies first.
	if _, err := e.rec.WriterOpened(0, "a.txt"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(e.root, "a.txt"), []byte("a1 half written"), 0o644)
	if _, err := e.rec.WriterOpened(0, "new.txt"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(e.root, "new.txt"), []byte("new\n"), 0o644)
	// The pre-images are in the timeline (appended before each operation);
	// no post-image is.

	rec := e.restart()
	if got := rec.OpenWindows(); !slices.Equal(got, []string{"w1"}) {
		t.Fatalf("open windows after the restart, before reconciling: %v", got)
	}
	done, err := rec.Reconcile(e.records())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(done.Windows, []string{"w1"}) || done.Paths != 2 {
		t.Fatalf("Reconcile = %+v, want w1 closed and 2 post-images", done)
	}
	if got := rec.OpenWindows(); len(got) != 0 {
		t.Fatalf("windows still open after reconciling: %v", got)
	}
	recs := e.records()
	last := recs[len(recs)-1]
	if !last.Interrupted() || last.Window != "w1" {
		t.Fatalf("last record %+v, want the interrupted close of w1", last)
	}
	state := index.StateAt(recs, last.Seq)
	if h := state["a.txt"].Hash; string(h) != hashOf("a1 half written") {
		t.Errorf("a.txt at the interrupted close = %s, want what was on disk", h)
	}
	if h := state["new.txt"].Hash; string(h) != hashOf("new\n") {
		t.Errorf("new.txt at the interrupted close = %s", h)
	}
	if h := index.StateAt(recs, closed)["done.txt"].Hash; string(h) != hashOf("d1\n") {
		t.Errorf("done.txt at w0's close = %s", h)
	}
	for _, r := range recs {
		if r.Seq > closed && r.Path == "done.txt" {
			t.Errorf("reconciling recorded a path no unfinished period touched: %+v", r)
		}
	}
	// A second start finds nothing to do.
	if done, err := e.restart().Reconcile(e.records()); err != nil || len(done.Windows) != 0 || done.Paths != 0 {
		t.Errorf("second Reconcile = %+v, %v", done, err)
	}
}

// An outside change cut short by the death gets an outside post-image.
func TestReconcileOutsideChange(t *testing.T) {
	e := newEnv(t, nil, capture.Options{})
	os.WriteFile(filepath.Join(e.root, "b.txt"), []byte("b0\n"), 0o644)
	if _, err := e.rec.WriterOpened(0, "b.txt"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(e.root, "b.txt"), []byte("b1\n"), 0o644)
	e.rec.Flush()
	// Flush took the post-image already (the period stays open); change
	// the file again so the death leaves a change unrecorded.
	os.WriteFile(filepath.Join(e.root, "b.txt"), []byte("b2\n"), 0o644)
	rec := e.restart()
	done, err := rec.Reconcile(e.records())
	if err != nil || done.Paths != 1 || len(done.Windows) != 0 {
		t.Fatalf("Reconcile = %+v, %v", done, err)
	}
	recs := e.records()
	last := recs[len(recs)-1]
	if last.Kind != index.KindOutside || last.Image != index.ImageAfter || string(last.Hash) != hashOf("b2\n") {
		t.Fatalf("last record %+v, want the outside post-image of b2", last)
	}
}

func hashOf(s string) string { return cas.Sum([]byte(s)).String() }
