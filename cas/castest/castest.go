// Package castest holds the conformance suite that every cas.Store
// implementation must pass, and fault injectors that tests use to prove that
// I/O errors and corruption surface as errors rather than as data.
package castest

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/ckfs-dev/ckfs/cas"
)

// Run runs the conformance suite against stores made by newStore. Each
// subtest gets a fresh, empty store.
func Run(t *testing.T, newStore func(t *testing.T) cas.Store) {
	t.Run("RoundTrip", func(t *testing.T) { testRoundTrip(t, newStore(t)) })
	t.Run("Dedup", func(t *testing.T) { testDedup(t, newStore(t)) })
	t.Run("PutReaderMatchesPut", func(t *testing.T) { testPutReader(t, newStore(t)) })
	t.Run("Missing", func(t *testing.T) { testMissing(t, newStore(t)) })
	t.Run("StatWalkDelete", func(t *testing.T) { testStatWalkDelete(t, newStore(t)) })
	t.Run("ConcurrentSameContent", func(t *testing.T) { testConcurrent(t, newStore(t)) })
	t.Run("FailingReaderStoresNothing", func(t *testing.T) { testFailingReader(t, newStore(t)) })
}

// Contents returns test contents of many shapes: empty, tiny, compressible
// text, incompressible bytes, and sizes around the streaming threshold.
func Contents(seed uint64) map[string][]byte {
	r := rand.New(rand.NewPCG(seed, 1))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	text := func(n int) []byte {
		var b bytes.Buffer
		for b.Len() < n {
			b.WriteString("func f() int { return 42 } // a line of source text\n")
		}
		return b.Bytes()[:n]
	}
	return map[string][]byte{
		"empty":     {},
		"one":       {'x'},
		"text-4k":   text(4 << 10),
		"random-4k": random(4 << 10),
		"text-1m+1": text(1<<20 + 1),
		"random-3m": random(3 << 20),
		"text-3m":   text(3 << 20),
	}
}

func testRoundTrip(t *testing.T, s cas.Store) {
	for name, data := range Contents(1) {
		h, isNew, err := s.Put(data)
		if err != nil {
			t.Fatalf("%s: Put: %v", name, err)
		}
		if !isNew {
			t.Errorf("%s: first Put reported not new", name)
		}
		if h != cas.Sum(data) {
			t.Errorf("%s: Put returned %s, want %s", name, h, cas.Sum(data))
		}
		got, err := s.Get(h)
		if err != nil {
			t.Fatalf("%s: Get: %v", name, err)
		}
		if !bytes.Equal(got, data) {
			t.Errorf("%s: Get returned %d bytes that differ from the %d stored", name, len(got), len(data))
		}
		rc, err := s.Open(h)
		if err != nil {
			t.Fatalf("%s: Open: %v", name, err)
		}
		got, err = io.ReadAll(rc)
		rc.Close()
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s: Open stream: err %v, equal %v", name, err, bytes.Equal(got, data))
		}
		if err := s.Verify(h); err != nil {
			t.Errorf("%s: Verify of an intact object: %v", name, err)
		}
	}
	if err := s.Verify(cas.Sum([]byte("never stored"))); !errors.Is(err, cas.ErrNotFound) {
		t.Errorf("Verify of a missing object = %v, want ErrNotFound", err)
	}
}

func testDedup(t *testing.T, s cas.Store) {
	data := Contents(2)["text-4k"]
	h1, n1, err := s.Put(data)
	if err != nil {
		t.Fatal(err)
	}
	h2, n2, err := s.Put(bytes.Clone(data))
	if err != nil {
		t.Fatal(err)
	}
	h3, n3, err := s.PutReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if h1 != h2 || h2 != h3 || !n1 || n2 || n3 {
		t.Errorf("dedup: hashes %s %s %s new %v %v %v; want equal hashes, new only first", h1, h2, h3, n1, n2, n3)
	}
	count := 0
	s.Walk(func(cas.Info) error { count++; return nil })
	if count != 1 {
		t.Errorf("store holds %d objects after three puts of the same content, want 1", count)
	}
}

func testPutReader(t *testing.T, s cas.Store) {
	for name, data := range Contents(3) {
		h, _, err := s.PutReader(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: PutReader: %v", name, err)
		}
		if h != cas.Sum(data) {
			t.Errorf("%s: PutReader returned %s, want %s", name, h, cas.Sum(data))
		}
		got, err := s.Get(h)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s: Get after PutReader: err %v, equal %v", name, err, bytes.Equal(got, data))
		}
		info, err := s.Stat(h)
		if err != nil || info.Size != int64(len(data)) {
			t.Errorf("%s: Stat: %+v, %v; want size %d", name, info, err, len(data))
		}
	}
}

func testMissing(t *testing.T, s cas.Store) {
	h := cas.Sum([]byte("never stored"))
	if ok, err := s.Has(h); ok || err != nil {
		t.Errorf("Has(missing) = %v, %v", ok, err)
	}
	if _, err := s.Get(h); !errors.Is(err, cas.ErrNotFound) {
		t.Errorf("Get(missing) error %v, want ErrNotFound", err)
	}
	if _, err := s.Open(h); !errors.Is(err, cas.ErrNotFound) {
		t.Errorf("Open(missing) error %v, want ErrNotFound", err)
	}
	if _, err := s.Stat(h); !errors.Is(err, cas.ErrNotFound) {
		t.Errorf("Stat(missing) error %v, want ErrNotFound", err)
	}
	if err := s.Delete(h); !errors.Is(err, cas.ErrNotFound) {
		t.Errorf("Delete(missing) error %v, want ErrNotFound", err)
	}
}

func testStatWalkDelete(t *testing.T, s cas.Store) {
	want := map[cas.Hash]int64{}
	for _, data := range Contents(4) {
		h, _, err := s.Put(data)
		if err != nil {
			t.Fatal(err)
		}
		want[h] = int64(len(data))
	}
	got := map[cas.Hash]int64{}
	err := s.Walk(func(i cas.Info) error {
		if i.Stored <= 0 {
			t.Errorf("Walk: %s has stored size %d", i.Hash, i.Stored)
		}
		got[i.Hash] = i.Size
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("Walk saw %d objects, want %d", len(got), len(want))
	}
	for h, n := range want {
		if got[h] != n {
			t.Errorf("Walk: %s size %d, want %d", h, got[h], n)
		}
	}
	stop := errors.New("stop")
	if err := s.Walk(func(cas.Info) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("Walk did not return the callback's error: %v", err)
	}
	for h := range want {
		if err := s.Delete(h); err != nil {
			t.Fatalf("Delete %s: %v", h, err)
		}
		if ok, _ := s.Has(h); ok {
			t.Errorf("Has(%s) after Delete = true", h)
		}
	}
}

func testConcurrent(t *testing.T, s cas.Store) {
	data := Contents(5)["random-3m"]
	var wg sync.WaitGroup
	var mu sync.Mutex
	news := 0
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var h cas.Hash
			var isNew bool
			var err error
			if i%2 == 0 {
				h, isNew, err = s.Put(data)
			} else {
				h, isNew, err = s.PutReader(bytes.NewReader(data))
			}
			if err != nil {
				t.Errorf("concurrent Put %d: %v", i, err)
				return
			}
			if h != cas.Sum(data) {
				t.Errorf("concurrent Put %d: wrong hash", i)
			}
			mu.Lock()
			if isNew {
				news++
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if news != 1 {
		t.Errorf("%d concurrent puts reported a new object, want exactly 1", news)
	}
	got, err := s.Get(cas.Sum(data))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("Get after concurrent puts: %v", err)
	}
}

func testFailingReader(t *testing.T, s cas.Store) {
	boom := errors.New("disk went away")
	data := Contents(6)["random-3m"]
	r := io.MultiReader(bytes.NewReader(data[:2<<20]), &errReader{boom})
	if _, _, err := s.PutReader(r); !errors.Is(err, boom) {
		t.Fatalf("PutReader with failing reader: error %v, want %v", err, boom)
	}
	count := 0
	s.Walk(func(cas.Info) error { count++; return nil })
	if count != 0 {
		t.Errorf("a failed PutReader left %d objects", count)
	}
}

type errReader struct{ err error }

func (e *errReader) Read([]byte) (int, error) { return 0, e.err }
