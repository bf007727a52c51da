package capture

import (
	"errors"
	"path"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ckfs-dev/ckfs/index"
	"golang.org/x/sys/unix"
)

// Batched pre-images. The first change of a file ckfs has no durable record
// of costs a durable pre-image: a sync of its object and an fdatasync of the
// timeline, one file at a time. A tool that deletes or rewrites a directory
// of such files (rm -rf of a tree from before the mount, git checkout,
// sed -i over many files, a formatter) pays that per file. Once a period
// has taken prefetchAfter durable pre-images in one directory, the next one
// there takes the pre-images of a batch of untouched files with it: its
// siblings, in directory order from it on, stored as one pack and made
// durable together, one fsync of the pack and one fdatasync of their
// records for the whole batch. Each batch of a period is twice the size of
// the one before, up to prefetchMax files.
//
// Once a period has taken a batch it is in bulk, and a batch follows the
// order rm -rf works in: the first durable pre-image of any directory
// starts one at once; it goes down into the subdirectories it meets (after
// the files beside them), and when it is through its directory it goes on
// after it in the directory above, up to the nearest one with an entry the period has
// touched already (the tree the tool is working through). A batch per
// directory of ten files would still pay a sync per ten files.
//
// A file in a batch is touched in the period, as if it had been opened for
// writing: its pre-image names the window, and it is not taken again when
// the file does change. One that never changes costs its read and its
// record, and the boundary's check that it is unchanged; nothing is
// recorded after it. Nothing is taken ahead while windows are open
// together: which one a file's change belongs to is decided by its writer.
const (
	prefetchAfter = 2
	prefetchFirst = 32
	prefetchMax   = 1024
	// prefetchBytes bounds the content one batch reads.
	prefetchBytes = 16 << 20
)

// dirRun is what a period knows about one directory: how many durable
// pre-images it took there one by one, whether it touched an entry of it,
// and whether a batch took every file in it.
type dirRun struct {
	single  int
	touched bool
	done    bool
}

// noteTouched notes that the period touched rel, and whether its pre-image
// was durable, taken one by one.
func (r *Recorder) noteTouched(rel string, durable bool) {
	d := r.dirRun(path.Dir(rel))
	d.touched = true
	if durable {
		d.single++
	}
}

// dirRun returns the run of dir ("." for the root), made on first use.
func (r *Recorder) dirRun(dir string) *dirRun {
	if r.dirs == nil {
		r.dirs = map[string]*dirRun{}
	}
	d := r.dirs[dir]
	if d == nil {
		d = &dirRun{}
		r.dirs[dir] = d
	}
	return d
}

// prefetch takes the pre-image of rel, which has no record yet, together
// with those of a batch of untouched files, when the period's durable
// pre-images call for it. It reports whether rel was taken; false leaves
// rel to touch's own pre-image.
func (r *Recorder) prefetch(pid uint32, rel string) (bool, error) {
	// This runs on the first change of every path in a period: the
	// checks that need no lock and no syscall come first.
	if len(r.windows) > 1 || r.noBatch {
		return false, nil
	}
	if _, ok := r.last[rel]; ok {
		return false, nil // a recorded path: its pre-image may be free
	}
	dir := path.Dir(rel)
	d := r.dirs[dir]
	if d != nil && d.done || !r.bulk && (d == nil || d.single < prefetchAfter) {
		return false, nil
	}
	if r.tl.ReserveUsed() {
		return false, nil // the store is full: each file alone
	}
	var s unix.Stat_t
	if err := r.src.Lstat(rel, &s); err != nil || s.Mode&unix.S_IFMT != unix.S_IFREG {
		return false, nil // only an existing file needs a durable pre-image
	}
	if r.batch == 0 {
		r.batch = prefetchFirst
	}
	b := &batch{r: r, own: r.ownerFor(pid), max: r.batch, deep: r.bulk}
	if p, ok := r.store.(packer); ok {
		b.to.pack = p.NewPack()
		defer b.to.pack.Abort() // a no-op once committed
	}
	r.batch = min(2*r.batch, prefetchMax)
	b.take(rel, b.images([]string{rel})[0])
	b.dir(dir, path.Base(rel))
	if limit, ok := r.touchedAbove(dir); ok && b.deep {
		// On after dir in the directories above it, up to the nearest
		// one the period has touched an entry of.
		for cur := dir; cur != limit && !b.full(); cur = path.Dir(cur) {
			b.dir(path.Dir(cur), path.Base(cur))
		}
	}
	if len(b.recs) == 0 {
		return false, nil
	}
	if err := b.commit(); err != nil {
		if b.diskFull || index.IsDiskFull(err) {
			// The store is full: no more batches this period; rel is
			// taken alone, and refused if it cannot be.
			r.noBatch = true
			return false, nil
		}
		return false, err
	}
	if b.diskFull {
		r.noBatch = true
	}
	r.bulk = true
	took := false
	for _, rec := range b.recs {
		r.touched[rec.Path] = b.own
		// Unchanged since its pre-image until an operation touches it:
		// the boundary only checks its stat.
		r.settle(rec.Path)
		r.last[rec.Path], r.lastSeq[rec.Path] = *rec.State, rec.Seq
		took = took || rec.Path == rel
	}
	r.count.records.Add(int64(len(b.recs)))
	r.count.prefetched.Add(int64(len(b.recs)))
	if took {
		r.unsettle(rel) // rel is changing now
		r.noteTouched(rel, false)
	}
	return took, nil
}

// commit makes the batch's objects durable (its pack, then every object
// pending) and appends its records.
func (b *batch) commit() error {
	if b.to.pack != nil {
		if err := b.to.pack.Commit(); err != nil {
			return err
		}
	}
	if err := b.r.syncObjects(); err != nil {
		return err
	}
	// Not through the reserve: these records may be left out, and a
	// boundary's may not.
	return b.r.tl.AppendIfRoom(b.recs...)
}

// touchedAbove returns the nearest directory above dir with an entry the
// period touched.
func (r *Recorder) touchedAbove(dir string) (string, bool) {
	for dir != "." {
		dir = path.Dir(dir)
		if d := r.dirs[dir]; d != nil && d.touched {
			return dir, true
		}
	}
	return "", false
}

// batch gathers the pre-images of one prefetch.
type batch struct {
	r    *Recorder
	to   sink // deferred, into one pack where the store makes them
	own  owner
	max  int
	deep bool // go down into subdirectories, and on in the directories above
	recs []*index.Record
	read int64
	// diskFull: an image could not be stored for lack of space; the
	// batch stops there.
	diskFull bool
}

func (b *batch) full() bool {
	return len(b.recs) >= b.max || b.read >= prefetchBytes || b.diskFull
}

// take adds the pre-image of p, unless p is not a file or a symbolic link
// whose content could be stored: an error is reported at p's own first
// change, and a special file or a skip needs no durable pre-image. It
// reports whether p is a directory to walk.
func (b *batch) take(p string, im image) (subdir bool) {
	switch {
	case im.err != nil && index.IsDiskFull(im.err):
		b.diskFull = true
	case im.err != nil || im.reason != "":
	case im.st.Type == index.TypeDir:
		return b.deep
	case im.st.Hash != "":
		b.recs = append(b.recs, imageRecord(p, b.own, &im.st, "", index.KindBefore, index.ImageBefore))
		b.read += im.st.Size
	}
	return false
}

// dir adds the untouched, never recorded entries of dir in directory order
// (the order a tool that lists it works in), from the one after name on,
// wrapping around, until the batch is full, and then, when the batch goes
// deep, walks the subdirectories among them; when it gets through them
// all, dir is done for the period.
func (b *batch) dir(dir, name string) {
	r := b.r
	names, err := r.src.ReadDir(dir)
	if err != nil {
		return // each file's own change says what fails
	}
	start := slices.Index(names, name) + 1 // 0 when name is not listed
	prefix := dir + "/"
	if dir == "." {
		prefix = ""
	}
	var todo, subdirs []string
	for i := range names {
		p := prefix + names[(start+i)%len(names)]
		if _, ok := r.touched[p]; ok || p == prefix+name {
			continue
		}
		if _, ok := r.last[p]; ok || r.excl.Excluded(p) {
			continue
		}
		todo = append(todo, p)
	}
	for len(todo) > 0 && !b.full() {
		n := min(len(todo), max(b.max-len(b.recs), 8))
		for i, im := range b.images(todo[:n]) {
			if b.take(todo[i], im) {
				subdirs = append(subdirs, todo[i])
			}
		}
		todo = todo[n:]
	}
	for len(subdirs) > 0 && !b.full() {
		b.dir(subdirs[0], "")
		subdirs = subdirs[1:]
	}
	if len(todo) == 0 && len(subdirs) == 0 && !b.full() {
		r.dirRun(dir).done = true
	}
}

// errNotTried marks the paths of a batch left out once the store was full.
var errNotTried = errors.New("not tried: the store is full")

// image is one path's image as a batch takes it.
type image struct {
	st     index.State
	reason string
	err    error
}

// images takes the images of paths, into the batch's pack, on as many threads as
// there are CPUs: the operation waiting for the batch has nothing else to
// do, and each image is a read, a hash and a compression.
func (b *batch) images(paths []string) []image {
	out := make([]image, len(paths))
	var next atomic.Int64
	var full atomic.Bool // the store is full: the rest are not tried
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(paths)) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(paths); i = int(next.Add(1)) - 1 {
				im := &out[i]
				if full.Load() {
					im.err = errNotTried
					continue
				}
				im.st, im.reason, im.err = b.r.image(paths[i], b.to)
				if im.err != nil && index.IsDiskFull(im.err) {
					full.Store(true)
				}
			}
		})
	}
	wg.Wait()
	return out
}
