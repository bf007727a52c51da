package capture

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/internal/english"
	"github.com/ckfs-dev/ckfs/internal/xattr"
	"golang.org/x/sys/unix"
)

// smallFile is the size up to which a file is read into memory in one go.
const smallFile = 1 << 20

// image reads the current state of rel from the backing directory and
// stores its content. A non-empty reason means the content was not stored
// and the state must be recorded as a skip.
//
// to says where its content goes (see sink).
func (r *Recorder) image(rel string, to sink) (st index.State, reason string, err error) {
	var s unix.Stat_t
	return r.imageStat(rel, to, &s)
}

// preImage is image for a pre-image: it also returns the status change
// time the lstat read (index.Record.CTime), 0 for an absent path.
func (r *Recorder) preImage(rel string, to sink) (st index.State, ctime int64, reason string, err error) {
	var s unix.Stat_t
	st, reason, err = r.imageStat(rel, to, &s)
	if err == nil && st.Type != index.TypeAbsent {
		ctime = s.Ctim.Sec*1e9 + s.Ctim.Nsec
	}
	return st, ctime, reason, err
}

// imageStat is image with the lstat it makes read into s.
func (r *Recorder) imageStat(rel string, to sink, s *unix.Stat_t) (st index.State, reason string, err error) {
	st, known, err := r.lstat(rel, s)
	if err != nil || st.Type == index.TypeAbsent {
		return st, "", err
	}
	switch {
	case !known:
		st.Type = index.TypeFile
		return st, fmt.Sprintf("unknown file type (mode %o)", s.Mode&unix.S_IFMT), nil
	case st.Type == index.TypeDir:
		attrs, err := r.src.XAttrs(rel)
		if err != nil {
			return st, "", err
		}
		st.XAttrs, err = r.putXAttrs(attrs, to)
		return st, "", err
	case st.Type == index.TypeSymlink:
		if err := r.roomForContent(); err != nil {
			return st, "", err
		}
		target, err := r.src.Readlink(rel)
		if err != nil {
			return st, "", err
		}
		h, err := r.put([]byte(target), to)
		if err != nil {
			return st, "", err
		}
		st.Hash, st.Size = h, int64(len(target))
		return st, "", nil
	case st.Type.Special():
		// A FIFO, socket or device node has no content: its type, mode
		// and device number are all there is to restore.
		return st, "", nil
	}
	return r.fileImage(rel, s, st, to)
}

// fileImage stores the content and extended attributes of the regular
// file rel, whose stat is s, into st.
func (r *Recorder) fileImage(rel string, s *unix.Stat_t, st index.State, to sink) (index.State, string, error) {
	if s.Size > r.maxSize {
		return st, fmt.Sprintf("over the size limit (%s > %s)", english.Size(s.Size), english.Size(r.maxSize)), nil
	}
	if err := r.roomForContent(); err != nil {
		return st, "", err
	}
	f, err := r.src.Open(rel)
	if err != nil {
		return st, "", err
	}
	defer f.Close()
	attrs, err := xattr.Read(f.Fd())
	if err != nil {
		return st, "", fmt.Errorf("read extended attributes of %s: %w", rel, err)
	}
	if st.XAttrs, err = r.putXAttrs(attrs, to); err != nil {
		return st, "", err
	}
	// Read what is there now: the size may have moved since the stat.
	var content io.Reader = f
	if s.Size <= smallFile {
		// Room for the whole file and ReadFrom's minimum read, so that
		// reading it to its end never grows the buffer.
		buf := bytes.NewBuffer(make([]byte, 0, s.Size+bytes.MinRead))
		if _, err := buf.ReadFrom(io.LimitReader(f, r.maxSize+1)); err != nil {
			return st, "", err
		}
		if int64(buf.Len()) > r.maxSize {
			return st, fmt.Sprintf("over the size limit (grew past %s while captured)", english.Size(r.maxSize)), nil
		}
		h, err := r.put(buf.Bytes(), to)
		if err != nil {
			return st, "", err
		}
		st.Hash, st.Size = h, int64(buf.Len())
		return st, "", nil
	}
	cr := &countingReader{r: io.LimitReader(content, r.maxSize+1)}
	hash, isNew, err := r.store.PutReader(cr)
	if err != nil {
		return st, "", err
	}
	if cr.n > r.maxSize {
		return st, fmt.Sprintf("over the size limit (grew past %s while captured)", english.Size(r.maxSize)), nil
	}
	r.counted(isNew, cr.n)
	st.Hash, st.Size = hash, cr.n
	return st, "", nil
}

// lstat reads rel's state without its content: what a stat tells (type,
// size, times, mode, owner, device number), absent when it does not exist.
// known is false for a file type index has no name for.
func (r *Recorder) lstat(rel string, s *unix.Stat_t) (st index.State, known bool, err error) {
	if err := r.src.Lstat(rel, s); err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
			return index.State{Type: index.TypeAbsent}, true, nil
		}
		return st, false, err
	}
	st, known = stateOf(s)
	return st, known, nil
}

// stateOf is the state an lstat tells, without content.
func stateOf(s *unix.Stat_t) (st index.State, known bool) {
	st = index.State{
		Size:  s.Size,
		MTime: s.Mtim.Sec*1e9 + s.Mtim.Nsec,
		Mode:  uint32(s.Mode) & 0o7777,
		Owner: index.OwnerOf(s.Uid, s.Gid),
	}
	st.Type, known = index.TypeOfMode(uint32(s.Mode))
	if st.Type == index.TypeDir || st.Type.Special() {
		st.Size = 0
	}
	if st.Type == index.TypeChar || st.Type == index.TypeBlock {
		st.Rdev = uint64(s.Rdev)
	}
	return st, known
}

// putXAttrs stores an attribute set; "" for an empty one.
func (r *Recorder) putXAttrs(attrs map[string][]byte, to sink) (index.Hash, error) {
	if len(attrs) == 0 {
		return "", nil
	}
	if err := r.roomForContent(); err != nil {
		return "", err
	}
	return r.put(index.EncodeXAttrs(attrs), to)
}

// sink says where an image's content goes: durable (a pre-image taken
// alone: its content is about to disappear from the workspace) is stored
// with fsync; otherwise the store may defer it, or it goes into pack (a
// batch stored as one file).
type sink struct {
	durable bool
	pack    cas.Batch
}

var (
	durableSink  = sink{durable: true}
	deferredSink = sink{}
)

func (r *Recorder) put(b []byte, to sink) (index.Hash, error) {
	put := r.store.Put
	if d, ok := r.store.(deferrer); ok && !to.durable {
		put = d.PutDeferred
	}
	if to.pack != nil {
		put = to.pack.Put
	}
	h, isNew, err := put(b)
	if err != nil {
		return "", err
	}
	r.counted(isNew, int64(len(b)))
	return h, nil
}

// counted adds a stored content to the statistics (image runs outside the
// recorder's lock in the post-image worker: the counters are atomic).
func (r *Recorder) counted(isNew bool, n int64) {
	if isNew {
		r.count.objectsNew.Add(1)
	}
	r.count.bytesStored.Add(n)
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// deferrer is a store that can defer durability (cas.Local).
type deferrer interface {
	PutDeferred([]byte) (cas.Hash, bool, error)
	Sync() error
}

// packer is a store that can make a batch durable as one pack
// (cas.Local).
type packer interface {
	NewPack() cas.Batch
}
