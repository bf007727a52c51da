// Command floor measures the floor under deleting a tree ckfs never
// captured: before any file of it may go, its pre-image must be read,
// hashed, compressed, written to the store and made durable
// (docs/format.md, section 4 rule 3). It does that work with ckfs's own
// store code and nothing else — no FUSE, no timeline — the way a batch of
// pre-images does it (capture/prefetch.go: up to 1,024 files a batch, on
// every CPU, one pack per batch; and as it did before packs, an object
// file each and one Sync of the store per batch), side by side with a native
// rm -rf of the same tree, each run on a fresh copy, rounds interleaved.
//
//	go run ./bench/floor [-n 3] [-only "no sync,then rm"]
//
// A FUSE file system that keeps pre-images pays at least the plain FUSE
// cost of the delete plus what this measures, unless the two overlap.
package main

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ckfs-dev/ckfs/bench/internal/benchkit"
	"github.com/ckfs-dev/ckfs/cas"
)

var (
	runs = flag.Int("n", 3, "runs per row; the median is reported")
	only = flag.String("only", "", "comma-separated rows to run besides native rm -rf (default all)")
)

// batchFiles is the largest batch of pre-images capture takes at once.
const batchFiles = 1024

type row struct {
	name    string
	prepare func(store string) // untimed, before the run
	run     func(tree, store string)
}

func main() {
	flag.Parse()
	work, done := benchkit.TempDir("ckfs-floor-")
	defer done()
	tarball := filepath.Join(work, "src.tar")
	sh("tar cf " + tarball + " -C " + benchkit.GoRoot() + " src")
	rows := []row{
		{"rm -rf (native)", nil, func(tree, _ string) { sh("rm -rf " + tree) }},
		{"read and hash every file", nil, func(tree, _ string) { batches(tree, hashFile, nil) }},
		{"store every file, no sync", nil, func(tree, store string) { storeTree(tree, store, false) }},
		{"store every file, a Sync per 1,024", nil, func(tree, store string) { storeTree(tree, store, true) }},
		// A store in use for a while has most of its 65,536 shard
		// directories already; a fresh one makes one for nearly every
		// object.
		{"the same, every shard directory made before", allShards, func(tree, store string) { storeTree(tree, store, true) }},
		{"store every file, a Sync per 1,024, then rm -rf", nil, func(tree, store string) {
			storeTree(tree, store, true)
			sh("rm -rf " + tree)
		}},
		// What capture does since packs: a batch is one pack file.
		{"store every file in a pack per 1,024", nil, func(tree, store string) { packTree(tree, store) }},
		{"store every file in a pack per 1,024, then rm -rf", nil, func(tree, store string) {
			packTree(tree, store)
			sh("rm -rf " + tree)
		}},
	}
	// The native rm -rf always runs: every ratio is to it.
	rows = append(rows[:1:1], benchkit.Select(rows[1:], *only, func(r row) string { return r.name })...)
	ts := make([][]time.Duration, len(rows))
	files := 0
	for r := range *runs {
		for k := range rows {
			i := (r + k) % len(rows)
			dir := filepath.Join(work, "run")
			benchkit.Check(os.Mkdir(dir, 0o755))
			sh("tar xf " + tarball + " -C " + dir)
			tree, store := filepath.Join(dir, "src"), filepath.Join(dir, "store")
			files = count(tree)
			if rows[i].prepare != nil {
				rows[i].prepare(store)
			}
			sh("sync")
			start := time.Now()
			rows[i].run(tree, store)
			ts[i] = append(ts[i], time.Since(start))
			benchkit.Check(os.RemoveAll(dir))
		}
	}
	fmt.Printf("pre-image floor — %s; %d files, median of %d runs, seconds (ratio to native rm -rf)\n\n", benchkit.Machine(), files, *runs)
	fmt.Println("| work | seconds |")
	fmt.Println("|---|---|")
	base := benchkit.Median(append([]time.Duration(nil), ts[0]...))
	for i, rw := range rows {
		m := benchkit.Median(ts[i])
		fmt.Printf("| %s | %.2f (%.2f×) |\n", rw.name, m.Seconds(), m.Seconds()/base.Seconds())
	}
}

// storeTree stores every regular file under tree in a fresh store, in
// batches on every CPU, each batch synced when sync is set.
func storeTree(tree, dir string, sync bool) {
	s, err := cas.Open(dir, nil)
	benchkit.Check(err)
	var after func()
	if sync {
		after = func() { benchkit.Check(s.Sync()) }
	}
	batches(tree, func(p string) {
		data, err := os.ReadFile(p)
		benchkit.Check(err)
		_, _, err = s.PutDeferred(data)
		benchkit.Check(err)
	}, after)
}

// packTree stores every regular file under tree in a fresh store, a pack
// per batch, each committed (made durable) once the batch is through.
func packTree(tree, dir string) {
	s, err := cas.Open(dir, nil)
	benchkit.Check(err)
	var b cas.Batch
	next := func() {
		if b != nil {
			benchkit.Check(b.Commit())
		}
		b = s.NewPack()
	}
	next()
	batches(tree, func(p string) {
		data, err := os.ReadFile(p)
		benchkit.Check(err)
		_, _, err = b.Put(data)
		benchkit.Check(err)
	}, next)
}

// batches calls f on every regular file under tree, batchFiles at a time
// on every CPU, and after (if set) once each batch is through.
func batches(tree string, f func(p string), after func()) {
	var paths []string
	flush := func() {
		parallel(paths, f)
		paths = paths[:0]
		if after != nil {
			after()
		}
	}
	each(tree, func(p string) {
		if paths = append(paths, p); len(paths) == batchFiles {
			flush()
		}
	})
	flush()
}

// allShards makes every shard directory of a store at dir.
func allShards(dir string) {
	for a := range 256 {
		for b := range 256 {
			benchkit.Check(os.MkdirAll(filepath.Join(dir, "objects", fmt.Sprintf("%02x", a), fmt.Sprintf("%02x", b)), 0o700))
		}
	}
}

// each calls f on every regular file under tree, in walk order.
func each(tree string, f func(p string)) {
	benchkit.Check(filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			f(p)
		}
		return err
	}))
}

func hashFile(p string) {
	data, err := os.ReadFile(p)
	benchkit.Check(err)
	cas.Sum(data)
}

// parallel runs f on every path, on as many goroutines as there are CPUs.
func parallel(paths []string, f func(string)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(paths)) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(paths); i = int(next.Add(1)) - 1 {
				f(paths[i])
			}
		})
	}
	wg.Wait()
}

func count(tree string) int {
	n := 0
	each(tree, func(string) { n++ })
	return n
}

func sh(cmd string) {
	if out, err := exec.Command("sh", "-c", cmd).CombinedOutput(); err != nil {
		benchkit.Fatalf("%s: %v\n%s", cmd, err, strings.TrimSpace(string(out)))
	}
}
