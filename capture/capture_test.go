package capture_test

import (
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ckfs-dev/ckfs/capture"
	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/cas/castest"
	"github.com/ckfs-dev/ckfs/index"
	"golang.org/x/sys/unix"
)

type env struct {
	t     testing.TB
	root  string
	store string
	cas   cas.Store
	tl    *index.Writer
	rec   *capture.Recorder
	// appends counts the timeline's appends (each takes the time once).
	appends atomic.Int64
}

func newEnv(t testing.TB, wrap func(cas.Store) cas.Store, opts capture.Options) *env {
	t.Helper()
	return newEnvSource(t, wrap, opts, nil)
}

// newEnvSource is newEnv with the recorder reading the workspace through
// wrapSrc's Source, when not nil.
func newEnvSource(t testing.TB, wrap func(cas.Store) cas.Store, opts capture.Options, wrapSrc func(capture.Source) capture.Source) *env {
	t.Helper()
	e := &env{t: t, root: t.TempDir(), store: t.TempDir()}
	s, err := cas.Open(e.store, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.cas = s
	if wrap != nil {
		e.cas = wrap(s)
	}
	e.tl, _, err = index.OpenWriter(e.store, index.WriterOptions{Clock: func() time.Time {
		e.appends.Add(1)
		return time.Now()
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.tl.Close() })
	fd, err := unix.Open(e.root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	opts.Store, opts.Timeline, opts.Source = e.cas, e.tl, capture.NewDirSource(fd)
	if wrapSrc != nil {
		opts.Source = wrapSrc(opts.Source)
	}
	e.rec, err = capture.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.rec.Close() }) // stops the post-image worker
	return e
}

func (e *env) write(rel, content string) {
	e.t.Helper()
	release, err := e.rec.WriterOpened(0, rel)
	if err != nil {
		e.t.Fatal(err)
	}
	p := filepath.Join(e.root, rel)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	release()
	e.rec.WaitPostImages() // the post-image is taken now, as at a release
}

func (e *env) records() []index.Record {
	e.t.Helper()
	// Every test that reads the timeline also checks the recorder's
	// bookkeeping: QueueQuiet's list holds only paths touched this period.
	if _, err := e.rec.Unsettled(); err != nil {
		e.t.Error(err)
	}
	recs, tail, err := index.Load(filepath.Join(e.store, index.TimelineFile))
	if err != nil || tail != nil {
		e.t.Fatalf("load: %v %v", err, tail)
	}
	return recs
}

func kinds(recs []index.Record) []string {
	var out []string
	for _, r := range recs {
		k := string(r.Kind)
		if r.Path != "" {
			k += ":" + r.Path
		}
		if r.Image != "" {
			k += ":" + string(r.Image)
		}
		out = append(out, k)
	}
	return out
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestTwoEditsFourRecordsThreeObjects(t *testing.T) {
	e := newEnv(t, nil, capture.Options{})
	os.WriteFile(filepath.Join(e.root, "main.go"), []byte("v0\n"), 0o644)
	for i, w := range []string{"w1", "w2"} {
		if _, err := e.rec.OpenWindow(w, "Edit", ""); err != nil {
			t.Fatal(err)
		}
		e.write("main.go", []string{"v1\n", "v2\n"}[i])
		if _, err := e.rec.CloseWindow(w); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"open", "before:main.go", "after:main.go", "close", "open", "before:main.go", "after:main.go", "close"}
	if got := kinds(e.records()); !equal(got, want) {
		t.Errorf("records %v, want %v", got, want)
	}
	n := 0
	e.cas.Walk(func(cas.Info) error { n++; return nil })
	if n != 3 {
		t.Errorf("%d objects, want 3", n)
	}
}

func TestOutsideAndBoundaries(t *testing.T) {
	e := newEnv(t, nil, capture.Options{})
	e.write("notes.md", "mine\n") // no window: the user's own edit
	if _, err := e.rec.OpenWindow("w1", "Bash", "touch"); err != nil {
		t.Fatal(err)
	}
	// A handle opened in the window and still open at close gets its
	// post-image at close, and a fresh pre-image in the next period.
	release, err := e.rec.WriterOpened(0, "log.txt")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(e.root, "log.txt"), []byte("1\n"), 0o644)
	if _, err := e.rec.CloseWindow(""); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(e.root, "log.txt"), []byte("1\n2\n"), 0o644)
	release()
	e.rec.WaitPostImages()
	want := []string{
		"outside:notes.md:before", "outside:notes.md:after",
		"open", "before:log.txt", "after:log.txt", "close",
		"outside:log.txt:before", "outside:log.txt:after",
	}
	if got := kinds(e.records()); !equal(got, want) {
		t.Errorf("records\n got %v\nwant %v", got, want)
	}
	recs := e.records()
	st := index.StateAt(recs, recs[2].Seq) // before w1
	if st["log.txt"].Type != index.TypeAbsent || st["notes.md"].Type != index.TypeFile {
		t.Errorf("state before w1: %+v", st)
	}
}

func TestExcludesAndSkips(t *testing.T) {
	e := newEnv(t, nil, capture.Options{MaxFileSize: 10, Excludes: []string{"*.o"}})
	e.rec.OpenWindow("w", "", "")
	e.write(".git/index", "x")
	e.write("a.o", "x")
	e.write("big.txt", "0123456789abcdef")
	e.rec.CloseWindow("w")
	recs := e.records()
	got := kinds(recs)
	want := []string{"open", "before:big.txt", "skip:big.txt", "close"}
	if !equal(got, want) {
		t.Fatalf("records %v, want %v", got, want)
	}
	if recs[2].Reason == "" || recs[2].Size != 16 || recs[2].Hash != "" {
		t.Errorf("skip record %+v", recs[2])
	}
}

func TestSymlinkDirModeImages(t *testing.T) {
	e := newEnv(t, nil, capture.Options{})
	os.WriteFile(filepath.Join(e.root, "run.sh"), []byte("echo\n"), 0o644)
	e.rec.OpenWindow("w", "", "")
	for _, p := range []string{"d", "d/l", "run.sh"} {
		if err := e.rec.BeforeChange(0, p); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir(filepath.Join(e.root, "d"), 0o755)
	os.Chmod(filepath.Join(e.root, "d"), 0o2755|os.ModeSetgid)
	unix.Chmod(filepath.Join(e.root, "d"), 0o2755)
	os.Symlink("../run.sh", filepath.Join(e.root, "d/l"))
	os.Chmod(filepath.Join(e.root, "run.sh"), 0o755)
	e.rec.CloseWindow("w")
	st := index.StateAt(e.records(), e.records()[len(e.records())-1].Seq)
	if d := st["d"]; d.Type != index.TypeDir || d.Mode != 0o2755 {
		t.Errorf("dir state %+v", d)
	}
	if l := st["d/l"]; l.Type != index.TypeSymlink || l.Size != int64(len("../run.sh")) {
		t.Errorf("symlink state %+v", l)
	} else if h, _ := cas.ParseHash(string(l.Hash)); true {
		b, err := e.cas.Get(h)
		if err != nil || string(b) != "../run.sh" {
			t.Errorf("symlink target stored as %q, %v", b, err)
		}
	}
	if f := st["run.sh"]; f.Mode != 0o755 {
		t.Errorf("chmod not recorded: %+v", f)
	}
	before := index.StateAt(e.records(), 1)
	if before["run.sh"].Mode != 0o644 || before["d"].Type != index.TypeAbsent {
		t.Errorf("state before: %+v", before)
	}
}

// A pre-image that cannot be stored refuses the operation: the caller gets
// an error and must not forward the write.
func TestStoreFailureRefuses(t *testing.T) {
	var fs *castest.FaultyStore
	e := newEnv(t, func(s cas.Store) cas.Store { fs = &castest.FaultyStore{Store: s}; return fs }, capture.Options{})
	os.WriteFile(filepath.Join(e.root, "a"), []byte("precious\n"), 0o644)
	e.rec.OpenWindow("w", "", "")
	fs.FailPut(true)
	if _, err := e.rec.WriterOpened(0, "a"); !errors.Is(err, castest.ErrInjected) {
		t.Fatalf("WriterOpened with a failing store: %v", err)
	}
	fs.FailPut(false)
	if _, err := e.rec.WriterOpened(0, "a"); err != nil {
		t.Fatalf("retry after the store recovered: %v", err)
	}
	if s := e.rec.Stats(); s.CaptureError != 1 {
		t.Errorf("stats %+v", s)
	}
}

func TestRenameTree(t *testing.T) {
	e := newEnv(t, nil, capture.Options{})
	os.MkdirAll(filepath.Join(e.root, "src/pkg"), 0o755)
	os.WriteFile(filepath.Join(e.root, "src/pkg/a.go"), []byte("a"), 0o644)
	os.WriteFile(filepath.Join(e.root, "src/b.go"), []byte("b"), 0o644)
	e.rec.OpenWindow("w", "", "")
	if err := e.rec.BeforeRename(0, "src", "lib", false); err != nil {
		t.Fatal(err)
	}
	os.Rename(filepath.Join(e.root, "src"), filepath.Join(e.root, "lib"))
	e.rec.CloseWindow("w")
	recs := e.records()
	open := recs[0].Seq
	end := recs[len(recs)-1].Seq
	before, after := index.StateAt(recs, open), index.StateAt(recs, end)
	for _, p := range []string{"src", "src/b.go", "src/pkg", "src/pkg/a.go"} {
		if !before[p].Exists() || after[p].Exists() {
			t.Errorf("%s: before %+v after %+v", p, before[p], after[p])
		}
	}
	for _, p := range []string{"lib", "lib/b.go", "lib/pkg", "lib/pkg/a.go"} {
		if before[p].Exists() || !after[p].Exists() {
			t.Errorf("%s: before %+v after %+v", p, before[p], after[p])
		}
	}
	if before["src/pkg/a.go"].Hash != after["lib/pkg/a.go"].Hash {
		t.Error("moved content differs")
	}
}

// A file deleted while a writable handle is open: its release still
// records the deletion, and later boundaries stop taking pre-images of it.
func TestDeletedWhileOpen(t *testing.T) {
	e := newEnv(t, nil, capture.Options{})
	os.WriteFile(filepath.Join(e.root, "tmp.txt"), []byte("x"), 0o644)
	e.rec.OpenWindow("w1", "", "")
	release, err := e.rec.WriterOpened(0, "tmp.txt")
	if err != nil {
		t.Fatal(err)
	}
	e.rec.BeforeChange(0, "tmp.txt")
	os.Remove(filepath.Join(e.root, "tmp.txt"))
	release()
	e.rec.CloseWindow("w1")
	e.rec.OpenWindow("w2", "", "")
	e.rec.CloseWindow("w2")
	got := kinds(e.records())
	want := []string{"open", "before:tmp.txt", "after:tmp.txt", "close", "open", "close"}
	if !equal(got, want) {
		t.Errorf("records %v, want %v", got, want)
	}
}

// A path whose post-image was taken at release is not hashed again at the
// boundary unless its size, mode or mtime moved (as a write through a
// memory mapping kept after close does).
func TestBoundarySkipsCleanPaths(t *testing.T) {
	e := newEnv(t, nil, capture.Options{})
	e.rec.OpenWindow("w1", "", "")
	e.write("a.txt", "one\n")
	e.write("b.txt", "two\n")
	// b.txt changes behind the daemon's back after its release.
	os.WriteFile(filepath.Join(e.root, "b.txt"), []byte("two, changed\n"), 0o644)
	e.rec.CloseWindow("w1")
	got := kinds(e.records())
	want := []string{"open", "before:a.txt", "after:a.txt", "before:b.txt", "after:b.txt", "after:b.txt", "close"}
	if !equal(got, want) {
		t.Errorf("records %v, want %v", got, want)
	}
}
