package capture_test

import (
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

// aheadGate holds the durable commit of every pack after the first (the
// batches taken ahead) until let is closed: a test can then act while
// the next batch is being taken.
type aheadGate struct {
	*cas.Local
	commits atomic.Int32
	entered chan struct{}
	let     chan struct{}
}

func (g *aheadGate) NewPack() cas.Batch { return &aheadPack{Batch: g.Local.NewPack(), g: g} }

type aheadPack struct {
	cas.Batch
	g *aheadGate
}

func (p *aheadPack) Commit() error {
	if p.g.commits.Add(1) > 1 {
		select {
		case p.g.entered <- struct{}{}:
		default:
		}
		<-p.g.let
	}
	return p.Batch.Commit()
}

// aheadEnv is an old tree of n files in old/ with a window open, and the
// names of its files in directory order (the order rm works in).
func aheadEnv(t *testing.T, n int) (*env, *aheadGate, map[string]string, []string) {
	g := &aheadGate{entered: make(chan struct{}, 64), let: make(chan struct{})}
	e := newEnv(t, func(s cas.Store) cas.Store {
		g.Local = s.(*cas.Local)
		return g
	}, capture.Options{})
	want := e.oldTree("old", n)
	names := e.dirOrder("old")
	if _, err := e.rec.OpenWindow("w1", "Bash", "rm"); err != nil {
		t.Fatal(err)
	}
	return e, g, want, names
}

// dirOrder lists the paths in dir in directory order, unsorted, as rm
// and a batch see them.
func (e *env) dirOrder(dir string) []string {
	e.t.Helper()
	d, err := os.Open(filepath.Join(e.root, dir))
	if err != nil {
		e.t.Fatal(err)
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		e.t.Fatal(err)
	}
	for i := range names {
		names[i] = dir + "/" + names[i]
	}
	return names
}

// del takes rel's pre-image and deletes it, checking that its record and
// object are durable first.
func (e *env) del(rel string) {
	e.t.Helper()
	if err := e.rec.BeforeChange(0, rel); err != nil {
		e.t.Fatal(err)
	}
	e.durablePreImage(rel)
	if err := os.Remove(filepath.Join(e.root, rel)); err != nil {
		e.t.Fatal(err)
	}
}

// durablePreImage fails unless rel has a durable pre-image record in the
// period, and returns its hash.
func (e *env) durablePreImage(rel string) index.Hash {
	e.t.Helper()
	var last *index.Record
	for _, r := range e.records() {
		if r.Path == rel && r.IsPreImage() {
			last = &r
		}
	}
	if last == nil || last.Seq > e.tl.SyncedSeq() {
		e.t.Fatalf("%s: no durable pre-image before its change", rel)
	}
	if n := e.cas.(*aheadGate).Pending(); n != 0 {
		e.t.Fatalf("%s: %d objects not durable before its change", rel, n)
	}
	return last.Hash
}

// untilTakenAhead deletes files in directory order until the first batch
// is taken and the next one is held; it returns how many it deleted.
func untilTakenAhead(t *testing.T, e *env, g *aheadGate, names []string) int {
	i := 0
	for ; e.rec.Stats().Prefetched == 0; i++ {
		e.del(names[i])
	}
	select {
	case <-g.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the batch after the first was not taken ahead")
	}
	return i
}

// inTime runs f and fails if it does not return in ten seconds: a wait
// for the batch held would never end.
func inTime(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s waited for the batch taken ahead", what)
	}
}

// While the next batch is taken, the files of the one before are deleted
// without waiting for it; the first file of the next waits for it, and
// then finds its pre-image durable.
func TestTheNextBatchIsTakenAheadOffTheLock(t *testing.T) {
	e, g, want, names := aheadEnv(t, 300)
	i := untilTakenAhead(t, e, g, names)
	recorded := map[string]bool{}
	for _, r := range e.records() {
		if r.IsPreImage() {
			recorded[r.Path] = true
		}
	}
	inTime(t, "deleting the files of the first batch", func() {
		for ; recorded[names[i]]; i++ {
			if err := e.rec.BeforeChange(0, names[i]); err != nil {
				t.Error(err)
			}
			os.Remove(filepath.Join(e.root, names[i]))
		}
	})
	next := names[i]
	done := make(chan error, 1)
	go func() { done <- e.rec.BeforeChange(0, next) }()
	select {
	case err := <-done:
		t.Fatalf("the change of %s, a file of the batch held, went on before it (%v)", next, err)
	case <-time.After(200 * time.Millisecond):
	}
	close(g.let)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if h := e.durablePreImage(next); h != cas.Sum([]byte(want[next])) {
		t.Fatalf("%s: pre-image %s", next, h)
	}
	os.Remove(filepath.Join(e.root, next))
	for _, rel := range names[i+1:] {
		e.del(rel)
	}
	if _, err := e.rec.CloseWindow("w1"); err != nil {
		t.Fatal(err)
	}
	if n := e.rec.Stats().Prefetched; n < 250 {
		t.Errorf("%d of 300 pre-images taken in batches", n)
	}
	checkPreImages(t, e, want)
}

// checkPreImages checks that every file of want has its content as its
// pre-image in the window.
func checkPreImages(t *testing.T, e *env, want map[string]string) {
	t.Helper()
	recs := e.records()
	before := index.StateAt(recs, recs[0].Seq)
	for rel, content := range want {
		if before[rel].Hash != cas.Sum([]byte(content)) {
			t.Errorf("%s: pre-image %s, want the hash of %q", rel, before[rel].Hash, content)
		}
	}
}

// A file of the batch taken ahead that changes by another name (a hard
// link made meanwhile) after its image was read is left out of the batch:
// its own change takes its pre-image from the disk as it is then.
func TestAFileChangedBehindItsBatchIsLeftOut(t *testing.T) {
	e, g, want, names := aheadEnv(t, 300)
	i := untilTakenAhead(t, e, g, names)
	recorded := map[string]bool{}
	for _, r := range e.records() {
		recorded[r.Path] = true
	}
	// The first file after the first batch: the batch held starts there.
	claimed := names[i]
	for recorded[claimed] {
		i++
		claimed = names[i]
	}
	if err := e.rec.BeforeChange(0, "link"); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(e.root, claimed), filepath.Join(e.root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.root, "link"), []byte("changed by its other name\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	close(g.let)
	for _, rel := range names {
		if _, err := os.Lstat(filepath.Join(e.root, rel)); err == nil {
			e.del(rel)
		}
	}
	if _, err := e.rec.CloseWindow("w1"); err != nil {
		t.Fatal(err)
	}
	want[claimed] = "changed by its other name\n"
	checkPreImages(t, e, want)
}

// A boundary waits for the batch taken ahead and records it in the window
// it was taken in: the files it holds, never changed, have their
// pre-images there and no post-image.
func TestABoundaryLandsTheBatchTakenAhead(t *testing.T) {
	e, g, want, names := aheadEnv(t, 300)
	untilTakenAhead(t, e, g, names)
	closed := make(chan error, 1)
	go func() {
		_, err := e.rec.CloseWindow("w1")
		closed <- err
	}()
	select {
	case err := <-closed:
		t.Fatalf("the window closed while its batch was held (%v)", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(g.let)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	pre, post := 0, 0
	for _, r := range e.records() {
		switch {
		case r.Path == "" || r.Window != "w1":
		case r.IsPreImage():
			pre++
			if r.Hash != cas.Sum([]byte(want[r.Path])) {
				t.Errorf("%s: pre-image %s", r.Path, r.Hash)
			}
		case r.Kind == index.KindAfter && r.Type != index.TypeAbsent:
			post++
		}
	}
	if pre < 32+64 || post != 0 {
		t.Errorf("the window holds %d pre-images (want the first two batches, 96) and %d post-images of unchanged files", pre, post)
	}
}

// The next batch starts where the one taken ahead stopped; a change the
// period made there meanwhile (a symbolic link's, which starts no batch)
// keeps its own pre-image, the only one the window holds.
func TestABatchStartsPastWhatThePeriodTouched(t *testing.T) {
	e, g, _, names := aheadEnv(t, 300)
	// The first batch holds the third file and the 31 after it, the one
	// taken ahead the 64 after those: the next one starts at the 99th.
	y := names[98]
	if err := os.Remove(filepath.Join(e.root, y)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("target", filepath.Join(e.root, y)); err != nil {
		t.Fatal(err)
	}
	if d, _ := os.Open(filepath.Join(e.root, "old")); d != nil {
		now, _ := d.Readdirnames(-1)
		d.Close()
		if len(now) != len(names) || "old/"+now[98] != y {
			t.Skip("this file system moved the entry when it was replaced; the test needs its place kept")
		}
	}
	untilTakenAhead(t, e, g, names)
	if err := e.rec.BeforeChange(0, y); err != nil {
		t.Fatal(err)
	}
	close(g.let)
	for _, rel := range names {
		if _, err := os.Lstat(filepath.Join(e.root, rel)); err == nil && rel != y {
			e.del(rel)
		}
	}
	if _, err := e.rec.CloseWindow("w1"); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range e.records() {
		if r.Path == y && r.IsPreImage() {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%s has %d pre-images in the window, want 1", y, n)
	}
	if e.rec.Stats().Prefetched < 200 {
		t.Errorf("%d pre-images in batches: the batches stopped at %s", e.rec.Stats().Prefetched, y)
	}
}

// A batch stats no more of a large directory than it may take, and the
// period lists it once: deleting a flat directory of n files stats each
// about once, not what is left of the directory for every batch, and
// does not read its names again for each batch.
func TestBatchesStatALargeDirectoryOnce(t *testing.T) {
	src := &countingSource{}
	e := newEnvSource(t, nil, capture.Options{}, func(s capture.Source) capture.Source {
		src.Source = s
		return src
	})
	const n = 4000
	e.oldTree("old", n)
	if _, err := e.rec.OpenWindow("w1", "Bash", "rm"); err != nil {
		t.Fatal(err)
	}
	for _, rel := range e.dirOrder("old") {
		if err := e.rec.BeforeChange(0, rel); err != nil {
			t.Fatal(err)
		}
		os.Remove(filepath.Join(e.root, rel))
	}
	if _, err := e.rec.CloseWindow("w1"); err != nil {
		t.Fatal(err)
	}
	if p := e.rec.Stats().Prefetched; p < n*9/10 {
		t.Fatalf("%d of %d pre-images in batches", p, n)
	}
	// The boundary stats every file the period touched once more.
	if got := src.each.Load(); got > 3*n {
		t.Errorf("%d paths stat'd in batches of %d files", got, n)
	}
	if got := src.listed.Load(); got > 1 {
		t.Errorf("the directory of %d files listed %d times in one period, want once", n, got)
	}
}

// A pre-image records the ctime its lstat read, taken alone or in a
// batch: a rewind to before the path's first record tells from it that
// the path was renamed into place or changed unseen meanwhile.
func TestPreImagesRecordTheirCTime(t *testing.T) {
	e, g, _, names := aheadEnv(t, 100)
	close(g.let)
	for _, rel := range names {
		var st unix.Stat_t
		if err := unix.Lstat(filepath.Join(e.root, rel), &st); err != nil {
			t.Fatal(err)
		}
		e.del(rel)
		want := st.Ctim.Sec*1e9 + st.Ctim.Nsec
		for _, r := range e.records() {
			if r.Path == rel && r.IsPreImage() && r.CTime != want {
				t.Fatalf("%s: pre-image with ctime %d, want %d", rel, r.CTime, want)
			}
		}
	}
	if e.rec.Stats().Prefetched == 0 {
		t.Fatal("no batch: the batched pre-images went unchecked")
	}
	for _, r := range e.records() {
		if r.CTime != 0 && !r.IsPreImage() {
			t.Errorf("a %s record of %s with a ctime", r.Kind, r.Path)
		}
	}
}
