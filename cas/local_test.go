package cas_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/cas/castest"
)

func newLocal(t *testing.T, opts *cas.Options) *cas.Local {
	t.Helper()
	s, err := cas.Open(filepath.Join(t.TempDir(), "store"), opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLocalConformance(t *testing.T) {
	castest.Run(t, func(t *testing.T) cas.Store { return newLocal(t, nil) })
}

// Where the store's file system cannot rename without replacing, objects
// are hard-linked into place: the same contract.
func TestLocalConformanceLinkOnly(t *testing.T) {
	castest.Run(t, func(t *testing.T) cas.Store {
		s := newLocal(t, nil)
		cas.LinkOnly(s)
		return s
	})
}

// The conformance suite also holds for a FaultyStore with no fault armed:
// the wrapper itself must be transparent.
func TestFaultyStoreConformance(t *testing.T) {
	castest.Run(t, func(t *testing.T) cas.Store { return &castest.FaultyStore{Store: newLocal(t, nil)} })
}

func TestModes(t *testing.T) {
	s := newLocal(t, nil)
	h, _, err := s.Put([]byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{s.Dir(), filepath.Join(s.Dir(), "objects"), s.TempDir(), filepath.Dir(s.Path(h))} {
		st, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o700 {
			t.Errorf("%s has mode %v, want 0700", d, st.Mode().Perm())
		}
	}
	st, err := os.Stat(s.Path(h))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o444 {
		t.Errorf("object has mode %v, want 0444", st.Mode().Perm())
	}
	if !strings.HasSuffix(s.Path(h), filepath.Join("objects", h.Hex()[:2], h.Hex()[2:4], h.Hex())) {
		t.Errorf("object path %s is not sharded as objects/ab/cd/<hex>", s.Path(h))
	}
}

// corruptFile rewrites an object file with fn applied to its bytes.
func corruptFile(t *testing.T, path string, fn func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o644)
	if err := os.WriteFile(path, fn(b), 0o444); err != nil {
		t.Fatal(err)
	}
}

func TestCorruptionIsAnErrorNeverData(t *testing.T) {
	cases := map[string]func([]byte) []byte{
		"flip body bit":   func(b []byte) []byte { b[len(b)-1] ^= 1; return b },
		"flip header bit": func(b []byte) []byte { b[1] ^= 1; return b },
		"truncate":        func(b []byte) []byte { return b[:len(b)/2] },
		"truncate header": func(b []byte) []byte { return b[:7] },
		"grow size":       func(b []byte) []byte { b[8]++; return b },
		"append":          func(b []byte) []byte { return append(b, 'x') },
	}
	for name, fn := range cases {
		for content, data := range map[string][]byte{"text": castest.Contents(9)["text-4k"], "random": castest.Contents(9)["random-4k"]} {
			t.Run(name+"/"+content, func(t *testing.T) {
				s := newLocal(t, nil)
				h, _, err := s.Put(data)
				if err != nil {
					t.Fatal(err)
				}
				corruptFile(t, s.Path(h), fn)
				got, err := s.Get(h)
				if !errors.Is(err, cas.ErrCorrupt) || got != nil {
					t.Fatalf("Get of corrupt object: %d bytes, error %v; want no bytes and ErrCorrupt", len(got), err)
				}
				if !strings.Contains(err.Error(), h.String()) {
					t.Errorf("error %q does not name the object", err)
				}
				rc, err := s.Open(h)
				if err == nil {
					_, err = io.ReadAll(rc)
					rc.Close()
				}
				if !errors.Is(err, cas.ErrCorrupt) {
					t.Errorf("streamed read of corrupt object: error %v, want ErrCorrupt", err)
				}
			})
		}
	}
}

func TestFaultsSurface(t *testing.T) {
	f := &castest.Faults{}
	s := newLocal(t, f.Options())
	data := castest.Contents(10)
	assertEmpty := func(what string) {
		t.Helper()
		n := 0
		s.Walk(func(cas.Info) error { n++; return nil })
		tmp, _ := os.ReadDir(s.TempDir())
		if n != 0 || len(tmp) != 0 {
			t.Errorf("%s left %d objects and %d temp files", what, n, len(tmp))
		}
	}

	f.FailWrites(true)
	if _, _, err := s.Put(data["text-4k"]); !errors.Is(err, castest.ErrInjected) {
		t.Errorf("Put with failing writes: %v", err)
	}
	if _, _, err := s.PutReader(bytes.NewReader(data["random-3m"])); !errors.Is(err, castest.ErrInjected) {
		t.Errorf("PutReader with failing writes: %v", err)
	}
	assertEmpty("failing writes")
	f.FailWrites(false)

	f.ShortWrites(true)
	if _, _, err := s.Put(data["text-4k"]); !errors.Is(err, io.ErrShortWrite) {
		t.Errorf("Put with short writes: %v", err)
	}
	if _, _, err := s.PutReader(bytes.NewReader(data["text-3m"])); !errors.Is(err, io.ErrShortWrite) {
		t.Errorf("PutReader with short writes: %v", err)
	}
	assertEmpty("short writes")
	f.ShortWrites(false)

	for _, name := range []string{"text-4k", "random-4k", "text-3m"} {
		h, _, err := s.Put(data[name])
		if err != nil {
			t.Fatal(err)
		}
		f.FlipReads(true)
		if got, err := s.Get(h); !errors.Is(err, cas.ErrCorrupt) || got != nil {
			t.Errorf("%s: Get with flipped bits: %d bytes, %v", name, len(got), err)
		}
		rc, err := s.Open(h)
		if err == nil {
			_, err = io.ReadAll(rc)
			rc.Close()
		}
		if !errors.Is(err, cas.ErrCorrupt) {
			t.Errorf("%s: Open with flipped bits: %v", name, err)
		}
		f.FlipReads(false)
		if _, err := s.Get(h); err != nil {
			t.Errorf("%s: Get after faults cleared: %v", name, err)
		}
	}
}

// Streaming a large file must not hold it in memory: the bytes allocated
// while storing 256 MiB stay far below its size.
func TestPutReaderStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("stores 256 MiB")
	}
	s := newLocal(t, nil)
	const size = 256 << 20
	src := io.LimitReader(&textGen{}, size)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	h, _, err := s.PutReader(src)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > size/4 {
		t.Errorf("storing %d MiB allocated %d MiB: content is being buffered", size>>20, alloc>>20)
	}
	info, err := s.Stat(h)
	if err != nil || info.Size != size {
		t.Fatalf("Stat: %+v %v", info, err)
	}
	rc, err := s.Open(h)
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, rc)
	rc.Close()
	if err != nil || n != size {
		t.Fatalf("streamed back %d bytes, %v", n, err)
	}
}

// textGen produces endless, slowly varying source-like text.
type textGen struct{ n int }

func (g *textGen) Read(p []byte) (int, error) {
	const line = "\tif err := frobnicate(ctx, x); err != nil { return fmt.Errorf(\"frob %d: %w\", i, err) }\n"
	for i := range p {
		p[i] = line[g.n%len(line)]
		if g.n%4099 == 0 {
			p[i] = byte('a' + g.n%26)
		}
		g.n++
	}
	return len(p), nil
}

// Two processes storing the same content at the same time both succeed and
// leave one valid object.
func TestTwoProcessesSameContent(t *testing.T) {
	if os.Getenv("CKFS_CAS_HELPER") != "" {
		return
	}
	dir := filepath.Join(t.TempDir(), "store")
	if _, err := cas.Open(dir, nil); err != nil {
		t.Fatal(err)
	}
	var cmds []*exec.Cmd
	for range 4 {
		c := exec.Command(os.Args[0], "-test.run=TestHelperPut$")
		c.Env = append(os.Environ(), "CKFS_CAS_HELPER="+dir)
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, c)
		t.Cleanup(func() {
			if t.Failed() {
				t.Log(out.String())
			}
		})
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("helper process failed: %v", err)
		}
	}
	s, _ := cas.Open(dir, nil)
	n := 0
	s.Walk(func(i cas.Info) error {
		n++
		if _, err := s.Get(i.Hash); err != nil {
			t.Error(err)
		}
		return nil
	})
	if n != 2 {
		t.Errorf("store holds %d objects, want 2", n)
	}
	if tmp, _ := os.ReadDir(s.TempDir()); len(tmp) != 0 {
		t.Errorf("%d temp files left", len(tmp))
	}
}

func TestHelperPut(t *testing.T) {
	dir := os.Getenv("CKFS_CAS_HELPER")
	if dir == "" {
		t.Skip("helper for TestTwoProcessesSameContent")
	}
	s, err := cas.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := castest.Contents(42)
	for range 20 {
		if _, _, err := s.Put(c["random-3m"]); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.PutReader(bytes.NewReader(c["text-3m"])); err != nil {
			t.Fatal(err)
		}
	}
}

func TestParseHash(t *testing.T) {
	h := cas.Sum([]byte("x"))
	if p, err := cas.ParseHash(h.String()); err != nil || p != h {
		t.Fatalf("round trip: %v %v", p, err)
	}
	for _, bad := range []string{"", "blake3:", "sha256:" + h.Hex(), "blake3:" + strings.ToUpper(h.Hex()), "blake3:" + h.Hex()[:63], h.Hex(), "blake3:" + h.Hex() + "00", "blake3:zz" + h.Hex()[2:]} {
		if _, err := cas.ParseHash(bad); err == nil {
			t.Errorf("ParseHash(%q) accepted", bad)
		}
	}
}

func TestWalkIgnoresStrayFiles(t *testing.T) {
	s := newLocal(t, nil)
	h, _, _ := s.Put([]byte("a"))
	os.WriteFile(filepath.Join(s.Dir(), "objects", "README"), []byte("x"), 0o600)
	var seen []cas.Hash
	if err := s.Walk(func(i cas.Info) error { seen = append(seen, i.Hash); return nil }); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	if len(seen) != 1 || seen[0] != h {
		t.Errorf("Walk saw %v", seen)
	}
}

// Every way a put ends — a new object, one already there, a corrupt one
// replaced, a failed write — removes its temp file.
func TestNoTempFileLeft(t *testing.T) {
	t.Run("rename", func(t *testing.T) { testNoTempFileLeft(t, false) })
	t.Run("link", func(t *testing.T) { testNoTempFileLeft(t, true) })
}

func testNoTempFileLeft(t *testing.T, linkOnly bool) {
	f := &castest.Faults{}
	s := newLocal(t, f.Options())
	if linkOnly {
		cas.LinkOnly(s)
	}
	data := castest.Contents(11)
	puts := map[string]func([]byte) (cas.Hash, bool, error){
		"Put":         s.Put,
		"PutDeferred": s.PutDeferred,
		"PutReader":   func(b []byte) (cas.Hash, bool, error) { return s.PutReader(bytes.NewReader(b)) },
	}
	for name, put := range puts {
		for _, content := range []string{"text-4k", "text-3m"} {
			check := func(what string) {
				t.Helper()
				if tmp, _ := os.ReadDir(s.TempDir()); len(tmp) != 0 {
					t.Errorf("%s of %s, %s: %d temp files left", name, content, what, len(tmp))
				}
			}
			f.FailWrites(true)
			if _, _, err := put(data[content]); !errors.Is(err, castest.ErrInjected) {
				t.Errorf("%s with failing writes: %v", name, err)
			}
			check("failing writes")
			f.FailWrites(false)
			h, _, err := put(data[content])
			if err != nil {
				t.Fatal(err)
			}
			check("new")
			if _, isNew, err := put(data[content]); err != nil || isNew {
				t.Fatalf("%s again: new %v, %v", name, isNew, err)
			}
			check("already there")
			corruptFile(t, s.Path(h), func(b []byte) []byte { b[len(b)-1] ^= 1; return b })
			if _, isNew, err := put(data[content]); err != nil || !isNew {
				t.Fatalf("%s over a corrupt object: new %v, %v", name, isNew, err)
			}
			check("corrupt replaced")
			if err := s.Verify(h); err != nil {
				t.Errorf("%s over a corrupt object: %v", name, err)
			}
			if err := s.Delete(h); err != nil {
				t.Fatal(err)
			}
		}
	}
}
