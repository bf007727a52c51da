package index_test

import (
	"path/filepath"
	"testing"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
)

// Two successive edits of one file, each in its own window, give four
// records (before, after, before, after) and three distinct objects: the
// after of the first edit is the before of the second and is stored once.
func TestTwoEditsFourRecordsThreeObjects(t *testing.T) {
	dir := t.TempDir()
	s, err := cas.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	w, _, err := index.OpenWriter(dir, index.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	image := func(kind index.Kind, win string, content string) *index.Record {
		h, _, err := s.Put([]byte(content))
		if err != nil {
			t.Fatal(err)
		}
		return &index.Record{Kind: kind, Window: win, Path: "main.go", State: &index.State{
			Hash: h, Size: int64(len(content)), Mode: 0o644, Type: index.TypeFile}}
	}
	versions := []string{"v0\n", "v1\n", "v2\n"}
	for i, win := range []string{"w1", "w2"} {
		err := w.Append(&index.Record{Kind: index.KindOpen, Window: win},
			image(index.KindBefore, win, versions[i]),
			image(index.KindAfter, win, versions[i+1]),
			&index.Record{Kind: index.KindClose, Window: win})
		if err != nil {
			t.Fatal(err)
		}
	}
	recs, _, err := index.Load(filepath.Join(dir, index.TimelineFile))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []index.Kind
	for _, r := range recs {
		if r.IsImage() {
			kinds = append(kinds, r.Kind)
		}
	}
	if len(kinds) != 4 || kinds[0] != index.KindBefore || kinds[1] != index.KindAfter || kinds[2] != index.KindBefore || kinds[3] != index.KindAfter {
		t.Errorf("image records %v, want before after before after", kinds)
	}
	objects := 0
	s.Walk(func(cas.Info) error { objects++; return nil })
	if objects != 3 {
		t.Errorf("%d objects, want 3", objects)
	}
}
