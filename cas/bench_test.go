package cas_test

import (
	"bytes"
	"encoding/binary"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/klauspost/compress/zstd"
	"github.com/zeebo/blake3"
)

// sourceText returns n bytes of real Go source from the toolchain's own tree.
func sourceText(b *testing.B, n int) []byte {
	var buf bytes.Buffer
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skip("no go command: ", err)
	}
	root := filepath.Join(strings.TrimSpace(string(goroot)), "src")
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || buf.Len() >= n {
			return fs.SkipAll
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			data, _ := os.ReadFile(p)
			buf.Write(data)
		}
		return nil
	})
	if buf.Len() < n {
		b.Skipf("only %d bytes of Go source under %s", buf.Len(), root)
	}
	return buf.Bytes()[:n]
}

func randomBytes(n int) []byte {
	r := rand.New(rand.NewPCG(7, 7))
	out := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(out[i:], r.Uint64())
	}
	return out
}

var benchSizes = []struct {
	name string
	n    int
}{{"4K", 4 << 10}, {"64K", 64 << 10}, {"1M", 1 << 20}, {"16M", 16 << 20}}

// BenchmarkStore measures Put and Get next to the raw cost of the same work
// (BLAKE3 plus zstd, zstd decoding plus BLAKE3) on the same inputs, so the
// store's overhead reads as a ratio: compare Put/x with RawPut/x and Get/x
// with RawGet/x (bench/cas prints the ratios).
func BenchmarkStore(b *testing.B) {
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)), zstd.WithEncoderCRC(false))
	dec, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0))
	for _, kind := range []string{"text", "random"} {
		for _, sz := range benchSizes {
			var data []byte
			if kind == "text" {
				data = sourceText(b, sz.n)
			} else {
				data = randomBytes(sz.n)
			}
			name := kind + "/" + sz.name
			b.Run("RawPut/"+name, func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				buf := bytes.Clone(data)
				var dst []byte
				for i := 0; b.Loop(); i++ {
					binary.LittleEndian.PutUint64(buf, uint64(i))
					_ = blake3.Sum256(buf)
					dst = enc.EncodeAll(buf, dst[:0])
				}
			})
			b.Run("Put/"+name, func(b *testing.B) {
				s, err := cas.Open(b.TempDir(), nil)
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(data)))
				buf := bytes.Clone(data)
				for i := 0; b.Loop(); i++ {
					binary.LittleEndian.PutUint64(buf, uint64(i))
					if _, _, err := s.Put(buf); err != nil {
						b.Fatal(err)
					}
				}
			})
			comp := enc.EncodeAll(data, nil)
			b.Run("RawGet/"+name, func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				var dst []byte
				for b.Loop() {
					var err error
					dst, err = dec.DecodeAll(comp, dst[:0])
					if err != nil {
						b.Fatal(err)
					}
					_ = blake3.Sum256(dst)
				}
			})
			b.Run("Get/"+name, func(b *testing.B) {
				s, err := cas.Open(b.TempDir(), nil)
				if err != nil {
					b.Fatal(err)
				}
				h, _, err := s.Put(data)
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					if _, err := s.Get(h); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkDurable measures what makes objects durable: a Put of 4 KiB
// into a fresh shard (its directories are created and synced), and ten
// deferred objects made durable by one Sync, as a window of ten edited
// files ends. Run two builds of the store interleaved to compare a change
// to its syncs (bench/RESULTS.md, the checkpoint section).
func BenchmarkDurable(b *testing.B) {
	data := sourceText(b, 4<<10)
	b.Run("Put/new-shard", func(b *testing.B) {
		s, err := cas.Open(b.TempDir(), nil)
		if err != nil {
			b.Fatal(err)
		}
		buf := bytes.Clone(data)
		for i := 0; b.Loop(); i++ {
			binary.LittleEndian.PutUint64(buf, uint64(i))
			if _, _, err := s.Put(buf); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("PutDeferred10+Sync", func(b *testing.B) {
		s, err := cas.Open(b.TempDir(), nil)
		if err != nil {
			b.Fatal(err)
		}
		buf := bytes.Clone(data)
		for i := 0; b.Loop(); i++ {
			for j := range 10 {
				binary.LittleEndian.PutUint64(buf, uint64(i*10+j))
				if _, _, err := s.PutDeferred(buf); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.Sync(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkPutExisting measures a Put of content already stored by another
// process (a remount: the same tree written again), which reads and checks
// the stored copy before trusting it, for a 4 KiB source file stored as an
// object file and packed. RawVerify is the floor: reading and hashing the
// same bytes with nothing else.
func BenchmarkPutExisting(b *testing.B) {
	const n = 256
	data := make([][]byte, n)
	for i := range data {
		data[i] = sourceText(b, 4<<10)
		binary.LittleEndian.PutUint64(data[i], uint64(i))
	}
	b.Run("RawVerify", func(b *testing.B) {
		enc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
		dec, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
		comp := enc.EncodeAll(data[0], nil)
		var dst []byte
		for b.Loop() {
			dst, _ = dec.DecodeAll(comp, dst[:0])
			_ = blake3.Sum256(dst)
		}
	})
	for _, packed := range []bool{false, true} {
		name := "object"
		if packed {
			name = "packed"
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			s, err := cas.Open(dir, nil)
			if err != nil {
				b.Fatal(err)
			}
			put := s.Put
			var p cas.Batch
			if packed {
				p = s.NewPack()
				put = p.Put
			}
			for _, d := range data {
				if _, _, err := put(d); err != nil {
					b.Fatal(err)
				}
			}
			if p != nil {
				if err := p.Commit(); err != nil {
					b.Fatal(err)
				}
			}
			for i := 0; b.Loop(); i++ {
				if i%n == 0 {
					// Another process's store: nothing in it trusted yet.
					if s, err = cas.Open(dir, nil); err != nil {
						b.Fatal(err)
					}
				}
				if _, isNew, err := s.Put(data[i%n]); err != nil || isNew {
					b.Fatal(isNew, err)
				}
			}
		})
	}
}
