package capture_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ckfs-dev/ckfs/capture"
	"github.com/ckfs-dev/ckfs/index"
	"golang.org/x/sys/unix"
)

// BenchmarkCheckRecorded measures the check every mount makes, at 100,000
// recorded paths, none changed (the common case: one lstat each), beside
// its floor, a plain lstat of every path by name from the same process:
//
//	go test ./capture -run - -bench CheckRecorded -benchtime 3x
func BenchmarkCheckRecorded(b *testing.B) {
	const n = 100_000
	root := b.TempDir()
	var recs []index.Record
	for i := range n {
		rel := fmt.Sprintf("d%03d/f%05d.txt", i/1000, i)
		p := filepath.Join(root, rel)
		if i%1000 == 0 {
			os.MkdirAll(filepath.Dir(p), 0o755)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		var s unix.Stat_t
		unix.Lstat(p, &s)
		st := index.State{Hash: index.Hash(fmt.Sprintf("blake3:%064x", 1)), Size: s.Size, MTime: s.Mtim.Nano(), Mode: uint32(s.Mode) & 0o7777, Type: index.TypeFile, Owner: index.OwnerOf(s.Uid, s.Gid)}
		recs = append(recs, index.Record{V: 1, Seq: uint64(i + 1), Kind: index.KindOutside, Image: index.ImageAfter, Path: rel, State: &st})
	}
	b.Run("lstat-floor", func(b *testing.B) {
		for b.Loop() {
			var s unix.Stat_t
			for i := range recs {
				unix.Lstat(filepath.Join(root, recs[i].Path), &s)
			}
		}
	})
	b.Run("check", func(b *testing.B) {
		store := b.TempDir()
		tl, _, err := index.OpenWriter(store, index.WriterOptions{})
		if err != nil {
			b.Fatal(err)
		}
		defer tl.Close()
		fd, err := os.Open(root)
		if err != nil {
			b.Fatal(err)
		}
		defer fd.Close()
		for b.Loop() {
			rec, err := capture.New(capture.Options{Timeline: tl, Source: capture.NewDirSource(int(fd.Fd())), History: recs})
			if err != nil {
				b.Fatal(err)
			}
			c, err := rec.CheckRecorded()
			if err != nil || c.Found != 0 || c.Read != 0 {
				b.Fatalf("%+v %v", c, err)
			}
			rec.Close()
		}
	})
}
