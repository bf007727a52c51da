package cas

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/ckfs-dev/ckfs/internal/hashid"
	"github.com/zeebo/blake3"
)

// Packs. A batch of objects that must become durable together before an
// operation goes on (the pre-images a batch takes ahead, docs/format.md
// section 6) is written as one pack file instead of a file per object:
// one temp file, one fsync and one rename for the whole batch, where
// objects/ pays a temp file, a rename and often a new shard directory for
// every object. Storing the 11,478 files of Go's src that way takes a
// quarter of the time (bench/floor).
//
// A pack holds complete object files (the header and body of section 2),
// back to back, and an index of them. It is written in tmp/, fsynced and
// renamed into packs/, and never changes after that: it is removed whole,
// once its objects that are still wanted have been written out as object
// files (a collection that deletes one of its objects, a repair that
// quarantines one). An object file under objects/ comes first: a pack's
// copy is read only when there is none, so a good object file written
// over a damaged packed copy is the one read.
//
// Layout (integers little endian), see docs/format.md section 2:
//
//	0..7     magic "CKPK", version 1, three zero bytes
//	8..      the objects, back to back
//	index    per object, ordered by address: its 32-byte digest, its
//	         offset and its length (8 bytes each)
//	trailer  the index's offset (8), the object count (8), and the
//	         BLAKE3-256 digest of the index (32): the last 48 bytes
const (
	packMagic      = "CKPK"
	packVersion    = 1
	packHeaderSize = 8
	packEntrySize  = HashSize + 16
	packTrailer    = 16 + HashSize
	// packMaxEntries bounds what an index may claim, so a damaged count
	// never drives an allocation.
	packMaxEntries = 1 << 24
)

// packEntry is where one object lies in a pack.
type packEntry struct {
	digest [HashSize]byte
	off, n int64
}

func packHeader() [packHeaderSize]byte {
	var b [packHeaderSize]byte
	copy(b[:], packMagic)
	b[4] = packVersion
	return b
}

// encodePackIndex returns the index and trailer of a pack whose objects
// end at end, ordering ents by address.
func encodePackIndex(ents []packEntry, end int64) []byte {
	slices.SortFunc(ents, func(a, b packEntry) int { return bytes.Compare(a.digest[:], b.digest[:]) })
	out := make([]byte, 0, len(ents)*packEntrySize+packTrailer)
	for _, e := range ents {
		out = append(out, e.digest[:]...)
		out = binary.LittleEndian.AppendUint64(out, uint64(e.off))
		out = binary.LittleEndian.AppendUint64(out, uint64(e.n))
	}
	sum := blake3.Sum256(out)
	out = binary.LittleEndian.AppendUint64(out, uint64(end))
	out = binary.LittleEndian.AppendUint64(out, uint64(len(ents)))
	return append(out, sum[:]...)
}

// decodePackTrailer reads the last packTrailer bytes of a pack of size
// bytes: where its index starts and how many objects it lists. Every
// failure wraps ErrCorrupt.
func decodePackTrailer(t []byte, size int64) (indexOff int64, count int, err error) {
	if len(t) != packTrailer || size < packHeaderSize+packTrailer {
		return 0, 0, fmt.Errorf("%w: pack of %d bytes is too short", ErrCorrupt, size)
	}
	off := binary.LittleEndian.Uint64(t[0:8])
	n := binary.LittleEndian.Uint64(t[8:16])
	if n > packMaxEntries || off < packHeaderSize || off > uint64(size) ||
		uint64(size)-off != n*packEntrySize+packTrailer {
		return 0, 0, fmt.Errorf("%w: pack trailer does not fit its size (index at %d, %d objects, %d bytes)", ErrCorrupt, off, n, size)
	}
	return int64(off), int(n), nil
}

// decodePackIndex checks a pack's header, index and trailer (the index
// and trailer are the file's last bytes, from indexOff on) and returns its
// entries. Every failure wraps ErrCorrupt.
func decodePackIndex(hdr, tail []byte, indexOff int64, count int) ([]packEntry, error) {
	want := packHeader()
	if !bytes.Equal(hdr, want[:]) {
		if len(hdr) == packHeaderSize && string(hdr[:4]) == packMagic && hdr[4] != packVersion {
			return nil, fmt.Errorf("%w: unknown pack format version %d (this ckfs reads version %d; upgrade ckfs)", ErrCorrupt, hdr[4], packVersion)
		}
		return nil, fmt.Errorf("%w: bad pack header %q", ErrCorrupt, hdr)
	}
	if len(tail) != count*packEntrySize+packTrailer {
		return nil, fmt.Errorf("%w: pack index is %d bytes, want %d", ErrCorrupt, len(tail), count*packEntrySize+packTrailer)
	}
	idx := tail[:count*packEntrySize]
	if sum := blake3.Sum256(idx); !bytes.Equal(sum[:], tail[len(tail)-HashSize:]) {
		return nil, fmt.Errorf("%w: pack index does not match its digest", ErrCorrupt)
	}
	ents := make([]packEntry, count)
	for i := range ents {
		b := idx[i*packEntrySize:]
		e := &ents[i]
		copy(e.digest[:], b[:HashSize])
		off := binary.LittleEndian.Uint64(b[HashSize:])
		n := binary.LittleEndian.Uint64(b[HashSize+8:])
		if off < packHeaderSize || n < headerSize || off > uint64(indexOff) || n > uint64(indexOff)-off {
			return nil, fmt.Errorf("%w: pack index entry %d lies outside the objects (%d bytes at %d)", ErrCorrupt, i, n, off)
		}
		if i > 0 && bytes.Compare(ents[i-1].digest[:], e.digest[:]) >= 0 {
			return nil, fmt.Errorf("%w: pack index is not in order", ErrCorrupt)
		}
		e.off, e.n = int64(off), int64(n)
	}
	return ents, nil
}

// digestOf is the digest a Hash names.
func digestOf(h Hash) (d [HashSize]byte, ok bool) {
	x := h.Hex()
	if len(x) != 2*HashSize {
		return d, false
	}
	_, err := hex.Decode(d[:], []byte(x))
	return d, err == nil
}

// Pack gathers objects to be made durable together, as one pack file.
// Nothing put in it is in the store until Commit returns.
type Pack struct {
	l    *Local
	mu   sync.Mutex
	f    *os.File
	tmp  string
	off  int64
	ents []packEntry
	has  map[[HashSize]byte]bool
	err  error
}

// Batch is a set of objects stored to be made durable together: a Pack.
type Batch interface {
	// Put adds data, unless the store holds it already (isNew is then
	// false). Two batches in flight at once may both hold one content,
	// each reporting it new: both copies are good.
	Put(data []byte) (h Hash, isNew bool, err error)
	// Commit makes every object put durable and part of the store.
	Commit() error
	// CommitDeferred makes every object put part of the store at once,
	// and durable at the next Sync, as PutDeferred does.
	CommitDeferred() error
	// Abort drops what was put; after Commit it does nothing.
	Abort()
}

// NewPack starts a pack. Commit or Abort it.
func (l *Local) NewPack() Batch { return &Pack{l: l, has: map[[HashSize]byte]bool{}} }

// Put adds data to the pack, unless the store holds it already (isNew is
// then false). It is safe for concurrent use, and compresses outside the
// pack's lock.
func (p *Pack) Put(data []byte) (Hash, bool, error) {
	h := Sum(data)
	p.l.touch(h)
	ok, corrupt, err := p.l.existing(h)
	if err != nil || ok {
		return h, false, err
	}
	if corrupt {
		// A damaged object file would stand in front of the packed
		// copy: write the good bytes over it now.
		return p.l.Put(data)
	}
	d, _ := digestOf(h)
	codec, body := p.l.encode(data)
	hdr := header{codec: codec, size: uint64(len(data))}.encode()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return h, false, p.err
	}
	if p.has[d] {
		return h, false, nil
	}
	if p.f == nil {
		if p.f, p.tmp, p.err = p.l.createTemp(); p.err != nil {
			return h, false, p.err
		}
		ph := packHeader()
		if p.err = writeFull(p.l.wrapWriter(p.f), ph[:]); p.err != nil {
			return h, false, fmt.Errorf("store pack: %w", p.err)
		}
		p.off = packHeaderSize
	}
	// At the end of the last complete object: a write that fails (a
	// full disk) leaves the pack as it was, and the objects before it
	// can still be committed.
	w := p.l.wrapWriter(io.NewOffsetWriter(p.f, p.off))
	err = writeFull(w, hdr[:])
	if err == nil {
		err = writeFull(w, body)
	}
	if err != nil {
		return h, false, fmt.Errorf("store object %s in a pack: %w", h, err)
	}
	n := int64(headerSize + len(body))
	p.ents = append(p.ents, packEntry{digest: d, off: p.off, n: n})
	p.has[d] = true
	p.off += n
	return h, true, nil
}

// Commit makes the pack durable and its objects part of the store: the
// index written, the file fsynced, renamed into packs/, and packs/
// fsynced. A pack nothing was put in writes nothing.
func (p *Pack) Commit() error { return p.finish(true) }

// CommitDeferred is Commit without the fsyncs: the pack is in packs/ when
// it returns, and the next Sync of the store makes it durable.
func (p *Pack) CommitDeferred() error { return p.finish(false) }

func (p *Pack) finish(sync bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		p.abort()
		return p.err
	}
	if p.f == nil {
		return nil
	}
	err := p.commit(sync)
	if err != nil {
		p.abort()
		p.err = err
	}
	p.f = nil
	return err
}

func (p *Pack) commit(sync bool) error {
	tail := encodePackIndex(p.ents, p.off)
	if err := writeFull(p.l.wrapWriter(io.NewOffsetWriter(p.f, p.off)), tail); err != nil {
		return fmt.Errorf("store pack: %w", err)
	}
	// Past what a failed write left behind.
	if err := p.f.Truncate(p.off + int64(len(tail))); err != nil {
		return fmt.Errorf("store pack: %w", err)
	}
	if sync {
		if err := p.f.Sync(); err != nil {
			return fmt.Errorf("store pack: fsync: %w", err)
		}
	}
	if err := p.f.Close(); err != nil {
		return fmt.Errorf("store pack: %w", err)
	}
	dir, err := p.l.packDir()
	if err != nil {
		return err
	}
	// Named by the digest of its index, which names every object in it
	// and where: two packs with one name hold the same objects.
	sum := blake3.Sum256(tail)
	name := hex.EncodeToString(sum[:16]) + ".pack"
	final := filepath.Join(dir, name)
	placed := true
	if err := p.l.place(p.tmp, final); err != nil {
		if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("store pack: %w", err)
		}
		os.Remove(p.tmp)
		placed = false
	}
	p.tmp = ""
	switch {
	case !sync || !placed:
		// A pack of that name was there (the same objects): it may be
		// a deferred one, which the next Sync makes durable.
		p.l.pending.add(final)
		if sync {
			if err := p.l.Sync(); err != nil {
				return err
			}
		}
	default:
		if err := syncDir(dir); err != nil {
			return fmt.Errorf("store pack: fsync %s: %w", dir, err)
		}
	}
	p.l.packs.add(final, p.ents)
	// Written by this Local: trusted as its object files are, until the
	// pack's inode changes.
	if fi, err := os.Lstat(final); err == nil && placed {
		st := stampOf(fi)
		for _, e := range p.ents {
			p.l.trusted.m.Store(hashid.FromDigest(e.digest), st)
		}
	}
	return nil
}

// Abort drops the pack and everything put in it; after Commit it does
// nothing.
func (p *Pack) Abort() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.abort()
	if p.err == nil {
		p.err = errors.New("pack aborted")
	}
}

func (p *Pack) abort() {
	if p.f != nil {
		p.f.Close()
		p.f = nil
	}
	if p.tmp != "" {
		os.Remove(p.tmp)
		p.tmp = ""
	}
}

// packDir returns packs/, made (durably) on first use.
func (l *Local) packDir() (string, error) {
	dir := filepath.Join(l.dir, "packs")
	if l.packsMade.Load() {
		return dir, nil
	}
	switch err := os.Mkdir(dir, dirMode); {
	case err == nil:
		if err := syncDir(l.dir); err != nil {
			return "", fmt.Errorf("store pack: fsync %s: %w", l.dir, err)
		}
	case !errors.Is(err, fs.ErrExist):
		return "", fmt.Errorf("store pack: %w", err)
	}
	l.packsMade.Store(true)
	return dir, nil
}
