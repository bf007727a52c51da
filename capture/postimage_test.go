package capture_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ckfs-dev/ckfs/capture"
	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
	"golang.org/x/sys/unix"
)

// gatedStore holds every deferred put (a post-image's) until let, so a
// test can change a path while the worker is taking its post-image.
type gatedStore struct {
	*cas.Local
	entered chan struct{}
	let     chan struct{}
}

func (g *gatedStore) PutDeferred(b []byte) (cas.Hash, bool, error) {
	g.entered <- struct{}{}
	<-g.let
	return g.Local.PutDeferred(b)
}

// NewPack gates the puts of a pack (a batch of post-images) too.
func (g *gatedStore) NewPack() cas.Batch { return &gatedPack{Batch: g.Local.NewPack(), g: g} }

type gatedPack struct {
	cas.Batch
	g *gatedStore
}

func (p *gatedPack) Put(b []byte) (cas.Hash, bool, error) {
	p.g.entered <- struct{}{}
	<-p.g.let
	return p.Batch.Put(b)
}

// open lets every later put through.
func (g *gatedStore) open() {
	go func() {
		for range g.entered {
			g.let <- struct{}{}
		}
	}()
}

func gated(t *testing.T) (*env, *gatedStore) {
	var g *gatedStore
	e := newEnv(t, func(s cas.Store) cas.Store {
		g = &gatedStore{Local: s.(*cas.Local), entered: make(chan struct{}), let: make(chan struct{})}
		return g
	}, capture.Options{})
	return e, g
}

// afterOf returns the content of the last after record of path.
func (e *env) afterOf(path string) string {
	e.t.Helper()
	return e.imageOf(path, func(r index.Record) bool { return r.Kind == index.KindAfter })
}

// changeWithoutHandle writes content to rel as a request without a
// handle does (the cached model's writes): BeginChange, the write, done.
func (e *env) changeWithoutHandle(rel, content string) {
	e.t.Helper()
	done, err := e.rec.BeginChange(0, rel)
	if err != nil {
		e.t.Fatal(err)
	}
	os.WriteFile(filepath.Join(e.root, rel), []byte(content), 0o644)
	done()
}

// lastAfterOf is the content of path's last post-image, in a window or
// outside any.
func (e *env) lastAfterOf(path string) string {
	e.t.Helper()
	return e.imageOf(path, func(r index.Record) bool { return r.Image == index.ImageAfter })
}

// imageOf is the content of the last record of path that is an image.
func (e *env) imageOf(path string, is func(index.Record) bool) string {
	e.t.Helper()
	got := ""
	for _, r := range e.records() {
		if r.Path == path && is(r) {
			h, _ := cas.ParseHash(string(r.Hash))
			b, err := e.cas.Get(h)
			if err != nil {
				e.t.Fatal(err)
			}
			got = string(b)
		}
	}
	return got
}

// A path changed again while the worker takes its post-image: the
// worker's image is void, and the post-image recorded is the final one.
func TestPostImageVoidWhenThePathChangesAgain(t *testing.T) {
	e, g := gated(t)
	e.rec.OpenWindow("w1", "", "")
	release, _ := e.rec.WriterOpened(0, "a.txt")
	os.WriteFile(filepath.Join(e.root, "a.txt"), []byte("first\n"), 0o644)
	release()
	<-g.entered // the worker read "first" and is storing it
	release2, err := e.rec.WriterOpened(0, "a.txt")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(e.root, "a.txt"), []byte("second\n"), 0o644)
	g.let <- struct{}{}
	g.open()
	release2()
	e.rec.WaitPostImages()
	e.rec.CloseWindow("w1")
	for _, r := range e.records() {
		if r.Path == "a.txt" && r.Kind == index.KindAfter {
			h, _ := cas.ParseHash(string(r.Hash))
			if b, _ := e.cas.Get(h); string(b) != "second\n" {
				t.Errorf("an after record of a.txt holds %q: a void post-image was recorded", b)
			}
		}
	}
	if got := e.afterOf("a.txt"); got != "second\n" {
		t.Errorf("last post-image %q, want second", got)
	}
}

// A boundary while the worker takes a post-image records the path itself;
// the worker's late result is void and nothing follows the close.
func TestPostImageVoidAfterABoundary(t *testing.T) {
	e, g := gated(t)
	e.rec.OpenWindow("w1", "", "")
	release, _ := e.rec.WriterOpened(0, "a.txt")
	os.WriteFile(filepath.Join(e.root, "a.txt"), []byte("one\n"), 0o644)
	release()
	<-g.entered
	closed := make(chan error, 1)
	go func() {
		_, err := e.rec.CloseWindow("w1") // takes the post-image itself
		closed <- err
	}()
	g.let <- struct{}{} // the boundary's own put, or the worker's
	g.open()
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	e.rec.WaitPostImages()
	got := kinds(e.records())
	want := []string{"open", "before:a.txt", "after:a.txt", "close"}
	if !equal(got, want) {
		t.Errorf("records %v, want %v", got, want)
	}
}

// A change made without a handle (the cached model's writes, a chmod) has
// no release to queue its post-image: QueueQuiet takes it once the path
// has stayed untouched across one of its calls, long before the boundary,
// and never while the path is still changing.
func TestQuietPathsGetTheirPostImageEarly(t *testing.T) {
	e := newEnv(t, nil, capture.Options{})
	p := filepath.Join(e.root, "a.txt")
	os.WriteFile(p, []byte("1\n"), 0o644)
	e.rec.OpenWindow("w1", "Bash", "")
	change := func(s string) { e.changeWithoutHandle("a.txt", s) }
	change("2\n")
	e.rec.QueueQuiet() // marks a.txt calm
	change("3\n")      // ...which this change undoes
	e.rec.QueueQuiet()
	e.rec.WaitPostImages()
	if got := e.afterOf("a.txt"); got != "" {
		t.Fatalf("a post-image of a path still changing was taken: %q", got)
	}
	e.rec.QueueQuiet() // quiet across a whole call now
	e.rec.WaitPostImages()
	if got := e.afterOf("a.txt"); got != "3\n" {
		t.Fatalf("after a quiet call, the post-image is %q, want 3", got)
	}
	e.rec.CloseWindow("w1")
	n := 0
	for _, r := range e.records() {
		if r.Path == "a.txt" && r.Kind == index.KindAfter {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d post-images of a.txt, want the one taken early (the close had nothing new)", n)
	}
}

// QueueQuiet runs once a second under the recorder's lock; it looks only
// at the paths that changed since their post-images, not at every path
// the period touched: a period outside any window lasts as long as the
// user works without an agent (an npm install, a checkout of another
// branch), and a pass over all of them every second held up every
// request for as long.
func TestQuietSweepLooksOnlyAtUnsettledPaths(t *testing.T) {
	e := newEnv(t, nil, capture.Options{})
	unsettled := func(want int) {
		t.Helper()
		n, err := e.rec.Unsettled()
		if err != nil {
			t.Fatal(err)
		}
		if n != want {
			t.Fatalf("QueueQuiet would look at %d paths, want %d", n, want)
		}
	}
	for i := range 300 { // outside any window: the user's own burst
		e.write(fmt.Sprintf("gen/f%03d.txt", i), "v1\n")
	}
	unsettled(0)
	change := func(s string) { e.changeWithoutHandle("gen/f007.txt", s) }
	change("v2\n") // without a handle: only QueueQuiet takes its post-image
	unsettled(1)
	e.rec.QueueQuiet()
	e.rec.QueueQuiet()
	e.rec.WaitPostImages()
	unsettled(0)
	if got := e.lastAfterOf("gen/f007.txt"); got != "v2\n" {
		t.Fatalf("the quiet post-image is %q, want v2", got)
	}
	// A window's boundary starts a new period with nothing touched; its
	// writes settle the same way.
	e.rec.OpenWindow("w1", "Bash", "")
	unsettled(0)
	change("v3\n")
	e.write("gen/f008.txt", "v2\n")
	unsettled(1)
	e.rec.QueueQuiet()
	e.rec.QueueQuiet()
	e.rec.WaitPostImages()
	unsettled(0)
	if _, err := e.rec.CloseWindow("w1"); err != nil {
		t.Fatal(err)
	}
	unsettled(0)
}

// countingSource counts the paths the recorder lstats one by one, those
// it lstats through LstatEach (one descriptor a directory), and the
// directories it lists.
type countingSource struct {
	capture.Source
	single, each, listed atomic.Int64
}

func (c *countingSource) ReadDir(rel string) ([]string, error) {
	c.listed.Add(1)
	return c.Source.ReadDir(rel)
}

func (c *countingSource) Lstat(rel string, st *unix.Stat_t) error {
	c.single.Add(1)
	return c.Source.Lstat(rel, st)
}

func (c *countingSource) LstatEach(rels []string, fn func(int, *unix.Stat_t, error)) {
	c.each.Add(int64(len(rels)))
	c.Source.(interface {
		LstatEach([]string, func(int, *unix.Stat_t, error))
	}).LstatEach(rels, fn)
}

// A boundary checks the stat of every file whose post-image is already
// recorded (a write through a mapping kept after close moves its mtime)
// in one pass, a descriptor a directory, not by resolving each path:
// after a burst of thousands of files outside any window, the next tool
// call's window waited for three system calls a file.
func TestBoundaryChecksSettledFilesInOnePass(t *testing.T) {
	src := &countingSource{}
	e := newEnvSource(t, nil, capture.Options{}, func(s capture.Source) capture.Source {
		src.Source = s
		return src
	})
	for i := range 200 {
		e.write(fmt.Sprintf("gen/d%d/f%03d.txt", i%4, i), "v1\n")
	}
	// One of them changed through a mapping after its close: the
	// boundary still sees it.
	p := filepath.Join(e.root, "gen/d1/f005.txt")
	os.WriteFile(p, []byte("v2\n"), 0o644)
	later := time.Now().Add(time.Minute) // past the clock's granularity
	os.Chtimes(p, later, later)
	src.single.Store(0)
	e.rec.OpenWindow("w1", "Bash", "")
	if n := src.single.Load(); n > 10 {
		t.Errorf("the boundary lstat'ed %d paths one by one; want the settled files in one pass", n)
	}
	if got := e.lastAfterOf("gen/d1/f005.txt"); got != "v2\n" {
		t.Errorf("the file changed behind its recorded post-image has post-image %q at the boundary, want v2", got)
	}
}

// Post-images queued together are taken together, into one pack: a burst
// of new files costs the store a file per batch rather than one each. A
// path that changes again while its batch is taken gets no post-image from
// the batch.
func TestABurstOfPostImagesIsOnePack(t *testing.T) {
	e, g := gated(t)
	e.rec.OpenWindow("w1", "", "")
	write := func(rel, content string) func() {
		release, err := e.rec.WriterOpened(0, rel)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(e.root, rel), []byte(content), 0o644)
		return release
	}
	write("first.txt", "first\n")()
	<-g.entered // the worker holds first.txt: the rest queue up
	const n = 300
	for i := range n {
		write(fmt.Sprintf("f%03d", i), fmt.Sprintf("file %d\n", i))()
	}
	g.let <- struct{}{}
	<-g.entered // the batch has read a file and is storing it
	release := write("f007", "changed while its batch was taken\n")
	g.let <- struct{}{}
	g.open()
	release()
	e.rec.WaitPostImages()
	if got := cas.PackedObjects(e.store); got < n-10 {
		t.Errorf("%d post-images packed, want nearly all %d", got, n)
	}
	for _, r := range e.records() {
		if r.Path == "f007" && r.Kind == index.KindAfter {
			h, _ := cas.ParseHash(string(r.Hash))
			if b, _ := e.cas.Get(h); string(b) == "file 7\n" {
				t.Error("the batch recorded f007 as it was before it changed again")
			}
		}
	}
	e.rec.CloseWindow("w1")
	for i := range n {
		want := fmt.Sprintf("file %d\n", i)
		if i == 7 {
			want = "changed while its batch was taken\n"
		}
		if got := e.afterOf(fmt.Sprintf("f%03d", i)); got != want {
			t.Fatalf("f%03d: post-image %q, want %q", i, got, want)
		}
	}
}
