package cas_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/cas/castest"
)

// packed is a Local whose every small Put goes into a pack of its own,
// committed at once: the conformance suite then reads, walks and deletes
// packed copies. Its packs are made one at a time, as capture makes them
// (two packs in flight at once may both hold one content, each reporting
// it new).
type packed struct {
	*cas.Local
	mu *sync.Mutex
}

func (p packed) Put(data []byte) (cas.Hash, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	b := p.NewPack()
	h, isNew, err := b.Put(data)
	if err != nil {
		b.Abort()
		return h, false, err
	}
	return h, isNew, b.Commit()
}

func (p packed) PutReader(r io.Reader) (cas.Hash, bool, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return "", false, err
	}
	return p.Put(data)
}

func TestPackedConformance(t *testing.T) {
	castest.Run(t, func(t *testing.T) cas.Store { return packed{newLocal(t, nil), &sync.Mutex{}} })
}

// packOf puts contents into one pack and commits it.
func packOf(t *testing.T, s *cas.Local, contents ...[]byte) []cas.Hash {
	t.Helper()
	b := s.NewPack()
	var hs []cas.Hash
	for _, c := range contents {
		h, _, err := b.Put(c)
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	return hs
}

func packFiles(t *testing.T, s *cas.Local) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(s.Dir(), "packs", "*.pack"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func contents(n int) [][]byte {
	var out [][]byte
	for i := range n {
		out = append(out, []byte(strings.Repeat(fmt.Sprintf("content %d\n", i), 50+i)))
	}
	return out
}

// A pack is one file for the whole batch, nothing of it is in the store
// before Commit, and a second store on the same directory (another
// process) finds its objects, also one opened before the pack was made.
func TestPackIsOneFileAndVisibleAfterCommit(t *testing.T) {
	s := newLocal(t, nil)
	other, err := cas.Open(s.Dir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Has(cas.Sum([]byte("x"))); err != nil { // lists packs/ before there is one
		t.Fatal(err)
	}
	cs := contents(20)
	b := s.NewPack()
	for _, c := range cs {
		if _, isNew, err := b.Put(c); err != nil || !isNew {
			t.Fatalf("put: new %v, %v", isNew, err)
		}
	}
	if _, isNew, _ := b.Put(cs[0]); isNew {
		t.Error("the same content twice in one pack was new twice")
	}
	if ok, _ := s.Has(cas.Sum(cs[0])); ok {
		t.Fatal("an object of a pack not committed is in the store")
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if n := len(packFiles(t, s)); n != 1 {
		t.Fatalf("%d pack files, want 1", n)
	}
	if objs, _ := filepath.Glob(filepath.Join(s.Dir(), "objects", "*", "*", "*")); len(objs) != 0 {
		t.Fatalf("a pack wrote %d object files", len(objs))
	}
	if tmps, _ := os.ReadDir(s.TempDir()); len(tmps) != 0 {
		t.Fatalf("a pack left %d temp files", len(tmps))
	}
	for _, st := range []*cas.Local{s, other} {
		for _, c := range cs {
			got, err := st.Get(cas.Sum(c))
			if err != nil || !bytes.Equal(got, c) {
				t.Fatalf("get of a packed object: %v", err)
			}
		}
		if _, isNew, err := st.Put(cs[3]); err != nil || isNew {
			t.Errorf("a put of packed content was new (%v) or failed: %v", isNew, err)
		}
	}
	if n := cas.PackedObjects(s.Dir()); n != len(cs) {
		t.Errorf("PackedObjects = %d, want %d", n, len(cs))
	}
}

// Raw gives the same bytes for a packed copy as an object file holds.
func TestRawOfAPackedObject(t *testing.T) {
	s, loose := newLocal(t, nil), newLocal(t, nil)
	c := contents(1)[0]
	h := packOf(t, s, c)[0]
	if _, _, err := loose.Put(c); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(loose.Path(h))
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Raw(h)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("Raw of a packed object differs from the object file (%v)", err)
	}
	if _, err := cas.Decode(h, got); err != nil {
		t.Fatal(err)
	}
}

// A damaged packed copy is an error naming its pack, never data; a put of
// the good content writes an object file, which is read from then on.
func TestDamagedPackedCopy(t *testing.T) {
	s := newLocal(t, nil)
	cs := contents(3)
	hs := packOf(t, s, cs...)
	pack := packFiles(t, s)[0]
	raw, _ := os.ReadFile(pack)
	i := bytes.Index(raw, []byte("CKOB")) // the first object's header
	corruptFile(t, pack, func(b []byte) []byte { b[i+20] ^= 0x40; return b })
	bad := -1
	for k, h := range hs {
		if _, err := s.Get(h); err != nil {
			if !errors.Is(err, cas.ErrCorrupt) || !strings.Contains(err.Error(), pack) {
				t.Fatalf("damaged packed copy: %v, want ErrCorrupt naming %s", err, pack)
			}
			bad = k
		}
	}
	if bad < 0 {
		t.Fatal("no object read as damaged")
	}
	if err := s.Verify(hs[bad]); !errors.Is(err, cas.ErrCorrupt) {
		t.Fatalf("verify: %v", err)
	}
	if _, isNew, err := s.Put(cs[bad]); err != nil || !isNew {
		t.Fatalf("a put over a damaged packed copy: new %v, %v", isNew, err)
	}
	if got, err := s.Get(hs[bad]); err != nil || !bytes.Equal(got, cs[bad]) {
		t.Fatalf("after the put: %v", err)
	}
}

// Deleting a packed object writes the others of its pack out as object
// files and removes the pack.
func TestDeleteOfAPackedObject(t *testing.T) {
	s := newLocal(t, nil)
	cs := contents(5)
	hs := packOf(t, s, cs...)
	if err := s.Delete(hs[2]); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.Has(hs[2]); ok {
		t.Error("deleted object still there")
	}
	if n := len(packFiles(t, s)); n != 0 {
		t.Errorf("%d packs left", n)
	}
	for k, h := range hs {
		if k == 2 {
			continue
		}
		if _, err := os.Stat(s.Path(h)); err != nil {
			t.Errorf("object %d not written out: %v", k, err)
		}
		if got, err := s.Get(h); err != nil || !bytes.Equal(got, cs[k]) {
			t.Errorf("object %d after the delete: %v", k, err)
		}
	}
	if err := s.Delete(hs[2]); !errors.Is(err, cas.ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
}

// A collection deletes an unreferenced packed object under the same guard
// as an object file's, keeps one stored during it, and may delete the
// pack's other objects in the same sweep (their new object files are as
// old as the pack).
func TestSweepOfPackedObjects(t *testing.T) {
	s := newLocal(t, nil)
	cs := contents(4)
	hs := packOf(t, s, cs...)
	sw, err := s.BeginSweep(-1)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Put(cs[3]); err != nil { // stored again during the sweep
		t.Fatal(err)
	}
	for _, k := range []int{0, 1, 3} {
		deleted, err := sw.Delete(hs[k])
		if err != nil {
			t.Fatal(err)
		}
		if want := k != 3; deleted != want {
			t.Errorf("object %d deleted %v, want %v", k, deleted, want)
		}
	}
	sw.End()
	for k, want := range []bool{false, false, true, true} {
		if ok, _ := s.Has(hs[k]); ok != want {
			t.Errorf("object %d there %v, want %v", k, ok, want)
		}
	}

	// A pack made after the sweep began is not touched by it.
	sw, _ = s.BeginSweep(cas.DefaultGrace)
	h := packOf(t, s, []byte("new in a pack, during the sweep"))[0]
	if deleted, err := sw.Delete(h); err != nil || deleted {
		t.Errorf("a pack younger than the sweep: deleted %v, %v", deleted, err)
	}
	sw.End()
}

// A pack whose index cannot be read is reported, and the rest of the
// store still works.
func TestDamagedPackIndex(t *testing.T) {
	s := newLocal(t, nil)
	hs := packOf(t, s, contents(3)...)
	good := packOf(t, s, []byte("in a second pack"))[0]
	var damaged string
	for _, p := range packFiles(t, s) {
		if n := cas.PackedObjects(filepath.Dir(filepath.Dir(p))); n == 4 {
			raw, _ := os.ReadFile(p)
			if bytes.Count(raw, []byte("CKOB")) == 3 {
				damaged = p
			}
		}
	}
	corruptFile(t, damaged, func(b []byte) []byte { b[len(b)-60] ^= 1; return b })
	fresh, err := cas.Open(s.Dir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := fresh.DamagedPacks(); len(d) != 1 || d[damaged] == "" {
		t.Fatalf("DamagedPacks = %v, want %s", d, damaged)
	}
	if ok, _ := fresh.Has(hs[0]); ok {
		t.Error("an object of a pack with a damaged index was found")
	}
	if got, err := fresh.Get(good); err != nil || string(got) != "in a second pack" {
		t.Errorf("the other pack: %v", err)
	}
	n := 0
	if err := fresh.Walk(func(cas.Info) error { n++; return nil }); err != nil || n != 1 {
		t.Errorf("walk: %d objects, %v", n, err)
	}
}

// A write that fails in the middle of a pack leaves the objects before it
// to be committed; the failed one is not in the store.
func TestFailedWriteInAPack(t *testing.T) {
	f := &castest.Faults{}
	s := newLocal(t, f.Options())
	cs := contents(3)
	b := s.NewPack()
	if _, _, err := b.Put(cs[0]); err != nil {
		t.Fatal(err)
	}
	f.FailWrites(true)
	if _, _, err := b.Put(cs[1]); !errors.Is(err, castest.ErrInjected) {
		t.Fatalf("put with failing writes: %v", err)
	}
	f.FailWrites(false)
	if _, _, err := b.Put(cs[2]); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	for k, want := range []bool{true, false, true} {
		got, err := s.Get(cas.Sum(cs[k]))
		if (err == nil) != want || want && !bytes.Equal(got, cs[k]) {
			t.Errorf("object %d: %v, want it there: %v", k, err, want)
		}
	}
}

// Evict takes a packed copy out of the store into the given file.
func TestEvictOfAPackedObject(t *testing.T) {
	s := newLocal(t, nil)
	cs := contents(2)
	hs := packOf(t, s, cs...)
	dst := filepath.Join(t.TempDir(), "q")
	if err := s.Evict(hs[0], dst); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := cas.Decode(hs[0], raw); err != nil || !bytes.Equal(got, cs[0]) {
		t.Fatalf("evicted bytes: %v", err)
	}
	if ok, _ := s.Has(hs[0]); ok {
		t.Error("evicted object still in the store")
	}
	if got, err := s.Get(hs[1]); err != nil || !bytes.Equal(got, cs[1]) {
		t.Errorf("its neighbour: %v", err)
	}
}

// A collection told which objects are dead unpacks a pack holding several
// of them once, writes none of them out, and makes its deletions durable
// without a shard directory for them.
func TestSweepOfAPackOfDeadObjects(t *testing.T) {
	s := newLocal(t, nil)
	cs := contents(6)
	hs := packOf(t, s, cs...)
	sw, err := s.BeginSweep(-1)
	if err != nil {
		t.Fatal(err)
	}
	defer sw.End()
	dead := hs[:4]
	sw.Dead(dead)
	for k, h := range dead {
		if deleted, err := sw.Delete(h); err != nil || !deleted {
			t.Fatalf("object %d: deleted %v, %v", k, deleted, err)
		}
	}
	if err := sw.SyncDirs(dead); err != nil {
		t.Fatal(err)
	}
	objs, _ := filepath.Glob(filepath.Join(s.Dir(), "objects", "*", "*", "*"))
	if len(objs) != 2 {
		t.Errorf("%d object files written out, want the 2 live ones", len(objs))
	}
	for k, h := range hs {
		if ok, _ := s.Has(h); ok != (k >= 4) {
			t.Errorf("object %d there: %v", k, ok)
		}
	}
}

// Two packs written at once may both hold an object: a delete takes it
// out of both, and a collection does not count it gone while a pack still
// holds it.
func TestAnObjectInTwoPacks(t *testing.T) {
	for _, sweep := range []bool{false, true} {
		s := newLocal(t, nil)
		c, other := []byte("in both packs"), []byte("beside it")
		b1, b2 := s.NewPack(), s.NewPack()
		b1.Put(c)
		b1.Put(other)
		b2.Put(c)
		if err := b1.Commit(); err != nil {
			t.Fatal(err)
		}
		if err := b2.Commit(); err != nil {
			t.Fatal(err)
		}
		h := cas.Sum(c)
		if sweep {
			sw, _ := s.BeginSweep(-1)
			sw.Dead([]cas.Hash{h})
			first, err1 := sw.Delete(h)
			second, err2 := sw.Delete(h)
			sw.End()
			if err1 != nil || err2 != nil || first || !second {
				t.Errorf("sweep: deleted %v (%v) with a second copy left, then %v (%v)", first, err1, second, err2)
			}
		} else if err := s.Delete(h); err != nil {
			t.Fatal(err)
		}
		fresh, err := cas.Open(s.Dir(), nil) // reads every pack's index anew
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range []*cas.Local{s, fresh} {
			if ok, _ := st.Has(h); ok {
				t.Errorf("sweep %v: the object is still there", sweep)
			}
		}
		if got, err := s.Get(cas.Sum(other)); err != nil || !bytes.Equal(got, other) {
			t.Errorf("sweep %v: its neighbour: %v", sweep, err)
		}
	}
}
