package cas

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestSweepKeepsWhatIsPutDuringIt(t *testing.T) {
	l, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	a, _, _ := l.Put([]byte("a"))
	b, _, _ := l.Put([]byte("b"))
	s, err := l.BeginSweep(-time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.BeginSweep(-time.Hour); err != ErrSweepActive {
		t.Errorf("second sweep: %v, want ErrSweepActive", err)
	}
	l.Put([]byte("a")) // a dedup hit: the object exists and is named again
	if ok, err := s.Delete(a); ok || err != nil {
		t.Errorf("Delete(a) after it was put again = %v, %v; want kept", ok, err)
	}
	if ok, err := s.Delete(b); !ok || err != nil {
		t.Errorf("Delete(b) = %v, %v; want deleted", ok, err)
	}
	if err := s.SyncDirs([]Hash{b}); err != nil {
		t.Fatal(err)
	}
	s.End()
	if ok, _ := l.Has(a); !ok {
		t.Error("a was deleted")
	}
	if ok, _ := l.Has(b); ok {
		t.Error("b survived")
	}
}

func TestSweepGrace(t *testing.T) {
	l, _ := Open(t.TempDir(), nil)
	c, _, _ := l.Put([]byte("c"))
	s, _ := l.BeginSweep(DefaultGrace)
	defer s.End()
	if ok, err := s.Delete(c); ok || err != nil {
		t.Errorf("Delete of an object written just now = %v, %v; want kept", ok, err)
	}
}

// TestSweepRace: writers store contents that already exist while a sweep
// deletes all of them. Every Put that returned must leave its object in
// place; without the touched set, a dedup hit racing a deletion loses it.
func TestSweepRace(t *testing.T) {
	for round := range 20 {
		l, _ := Open(t.TempDir(), nil)
		var hs []Hash
		for i := range 64 {
			h, _, _ := l.PutDeferred(fmt.Appendf(nil, "content %d %d", round, i))
			hs = append(hs, h)
		}
		s, _ := l.BeginSweep(-time.Hour)
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range hs {
				l.Put(fmt.Appendf(nil, "content %d %d", round, i))
			}
		}()
		go func() {
			defer wg.Done()
			for _, h := range hs {
				s.Delete(h)
			}
		}()
		wg.Wait()
		s.End()
		for i, h := range hs {
			if ok, _ := l.Has(h); !ok {
				t.Fatalf("round %d: content %d was put during the sweep and deleted", round, i)
			}
		}
	}
}
