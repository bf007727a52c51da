package capture_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ckfs-dev/ckfs/capture"
	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
)

// reopen starts a new recorder on e's store and root, as a new daemon
// does, with the timeline as it is now.
func (e *env) reopen() {
	e.t.Helper()
	e.rec.Close()
	e.tl.Close()
	recs := e.records()
	var err error
	e.tl, _, err = index.OpenWriter(e.store, index.WriterOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { e.tl.Close() })
	fd, err := os.Open(e.root)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { fd.Close() })
	e.rec, err = capture.New(capture.Options{Store: e.cas, Timeline: e.tl, Source: capture.NewDirSource(int(fd.Fd())), History: recs})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { e.rec.Close() })
}

func found(recs []index.Record) map[string]string {
	out := map[string]string{}
	for _, r := range recs {
		if r.Found != "" {
			out[r.Path] = r.Found
		}
	}
	return out
}

// What changed while nothing was mounted is found at the next start, and
// only what changed: an untouched file is not even read.
func TestCheckRecordedFindsChangesWhileUnmounted(t *testing.T) {
	e := newEnv(t, nil, capture.Options{})
	e.rec.OpenWindow("w1", "Bash", "")
	for _, p := range []string{"same.txt", "edited.txt", "gone.txt", "chmod.txt", "touched.txt"} {
		e.write(p, "v1\n")
	}
	e.rec.CloseWindow("w1")
	e.rec.Close()
	r := func(p string) string { return filepath.Join(e.root, p) }
	os.WriteFile(r("edited.txt"), []byte("mine\n"), 0o644)
	os.Remove(r("gone.txt"))
	os.Chmod(r("chmod.txt"), 0o600)
	later := time.Now().Add(time.Hour)
	os.Chtimes(r("touched.txt"), later, later) // a time alone is no change
	e.reopen()
	c, err := e.rec.CheckRecorded()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"edited.txt": index.FoundMount, "gone.txt": index.FoundMount, "chmod.txt": index.FoundMount}
	if got := found(e.records()); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("found %v, want %v", got, want)
	}
	if c.Paths != 5 || c.Found != 3 || c.Read != 4 {
		t.Errorf("checked %+v, want 5 paths, 4 read (all but same.txt), 3 found", c)
	}
	// A second start finds nothing more.
	e.reopen()
	if c, err := e.rec.CheckRecorded(); err != nil || c.Found != 0 {
		t.Errorf("second check: %+v, %v", c, err)
	}
}

// A change made behind the mount is found before a window's first change
// of the path, so the window's before is what it found; a write through a
// handle held open across boundaries (kernel passthrough writes bypass the
// daemon) is the window's, never found.
func TestFirstChangeFindsChangesBehindTheMount(t *testing.T) {
	e := newEnv(t, nil, capture.Options{})
	e.rec.OpenWindow("w1", "Bash", "")
	e.write("f.txt", "s1\n")
	e.rec.CloseWindow("w1")
	os.WriteFile(filepath.Join(e.root, "f.txt"), []byte("s1\nmine\n"), 0o644) // behind the mount
	e.rec.OpenWindow("w2", "Bash", "")
	e.write("f.txt", "s1\nmine\nagent\n")
	e.rec.CloseWindow("w2")
	recs := e.records()
	if got := found(recs); got["f.txt"] != index.FoundChange {
		t.Fatalf("found %v, want f.txt found at its change", got)
	}
	w2 := index.Windows(recs)[1]
	before := index.StateAt(recs, w2.Open.Seq)["f.txt"]
	b, err := e.cas.Get(mustHash(t, before.Hash))
	if err != nil || string(b) != "s1\nmine\n" {
		t.Errorf("before w2, f.txt is %q (%v), want what w2 found", b, err)
	}

	// A handle open across the boundary: its writes are its own.
	release, err := e.rec.WriterOpened(0, "g.txt")
	if err != nil {
		t.Fatal(err)
	}
	e.rec.OpenWindow("w3", "Bash", "")
	os.WriteFile(filepath.Join(e.root, "g.txt"), []byte("by the open handle\n"), 0o644)
	e.rec.CloseWindow("w3")
	release()
	e.rec.OpenWindow("w4", "Bash", "")
	e.write("g.txt", "w4\n")
	e.rec.CloseWindow("w4")
	if got := found(e.records()); got["g.txt"] != "" {
		t.Errorf("a write through a handle open across boundaries was found as a change behind the mount: %v", got)
	}
}

func mustHash(t *testing.T, h index.Hash) cas.Hash {
	t.Helper()
	c, err := cas.ParseHash(string(h))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A window's close waits for an operation whose pre-image its period took:
// the change lands in the window, never in the next period unrecorded (a
// background sed -i whose rename the call's close overtook).
func TestBoundaryWaitsForChangesInFlight(t *testing.T) {
	e := newEnv(t, nil, capture.Options{})
	os.WriteFile(filepath.Join(e.root, "a.txt"), []byte("1\n"), 0o644)
	e.rec.OpenWindow("w1", "Bash", "")
	done, err := e.rec.BeginChange(0, "a.txt")
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	go func() {
		e.rec.CloseWindow("w1")
		close(closed)
	}()
	time.Sleep(50 * time.Millisecond) // let the close start and wait
	os.WriteFile(filepath.Join(e.root, "a.txt"), []byte("2\n"), 0o644)
	done()
	<-closed
	var after *index.Record
	for _, r := range e.records() {
		if r.Kind == index.KindAfter && r.Path == "a.txt" {
			after = &r
		}
	}
	if after == nil || after.Window != "w1" {
		t.Fatalf("the change in flight at the close is not w1's: %+v", after)
	}
}
