package remote

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/internal/testenv"
	"github.com/minio/minio-go/v7"
)

// sourceLike returns n bytes that compress about as source code does.
func sourceLike(rng *rand.Rand, n int) []byte {
	words := []string{"func", "return", "err", "if", "nil", "for", "range", "ctx", "the", "value", "string", "int", "struct", "{", "}", "(", ")", "\n\t", "\n", "// ", ":=", "x", "y"}
	var b bytes.Buffer
	for b.Len() < n {
		b.WriteString(words[rng.IntN(len(words))])
		if rng.IntN(4) == 0 {
			fmt.Fprintf(&b, "%d", rng.IntN(100000))
		}
		b.WriteByte(' ')
	}
	return b.Bytes()[:n]
}

// BenchmarkFleet measures, against a real SeaweedFS on this machine, side
// by side in one run: a push of a store's objects against the raw S3
// client uploading the same object files with as many workers, and a
// restore of a 10,000-file checkpoint against the raw client downloading
// the same objects.
//
//	go test -run XXX -bench Fleet -benchtime 3x ./remote
func BenchmarkFleet(b *testing.B) {
	endpoint := testenv.SeaweedFS(b, "bench")
	b.Setenv("AWS_ACCESS_KEY_ID", "ckfs-test")
	b.Setenv("AWS_SECRET_ACCESS_KEY", "ckfs-test")
	rng := rand.New(rand.NewPCG(1, 2))
	prefixes := atomic.Int64{}
	bucket := func(b *testing.B) *Bucket {
		bk, err := Open(Remote{URL: fmt.Sprintf("s3://bench/run%d", prefixes.Add(1)), Endpoint: endpoint})
		if err != nil {
			b.Fatal(err)
		}
		return bk
	}

	// 2,000 objects of 4-32 KB in a store, each named by a record.
	s := newTestStore(b)
	var total int64
	for i := range 2000 {
		c := string(sourceLike(rng, 4096+rng.IntN(28*1024)))
		s.window(fmt.Sprintf("f%04d.go", i), "", c)
	}
	var raws [][]byte
	var hashes []cas.Hash
	s.local.Walk(func(i cas.Info) error {
		raw, _ := os.ReadFile(s.local.Path(i.Hash))
		raws, hashes = append(raws, raw), append(hashes, i.Hash)
		total += int64(len(raw))
		return nil
	})
	b.Run("upload/ckfs-push", func(b *testing.B) {
		b.SetBytes(total)
		for b.Loop() {
			bk := bucket(b)
			if _, err := Push(context.Background(), bk, PushOptions{Store: s.dir, Workspace: "w", Root: s.root, Excluded: func(string) bool { return false }}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("upload/raw-client", func(b *testing.B) {
		b.SetBytes(total)
		for b.Loop() {
			bk := bucket(b)
			err := forEach(context.Background(), len(raws), func(i int) error {
				_, err := bk.c.PutObject(context.Background(), bk.bucket, bk.prefix+objectKey(hashes[i]), bytes.NewReader(raws[i]), int64(len(raws[i])), minio.PutObjectOptions{DisableMultipart: true})
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})

	// A checkpoint of 10,000 files of about 2 KB: the baseline of a tree.
	big := newTestStore(b)
	for i := range 10000 {
		d := filepath.Join(big.root, fmt.Sprintf("d%02d", i/100))
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, fmt.Sprintf("f%d.go", i)), sourceLike(rng, 1024+rng.IntN(2048)), 0o644)
	}
	bk := bucket(b)
	if _, err := Push(context.Background(), bk, PushOptions{Store: big.dir, Workspace: "big", Root: big.root, Excluded: func(string) bool { return false }}); err != nil {
		b.Fatal(err)
	}
	head, _, _ := bk.readHead(context.Background(), "big")
	data, _ := bk.getObject(context.Background(), head.Baseline.Object)
	es, _ := ParseBaseline(data)
	var keys []string
	for _, e := range es {
		if h, err := cas.ParseHash(string(e.Hash)); err == nil {
			keys = append(keys, objectKey(h))
		}
	}
	b.Run("restore-10k/ckfs-restore", func(b *testing.B) {
		for b.Loop() {
			dir := filepath.Join(b.TempDir(), "out")
			if _, err := Restore(context.Background(), bk, RestoreOptions{Workspace: "big", Dir: dir}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("restore-10k/raw-client-download", func(b *testing.B) {
		for b.Loop() {
			err := forEach(context.Background(), len(keys), func(i int) error {
				_, _, err := bk.get(context.Background(), keys[i], maxGet)
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}
