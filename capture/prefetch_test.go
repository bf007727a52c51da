package capture_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ckfs-dev/ckfs/capture"
	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
	"golang.org/x/sys/unix"
)

// oldTree writes n files into dir under the workspace, as if they were
// there before the mount: no record names them.
func (e *env) oldTree(dir string, n int) map[string]string {
	e.t.Helper()
	if err := os.MkdirAll(filepath.Join(e.root, dir), 0o755); err != nil {
		e.t.Fatal(err)
	}
	want := map[string]string{}
	for i := range n {
		rel := fmt.Sprintf("%s/f%03d", dir, i)
		want[rel] = fmt.Sprintf("old file %d\n", i)
		if err := os.WriteFile(filepath.Join(e.root, rel), []byte(want[rel]), 0o644); err != nil {
			e.t.Fatal(err)
		}
	}
	return want
}

// removeAll deletes every file of dir in directory order, as rm -rf does,
// taking each pre-image first; after each pre-image it checks that the
// record naming the file and its object are durable before the file goes.
func (e *env) removeAll(dir string, keep map[string]bool) {
	e.t.Helper()
	ents, err := os.ReadDir(filepath.Join(e.root, dir))
	if err != nil {
		e.t.Fatal(err)
	}
	for _, ent := range ents {
		rel := dir + "/" + ent.Name()
		if keep[rel] {
			continue
		}
		if err := e.rec.BeforeChange(0, rel); err != nil {
			e.t.Fatal(err)
		}
		if n := e.cas.(*cas.Local).Pending(); n != 0 {
			e.t.Fatalf("%s: %d objects not durable when the file is deleted", rel, n)
		}
		var seq uint64
		for _, r := range e.records() {
			if r.Path == rel && r.IsPreImage() {
				seq = r.Seq
			}
		}
		if seq == 0 || seq > e.tl.SyncedSeq() {
			e.t.Fatalf("%s: pre-image (seq %d) not durable when the file is deleted (synced to %d)", rel, seq, e.tl.SyncedSeq())
		}
		if err := os.Remove(filepath.Join(e.root, rel)); err != nil {
			e.t.Fatal(err)
		}
	}
}

func TestDeletingAnOldTreeBatchesItsPreImages(t *testing.T) {
	e := newEnv(t, nil, capture.Options{})
	want := e.oldTree("old", 200)
	keep := map[string]bool{"old/f007": true, "old/f150": true}
	if _, err := e.rec.OpenWindow("w1", "Bash", "rm"); err != nil {
		t.Fatal(err)
	}
	e.removeAll("old", keep)
	if _, err := e.rec.CloseWindow("w1"); err != nil {
		t.Fatal(err)
	}
	if n := e.rec.Stats().Prefetched; n < 150 {
		t.Errorf("%d pre-images taken in batches, want most of 200", n)
	}
	// A batch is one pack: an object file each would be a file creation
	// per pre-image.
	if n := cas.PackedObjects(e.store); n < 150 {
		t.Errorf("%d pre-images packed, want most of 200", n)
	}
	recs := e.records()
	before := index.StateAt(recs, recs[0].Seq)
	var after map[string]index.Entry
	afters := map[string]int{}
	for _, r := range recs {
		if r.Kind == index.KindClose {
			after = index.StateAt(recs, r.Seq)
		}
		if r.Kind == index.KindAfter {
			afters[r.Path]++
		}
		if r.IsImage() && r.Window != "w1" {
			t.Errorf("record %d of %s is not in the window: %+v", r.Seq, r.Path, r)
		}
	}
	s := e.cas.(*cas.Local)
	for rel, content := range want {
		h, err := cas.ParseHash(string(before[rel].Hash))
		if err != nil {
			t.Fatalf("%s: no pre-image: %v", rel, err)
		}
		b, err := s.Get(h)
		if err != nil || string(b) != content {
			t.Errorf("%s: pre-image holds %q, %v; want %q", rel, b, err, content)
		}
		switch {
		case keep[rel] && (afters[rel] != 0 || after[rel].Hash != before[rel].Hash):
			t.Errorf("%s was never changed, but has %d post-images (state after: %+v)", rel, afters[rel], after[rel])
		case !keep[rel] && after[rel].Type != index.TypeAbsent:
			t.Errorf("%s was deleted, but the window's end says %+v", rel, after[rel])
		}
	}
}

// A file kept by the batch and changed afterwards in the same window has
// the content of its batch as its pre-image and its change as its
// post-image.
func TestABatchedFileChangedLaterKeepsItsPreImage(t *testing.T) {
	e := newEnv(t, nil, capture.Options{})
	want := e.oldTree("old", 50)
	if _, err := e.rec.OpenWindow("w1", "Bash", "edit"); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"old/f000", "old/f001", "old/f002"} {
		if err := e.rec.BeforeChange(0, rel); err != nil {
			t.Fatal(err)
		}
		os.Remove(filepath.Join(e.root, rel))
	}
	if e.rec.Stats().Prefetched == 0 {
		t.Fatal("no batch after three deletions in one directory")
	}
	e.write("old/f040", "new content\n")
	if _, err := e.rec.CloseWindow("w1"); err != nil {
		t.Fatal(err)
	}
	ch := map[string][2]index.Hash{}
	for _, r := range e.records() {
		if r.Path != "old/f040" {
			continue
		}
		switch r.Kind {
		case index.KindBefore:
			ch["old/f040"] = [2]index.Hash{r.Hash, ch["old/f040"][1]}
		case index.KindAfter:
			ch["old/f040"] = [2]index.Hash{ch["old/f040"][0], r.Hash}
		}
	}
	got := ch["old/f040"]
	if got[0] != cas.Sum([]byte(want["old/f040"])) || got[1] != cas.Sum([]byte("new content\n")) {
		t.Errorf("old/f040: pre-image %s, post-image %s", got[0], got[1])
	}
}

// With windows open together, a path's window is decided by its own
// writer: nothing is taken ahead of its change.
func TestNoBatchWithWindowsOpenTogether(t *testing.T) {
	e := newEnv(t, nil, capture.Options{})
	e.oldTree("old", 50)
	for _, id := range []string{"a", "b"} {
		if _, err := e.rec.OpenWindow(id, "Bash", id); err != nil {
			t.Fatal(err)
		}
	}
	e.removeAll("old", nil)
	if n := e.rec.Stats().Prefetched; n != 0 {
		t.Errorf("%d pre-images taken ahead with two windows open", n)
	}
}

// Creating files in a directory that had durable pre-images takes nothing
// ahead: only an existing file's change starts a batch.
func TestCreatingFilesTakesNoBatch(t *testing.T) {
	e := newEnv(t, nil, capture.Options{})
	e.oldTree("old", 3)
	e.oldTree("other", 40)
	for _, rel := range []string{"old/f000", "old/f001"} {
		if err := e.rec.BeforeChange(0, rel); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		e.write(fmt.Sprintf("old/new%d", i), "x")
	}
	if n := e.rec.Stats().Prefetched; n != 0 {
		t.Errorf("%d pre-images taken ahead for new files", n)
	}
	if err := e.rec.BeforeChange(0, "old/f002"); err != nil {
		t.Fatal(err)
	}
	if n := e.rec.Stats().Prefetched; n != 1 {
		t.Errorf("the third file's change took %d pre-images, want itself alone (its siblings are recorded)", n)
	}
}

// Deleting a tree of small directories depth first, as rm -rf does, takes
// its files' pre-images in a few batches across directories, not one
// append (and one sync) per directory.
func TestDeletingATreeOfSmallDirectoriesBatchesAcrossThem(t *testing.T) {
	e := newEnv(t, nil, capture.Options{})
	want := map[string]string{}
	for d := range 40 {
		for rel, c := range e.oldTree(fmt.Sprintf("tree/d%02d/sub", d), 4) {
			want[rel] = c
		}
	}
	// A tree beside it that nothing changes: no batch reaches it.
	e.oldTree("other", 100)
	if _, err := e.rec.OpenWindow("w1", "Bash", "rm -rf tree"); err != nil {
		t.Fatal(err)
	}
	fileAppends := 0
	var rm func(dir string)
	rm = func(dir string) {
		ents, err := os.ReadDir(filepath.Join(e.root, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, ent := range ents {
			rel := dir + "/" + ent.Name()
			if ent.IsDir() {
				rm(rel)
				continue
			}
			n := e.appends.Load()
			if err := e.rec.BeforeChange(0, rel); err != nil {
				t.Fatal(err)
			}
			fileAppends += int(e.appends.Load() - n)
			if err := os.Remove(filepath.Join(e.root, rel)); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.rec.BeforeChange(0, dir); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(e.root, dir)); err != nil {
			t.Fatal(err)
		}
	}
	rm("tree")
	if _, err := e.rec.CloseWindow("w1"); err != nil {
		t.Fatal(err)
	}
	if fileAppends > 10 {
		t.Errorf("deleting 160 files in 40 directories took %d appends of pre-images, want a few batches", fileAppends)
	}
	recs := e.records()
	for _, r := range recs {
		if strings.HasPrefix(r.Path, "other/") {
			t.Fatalf("a batch took %s, outside the tree being deleted", r.Path)
		}
	}
	before := index.StateAt(recs, recs[0].Seq)
	s := e.cas.(*cas.Local)
	for rel, content := range want {
		h, err := cas.ParseHash(string(before[rel].Hash))
		if err != nil {
			t.Fatalf("%s: no pre-image: %v", rel, err)
		}
		if b, err := s.Get(h); err != nil || string(b) != content {
			t.Errorf("%s: pre-image holds %q, %v; want %q", rel, b, err, content)
		}
	}
}

// fullAfter is a store whose disk fills up after n deferred or packed
// puts: every put then fails with ENOSPC. failed counts the deferred and
// packed puts refused.
type fullAfter struct {
	*cas.Local
	n, failed atomic.Int64
}

func (s *fullAfter) PutDeferred(b []byte) (cas.Hash, bool, error) {
	if s.n.Add(-1) < 0 {
		s.failed.Add(1)
		return "", false, fmt.Errorf("store object: %w", unix.ENOSPC)
	}
	return s.Local.PutDeferred(b)
}

func (s *fullAfter) NewPack() cas.Batch { return &fullPack{Batch: s.Local.NewPack(), s: s} }

// fullPack is a pack of a fullAfter store: its puts count as deferred.
type fullPack struct {
	cas.Batch
	s *fullAfter
}

func (p *fullPack) Put(b []byte) (cas.Hash, bool, error) {
	if p.s.n.Add(-1) < 0 {
		p.s.failed.Add(1)
		return "", false, fmt.Errorf("store object: %w", unix.ENOSPC)
	}
	return p.Batch.Put(b)
}

func (s *fullAfter) Put(b []byte) (cas.Hash, bool, error) {
	if s.n.Load() < 0 {
		return "", false, fmt.Errorf("store object: %w", unix.ENOSPC)
	}
	return s.Local.Put(b)
}

// When the store fills up in a batch, the batch keeps what it stored, the
// files it could not take are refused one by one as without batches, and
// no further batch is tried in the period (each would fail again on the
// first file).
func TestAFullStoreStopsTheBatches(t *testing.T) {
	var full *fullAfter
	e := newEnv(t, func(s cas.Store) cas.Store {
		full = &fullAfter{Local: s.(*cas.Local)}
		full.n.Store(60)
		return full
	}, capture.Options{})
	want := e.oldTree("old", 200)
	if _, err := e.rec.OpenWindow("w1", "Bash", "rm"); err != nil {
		t.Fatal(err)
	}
	deleted := 0
	ents, _ := os.ReadDir(filepath.Join(e.root, "old"))
	for _, ent := range ents {
		rel := "old/" + ent.Name()
		if err := e.rec.BeforeChange(0, rel); err != nil {
			if !errors.Is(err, unix.ENOSPC) {
				t.Fatalf("%s: %v", rel, err)
			}
			continue // refused: the file stays
		}
		os.Remove(filepath.Join(e.root, rel))
		deleted++
	}
	if _, err := e.rec.CloseWindow("w1"); err != nil {
		t.Fatal(err)
	}
	if deleted == 0 || deleted == len(want) {
		t.Fatalf("%d of %d deleted: the store should fill up in the middle", deleted, len(want))
	}
	if n := full.failed.Load(); n > int64(runtime.GOMAXPROCS(0)) {
		t.Errorf("%d deferred puts tried on a full store: batches went on after it filled up", n)
	}
	recs := e.records()
	before := index.StateAt(recs, recs[0].Seq)
	for rel, content := range want {
		if _, err := os.Stat(filepath.Join(e.root, rel)); err == nil {
			continue
		}
		h, err := cas.ParseHash(string(before[rel].Hash))
		if err != nil {
			t.Fatalf("%s was deleted with no pre-image: %v", rel, err)
		}
		if b, err := full.Get(h); err != nil || string(b) != content {
			t.Errorf("%s: pre-image holds %q, %v", rel, b, err)
		}
	}
}
