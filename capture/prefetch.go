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
	if r.ahead != nil && r.ahead.claims(rel) {
		// rel's pre-image is being taken ahead: wait for it.
		next := r.landAhead()
		if _, ok := r.touched[rel]; ok {
			r.unsettle(rel) // rel is changing now
			r.noteTouched(rel, false)
			r.startAhead(next)
			return true, nil
		}
	}
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
	// The tool went elsewhere than the batch taken ahead: that one
	// lands first, so that the two never share a file.
	if r.landAhead(); r.noBatch {
		return false, nil // the store filled up in it
	}
	b := r.newBatch(r.ownerFor(pid))
	defer b.abort()
	limit, up := r.touchedAbove(dir)
	b.choose(rel, false, limit, up && b.deep)
	b.store()
	b.keep()
	n, err := r.land(b)
	if err != nil {
		return false, err
	}
	r.bulk = r.bulk || n > 0
	if _, ok := r.touched[rel]; !ok {
		return false, nil
	}
	r.unsettle(rel) // rel is changing now
	r.noteTouched(rel, false)
	r.startAhead(b)
	return true, nil
}

// newBatch starts the period's next batch, of pre-images in own's window.
func (r *Recorder) newBatch(own owner) *batch {
	if r.batch == 0 {
		r.batch = prefetchFirst
	}
	b := &batch{r: r, own: own, max: r.batch, deep: r.bulk}
	r.batch = min(2*r.batch, prefetchMax)
	if p, ok := r.store.(packer); ok {
		b.to.pack = p.NewPack()
	}
	return b
}

// land records the pre-images a batch took (b.store, b.keep), unless the
// store filled up: then no more batches this period, and the files are
// taken alone, refused if they cannot be. It returns how many it
// recorded. r.mu is held.
func (r *Recorder) land(b *batch) (int, error) {
	if len(b.recs) == 0 {
		return 0, nil
	}
	if err := b.commit(); err != nil {
		if b.diskFull || index.IsDiskFull(err) {
			r.noBatch = true
			return 0, nil
		}
		return 0, err
	}
	if b.diskFull {
		r.noBatch = true
	}
	for _, rec := range b.recs {
		r.touched[rec.Path] = b.own
		// Unchanged since its pre-image until an operation touches it:
		// the boundary only checks its stat.
		r.settle(rec.Path)
		r.last[rec.Path], r.lastSeq[rec.Path] = *rec.State, rec.Seq
	}
	r.count.records.Add(int64(len(b.recs)))
	r.count.prefetched.Add(int64(len(b.recs)))
	return len(b.recs), nil
}

// commit makes the batch's objects durable (its pack, then every object
// pending) and appends its records.
func (b *batch) commit() error {
	if b.err != nil {
		return b.err
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

// batch gathers the pre-images of one prefetch: it chooses its files
// (choose, on r.mu), takes their images into one pack (store, on r.mu or
// off it, ahead), and r.land records them.
type batch struct {
	r    *Recorder
	to   sink // deferred, into one pack where the store makes them
	own  owner
	max  int
	deep bool // go down into subdirectories, and on in the directories above

	// What choose picked: files and symbolic links, in the order the
	// tool is expected to reach them.
	paths []string
	bytes int64 // their sizes, as lstat told
	// up and limit: the walk goes on in the directories above, up to
	// limit, the nearest one the period had touched an entry of.
	up    bool
	limit string
	// next is where the walk stopped once the batch was full: the first
	// entry it left out (nextDir: a directory); "" when it got through.
	next    string
	nextDir bool
	// claimed are its paths while it is taken ahead (ahead.go); done is
	// closed once it is stored.
	claimed map[string]struct{}
	done    chan struct{}

	ims  []image
	err  error // storing the pack
	recs []*index.Record
	// diskFull: an image could not be stored for lack of space.
	diskFull bool
}

func (b *batch) full() bool {
	return len(b.paths) >= b.max || b.bytes >= prefetchBytes
}

// abort drops the batch's pack unless it was committed.
func (b *batch) abort() {
	if b.to.pack != nil {
		b.to.pack.Abort()
	}
}

// choose picks the batch's files: start (a file, or with isDir a
// directory, from its first entry on), the untouched, never recorded
// entries after it in its directory, and, when the batch goes deep, the
// subdirectories among them and then, with up, the directories above it
// up to limit, each from the entry after the one the walk came out of.
// r.mu is held.
func (b *batch) choose(start string, isDir bool, limit string, up bool) {
	b.up, b.limit = up, limit
	dir := start
	if isDir {
		b.dir(start, "")
	} else {
		dir = path.Dir(start)
		if b.fresh(start) {
			b.add(start, 0)
		}
		b.dir(dir, path.Base(start))
	}
	for cur := dir; up && cur != limit && cur != "." && !b.full(); cur = path.Dir(cur) {
		b.dir(path.Dir(cur), path.Base(cur))
	}
}

// fresh reports whether p may join the batch: the period has not
// touched it, no record names it, and it is captured. (A batch taken
// ahead starts where the one before stopped, which the period may have
// touched since.)
func (b *batch) fresh(p string) bool {
	if _, ok := b.r.touched[p]; ok {
		return false
	}
	if _, ok := b.r.last[p]; ok {
		return false
	}
	return !b.r.excl.Excluded(p)
}

func (b *batch) add(p string, size int64) {
	b.paths = append(b.paths, p)
	b.bytes += size
	if b.claimed != nil {
		b.claimed[p] = struct{}{}
	}
}

// left notes p as where the walk stopped, unless an earlier entry is.
func (b *batch) left(p string, isDir bool) {
	if b.next == "" {
		b.next, b.nextDir = p, isDir
	}
}

// dir adds the untouched, never recorded entries of dir in directory order
// (the order a tool that lists it works in), from the one after name on,
// wrapping around, until the batch is full, and then, when the batch goes
// deep, walks the subdirectories among them; when it gets through them
// all, dir is done for the period.
func (b *batch) dir(dir, name string) {
	r := b.r
	names, err := r.listed.names(r.src, dir)
	if err != nil {
		return // each file's own change says what fails
	}
	start := slices.Index(names, name) + 1 // 0 when name is not listed
	prefix := dir + "/"
	if dir == "." {
		prefix = ""
	}
	// The entries are looked at only as far as the batch takes them: a
	// large directory's batches each start where the one before stopped.
	seen := 0
	fresh := func(n int) []string {
		var ps []string
		for ; seen < len(names) && len(ps) < n; seen++ {
			if p := prefix + names[(start+seen)%len(names)]; p != prefix+name && b.fresh(p) {
				ps = append(ps, p)
			}
		}
		return ps
	}
	var subdirs []string
	for !b.full() {
		// No more than the batch may still take: a large directory is
		// not stat'd whole for every batch.
		todo := fresh(max(b.max-len(b.paths), 8))
		if len(todo) == 0 {
			break
		}
		r.lstatEach(todo, func(i int, st *unix.Stat_t, err error) {
			if err != nil {
				return // its own change says what fails
			}
			switch kind := st.Mode & unix.S_IFMT; {
			case b.full():
				b.left(todo[i], kind == unix.S_IFDIR)
			case kind == unix.S_IFREG || kind == unix.S_IFLNK:
				b.add(todo[i], st.Size)
			case kind == unix.S_IFDIR && b.deep:
				subdirs = append(subdirs, todo[i])
			}
		})
	}
	var st unix.Stat_t
	if b.next == "" {
		if rest := fresh(1); len(rest) > 0 && r.src.Lstat(rest[0], &st) == nil {
			b.left(rest[0], st.Mode&unix.S_IFMT == unix.S_IFDIR)
		}
	}
	for _, sub := range subdirs {
		if b.full() {
			b.left(sub, true)
			continue
		}
		b.dir(sub, "")
	}
	if !b.full() {
		r.dirRun(dir).done = true
	}
}

// listings are the names of the directories a period's batches listed,
// read once a period: each batch of a large directory starts where the
// one before stopped, and reading all of its names again for each would
// list a flat directory of 100,000 files a hundred times over its
// deletion. A name listed that is gone since fails its lstat or is
// touched already; a file made since is recorded by the change that made
// it, and needs no pre-image.
type listings struct {
	dirs  map[string][]string
	count int // names held
}

// maxListed bounds the names a period holds (a few MiB): past it, the
// listings held are dropped before the next is kept.
const maxListed = 1 << 17

// names returns dir's names, listing it the first time in the period.
// r.mu is held.
func (l *listings) names(src Source, dir string) ([]string, error) {
	if names, ok := l.dirs[dir]; ok {
		return names, nil
	}
	names, err := src.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	if l.dirs == nil || l.count+len(names) > maxListed {
		l.dirs, l.count = map[string][]string{}, 0
	}
	l.dirs[dir] = names
	l.count += len(names)
	return names, nil
}

// store takes the images of the chosen files into the batch's pack and
// commits it (durable: the files may be deleted as soon as their records
// are). It needs no lock.
func (b *batch) store() {
	b.ims = b.images(b.paths)
	if b.to.pack != nil {
		b.err = b.to.pack.Commit()
	}
}

// keep turns the images taken into records, leaving out a path whose
// content could not be stored: an error is reported at its own first
// change, and a special file (one that became so since it was chosen)
// needs no durable pre-image.
func (b *batch) keep() {
	for i, im := range b.ims {
		switch {
		case im.err != nil && index.IsDiskFull(im.err):
			b.diskFull = true
		case im.err != nil || im.reason != "":
		case im.st.Hash != "":
			rec := imageRecord(b.paths[i], b.own, &im.st, "", index.KindBefore, index.ImageBefore)
			rec.CTime = im.ctime
			b.recs = append(b.recs, rec)
		}
	}
}

// errNotTried marks the paths of a batch left out once the store was full.
var errNotTried = errors.New("not tried: the store is full")

// image is one path's image as a batch takes it.
type image struct {
	st     index.State
	ctime  int64
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
				im.st, im.ctime, im.reason, im.err = b.r.preImage(paths[i], b.to)
				if im.err != nil && index.IsDiskFull(im.err) {
					full.Store(true)
				}
			}
		})
	}
	wg.Wait()
	return out
}
