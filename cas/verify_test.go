package cas_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/ckfs-dev/ckfs/cas"
)

// flipByte damages the object file of h in place, the way a disk error or
// a stray write would: the name stays, one byte of the body changes.
func flipByte(t *testing.T, s *cas.Local, h cas.Hash) {
	t.Helper()
	p := s.Path(h)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 0x01
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o444); err != nil {
		t.Fatal(err)
	}
}

// A dedup hit never trusts a damaged object: storing the same content again
// replaces the corrupt file with good bytes, whichever way it is stored.
func TestDedupHitReplacesCorruptObject(t *testing.T) {
	content := bytes.Repeat([]byte("the user's only copy of this line\n"), 200)
	puts := map[string]func(s *cas.Local) (cas.Hash, bool, error){
		"Put":         func(s *cas.Local) (cas.Hash, bool, error) { return s.Put(content) },
		"PutDeferred": func(s *cas.Local) (cas.Hash, bool, error) { return s.PutDeferred(content) },
		"PutReader":   func(s *cas.Local) (cas.Hash, bool, error) { return s.PutReader(bytes.NewReader(content)) },
	}
	for name, put := range puts {
		t.Run(name, func(t *testing.T) {
			s := newLocal(t, nil)
			h, _, err := s.Put(content)
			if err != nil {
				t.Fatal(err)
			}
			flipByte(t, s, h)
			if err := s.Verify(h); !errors.Is(err, cas.ErrCorrupt) {
				t.Fatalf("Verify of a flipped object = %v, want ErrCorrupt", err)
			}
			h2, isNew, err := put(s)
			if err != nil || h2 != h {
				t.Fatalf("%s = %v, %v", name, h2, err)
			}
			if !isNew {
				t.Errorf("%s reported a dedup hit on a corrupt object", name)
			}
			if err := s.Sync(); err != nil {
				t.Fatal(err)
			}
			got, err := s.Get(h)
			if err != nil || !bytes.Equal(got, content) {
				t.Fatalf("after %s the object still does not verify: %v", name, err)
			}
			if fi, err := os.Stat(s.Path(h)); err != nil || fi.Mode().Perm() != 0o444 {
				t.Errorf("replaced object mode = %v, %v; want 0444", fi.Mode(), err)
			}
		})
	}
}

// The trust cache never outlives a change to the object file: an object
// verified once and damaged afterwards is caught on the next dedup hit.
func TestTrustCacheSeesLaterDamage(t *testing.T) {
	s := newLocal(t, nil)
	content := []byte("verified once, damaged later, stored again\n")
	h, _, err := s.Put(content)
	if err != nil {
		t.Fatal(err)
	}
	if _, isNew, _ := s.Put(content); isNew {
		t.Fatal("an intact object was rewritten")
	}
	flipByte(t, s, h)
	if _, isNew, err := s.Put(content); err != nil || !isNew {
		t.Fatalf("Put after damage: isNew=%v err=%v; want the corrupt object replaced", isNew, err)
	}
	if err := s.Verify(h); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyMissing(t *testing.T) {
	s := newLocal(t, nil)
	if err := s.Verify(cas.Sum([]byte("never stored"))); !errors.Is(err, cas.ErrNotFound) {
		t.Fatalf("Verify of a missing object = %v, want ErrNotFound", err)
	}
}

// countingReader counts the object reads a Local makes.
type countingReader struct {
	r io.Reader
	n *int
}

func (c countingReader) Read(p []byte) (int, error) { *c.n++; return c.r.Read(p) }

// Content this Local wrote itself is trusted on the next dedup hit without
// reading the object back (the trust cache must match the file as it is
// once its temp name is gone), whichever way it was stored.
func TestOwnObjectsAreNotReadBack(t *testing.T) {
	reads := 0
	s := newLocal(t, &cas.Options{WrapReader: func(r io.Reader) io.Reader { return countingReader{r, &reads} }})
	for i, put := range []func([]byte) (cas.Hash, bool, error){
		s.Put, s.PutDeferred, func(b []byte) (cas.Hash, bool, error) { return s.PutReader(bytes.NewReader(b)) },
	} {
		content := bytes.Repeat([]byte{byte('a' + i)}, 3<<20)
		if _, isNew, err := put(content); err != nil || !isNew {
			t.Fatalf("store %d: %v %v", i, isNew, err)
		}
		reads = 0
		if _, isNew, err := s.Put(content); err != nil || isNew {
			t.Fatalf("dedup %d: %v %v", i, isNew, err)
		}
		if reads != 0 {
			t.Errorf("store %d: a dedup hit on an object this Local wrote read it back (%d reads)", i, reads)
		}
	}
}
