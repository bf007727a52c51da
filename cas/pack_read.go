package cas

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/ckfs-dev/ckfs/internal/durable"
	"github.com/ckfs-dev/ckfs/internal/hashid"
)

// packSet is what a Local knows of packs/: every pack it has read the
// index of, and where each packed object lies. Packs this Local writes or
// removes it notes itself. Other processes add packs (and remove them), so
// a lookup that misses where a miss would be an error (a read) lists
// packs/ again; a put's check, where a miss costs a duplicate at most,
// lists it only once (a put is on the request path: no syscall for it).
type packSet struct {
	mu    sync.RWMutex
	packs map[string]*packFile // by path
	at    map[[HashSize]byte]packLoc
	// dups are further packed copies of objects at names one (two packs
	// written at once may hold the same object): one takes its place
	// when its pack goes.
	dups    map[[HashSize]byte][]packLoc
	damaged map[string]error // packs whose index cannot be read, by path
}

type packFile struct {
	path string
	ents []packEntry
}

// packRef is one object's place: its pack and its entry.
type packRef struct {
	p *packFile
	e packEntry
}

// packLoc is a packRef as the set keeps it, small: its pack and the
// entry's index there.
type packLoc struct {
	p *packFile
	i uint32
}

func (l packLoc) ref() packRef { return packRef{p: l.p, e: l.p.ents[l.i]} }

// add records a pack this Local just wrote.
func (s *packSet) add(path string, ents []packEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addLocked(&packFile{path: path, ents: ents})
}

func (s *packSet) addLocked(p *packFile) {
	if s.packs == nil {
		s.packs, s.at = map[string]*packFile{}, map[[HashSize]byte]packLoc{}
	}
	s.packs[p.path] = p
	for i, e := range p.ents {
		loc := packLoc{p: p, i: uint32(i)}
		if _, ok := s.at[e.digest]; !ok {
			s.at[e.digest] = loc
			continue
		}
		if s.dups == nil {
			s.dups = map[[HashSize]byte][]packLoc{}
		}
		s.dups[e.digest] = append(s.dups[e.digest], loc)
	}
}

// dropLocked forgets a pack that is gone.
func (s *packSet) dropLocked(path string) {
	p := s.packs[path]
	if p == nil {
		return
	}
	delete(s.packs, path)
	for _, e := range p.ents {
		d := e.digest
		others := slices.DeleteFunc(s.dups[d], func(l packLoc) bool { return l.p == p })
		if loc, ok := s.at[d]; ok && loc.p == p {
			delete(s.at, d)
			if len(others) > 0 {
				s.at[d], others = others[0], others[1:]
			}
		}
		if len(others) == 0 {
			delete(s.dups, d)
		} else {
			s.dups[d] = others
		}
	}
}

// find returns where the object h lies in a pack. fresh lists packs/
// again on a miss even when it looks unchanged.
func (l *Local) findPacked(h Hash, fresh bool) (packRef, bool) {
	d, ok := digestOf(h)
	if !ok {
		return packRef{}, false
	}
	s := &l.packs
	s.mu.RLock()
	loc, ok := s.at[d]
	s.mu.RUnlock()
	if ok {
		return loc.ref(), true
	}
	if !l.rescanPacks(fresh) {
		return packRef{}, false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if loc, ok = s.at[d]; !ok {
		return packRef{}, false
	}
	return loc.ref(), true
}

// rescanPacks lists packs/ and reads the index of every pack not known
// yet; it forgets packs that are gone. It reports whether it looked.
func (l *Local) rescanPacks(force bool) bool {
	dir := filepath.Join(l.dir, "packs")
	s := &l.packs
	s.mu.Lock()
	defer s.mu.Unlock()
	if !force && s.packs != nil {
		return false
	}
	if s.packs == nil {
		s.packs, s.at = map[string]*packFile{}, map[[HashSize]byte]packLoc{}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false // no pack was ever written
	}
	here := map[string]bool{}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".pack") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		here[p] = true
		if _, ok := s.packs[p]; ok {
			continue
		}
		if _, ok := s.damaged[p]; ok {
			continue
		}
		pf, err := readPack(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			if s.damaged == nil {
				s.damaged = map[string]error{}
			}
			s.damaged[p] = err
			continue
		}
		s.addLocked(pf)
	}
	for p := range s.packs {
		if !here[p] {
			s.dropLocked(p)
		}
	}
	for p := range s.damaged {
		if !here[p] {
			delete(s.damaged, p)
		}
	}
	return true
}

// readPack reads the index of the pack at path.
func readPack(path string) (*packFile, error) {
	f, err := openRead(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, off, n, err := packTrailerOf(f)
	if err != nil {
		return nil, fmt.Errorf("pack %s: %w", path, err)
	}
	var hdr [packHeaderSize]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil {
		return nil, fmt.Errorf("pack %s: %w", path, err)
	}
	tail := make([]byte, size-off)
	if _, err := f.ReadAt(tail, off); err != nil {
		return nil, fmt.Errorf("pack %s: %w", path, err)
	}
	ents, err := decodePackIndex(hdr[:], tail, off, n)
	if err != nil {
		return nil, fmt.Errorf("pack %s: %w", path, err)
	}
	return &packFile{path: path, ents: ents}, nil
}

// packTrailerOf reads the trailer of the pack f: its size, where its
// index starts and how many objects it lists.
func packTrailerOf(f *os.File) (size, indexOff int64, count int, err error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, 0, 0, err
	}
	size = fi.Size()
	if size < packHeaderSize+packTrailer {
		return 0, 0, 0, fmt.Errorf("%w: %d bytes is too short", ErrCorrupt, size)
	}
	var t [packTrailer]byte
	if _, err := f.ReadAt(t[:], size-packTrailer); err != nil {
		return 0, 0, 0, err
	}
	indexOff, count, err = decodePackTrailer(t[:], size)
	return size, indexOff, count, err
}

// DamagedPacks lists the packs whose index cannot be read, with why: the
// objects in them cannot be found.
func (l *Local) DamagedPacks() map[string]string {
	l.rescanPacks(true)
	l.packs.mu.RLock()
	defer l.packs.mu.RUnlock()
	out := map[string]string{}
	for p, err := range l.packs.damaged {
		out[p] = err.Error()
	}
	return out
}

// openPacked opens the packed copy of h. A pack removed since it was
// listed (its objects written out as object files) is forgotten, and the
// caller looks again.
func (l *Local) openPacked(h Hash) (*os.File, io.Reader, int64, error) {
	r, ok := l.findPacked(h, true)
	if !ok {
		return nil, nil, 0, fmt.Errorf("object %s: %w", h, ErrNotFound)
	}
	f, err := openRead(r.p.path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			l.packs.mu.Lock()
			l.packs.dropLocked(r.p.path)
			l.packs.mu.Unlock()
			return nil, nil, 0, errPackGone
		}
		return nil, nil, 0, fmt.Errorf("object %s: %w", h, err)
	}
	var rd io.Reader = io.NewSectionReader(f, r.e.off, r.e.n)
	if l.opts.WrapReader != nil {
		rd = l.opts.WrapReader(rd)
	}
	return f, rd, r.e.n, nil
}

// errPackGone: the pack was removed between its listing and its open.
var errPackGone = errors.New("pack removed")

// walkPacked calls fn for every packed object with no object file,
// reading each pack's headers through one descriptor.
func (l *Local) walkPacked(fn func(Info) error) error {
	l.rescanPacks(true)
	l.packs.mu.RLock()
	packs := make([]*packFile, 0, len(l.packs.packs))
	for _, p := range l.packs.packs {
		packs = append(packs, p)
	}
	l.packs.mu.RUnlock()
	for _, p := range packs {
		if err := l.walkPack(p, fn); err != nil {
			return err
		}
	}
	return nil
}

func (l *Local) walkPack(p *packFile, fn func(Info) error) error {
	f, err := openRead(p.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // unpacked since: its objects are object files now
	}
	if err != nil {
		return err
	}
	defer f.Close()
	for _, e := range p.ents {
		h := hashid.FromDigest(e.digest)
		if _, err := os.Lstat(l.Path(h)); err == nil {
			continue // the object file is the copy that is read
		}
		info := Info{Hash: h, Size: -1, Stored: e.n}
		var hb [headerSize]byte
		if _, err := f.ReadAt(hb[:], e.off); err != nil {
			return fmt.Errorf("pack %s: %w", p.path, err)
		}
		if hdr, err := decodeHeader(hb[:]); err == nil {
			info.Size, info.Codec = int64(hdr.size), hdr.codec
		}
		if err := fn(info); err != nil {
			return err
		}
	}
	return nil
}

// Raw returns the stored bytes of object h (header and body), unverified:
// the object file's, or else its packed copy's.
func (l *Local) Raw(h Hash) ([]byte, error) {
	f, r, _, err := l.openFile(h)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(r)
}

// unpack writes every object of the pack holding h, but those in drop, out
// as durable object files (unless one is there already), and then removes
// the pack. A packed copy that does not verify is not written out: it
// was lost already. exploded collects the objects written out.
func (l *Local) unpack(r packRef, drop map[Hash]bool, exploded map[Hash]bool) error {
	f, err := openRead(r.p.path)
	if errors.Is(err, fs.ErrNotExist) {
		l.packs.mu.Lock()
		l.packs.dropLocked(r.p.path)
		l.packs.mu.Unlock()
		return nil
	}
	if err != nil {
		return fmt.Errorf("unpack %s: %w", r.p.path, err)
	}
	defer f.Close()
	var written []string
	for _, e := range r.p.ents {
		h := hashid.FromDigest(e.digest)
		if drop[h] {
			continue
		}
		if _, err := os.Lstat(l.Path(h)); err == nil {
			continue
		}
		raw := make([]byte, e.n)
		if _, err := f.ReadAt(raw, e.off); err != nil {
			return fmt.Errorf("unpack %s: %w", r.p.path, err)
		}
		if _, err := decodeObject(l.dec, h, raw); err != nil {
			continue
		}
		tf, tmp, err := l.createTemp()
		if err != nil {
			return err
		}
		werr := writeFull(l.wrapWriter(tf), raw)
		if cerr := tf.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			os.Remove(tmp)
			return fmt.Errorf("unpack %s: %w", r.p.path, werr)
		}
		if _, err := l.publish(tmp, h, false); err != nil {
			return err
		}
		written = append(written, l.Path(h))
		if exploded != nil {
			exploded[h] = true
		}
	}
	// Every object written out is durable before the pack goes.
	if len(written) <= syncEachMax {
		err = syncEach(written)
	} else {
		err = durable.SyncFS(l.dir)
	}
	if err == nil {
		err = l.pending.syncAllDirs()
	}
	if err != nil {
		return fmt.Errorf("unpack %s: %w", r.p.path, err)
	}
	if err := os.Remove(r.p.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("unpack %s: %w", r.p.path, err)
	}
	if err := syncDir(filepath.Dir(r.p.path)); err != nil {
		return fmt.Errorf("unpack %s: %w", r.p.path, err)
	}
	l.packs.mu.Lock()
	l.packs.dropLocked(r.p.path)
	l.packs.mu.Unlock()
	return nil
}

// Evict moves the bytes of object h out of the store into the new file
// dst: its object file is renamed there, or else its packed copy is
// written there (durably) and its pack unpacked without it.
func (l *Local) Evict(h Hash, dst string) error {
	l.forget(h)
	err := os.Rename(l.Path(h), dst)
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	r, ok := l.findPacked(h, true)
	if !ok {
		return fmt.Errorf("object %s: %w", h, ErrNotFound)
	}
	f, err := openRead(r.p.path)
	if err != nil {
		return err
	}
	raw := make([]byte, r.e.n)
	_, err = f.ReadAt(raw, r.e.off)
	f.Close()
	if err != nil {
		return err
	}
	if err := durable.WriteFile(dst, raw, 0o400); err != nil {
		return err
	}
	return l.unpack(r, map[Hash]bool{h: true}, nil)
}

// PackedObjects counts the objects the packs under the store dir list,
// from their trailers alone (one read each, no index).
func PackedObjects(dir string) int {
	ents, _ := os.ReadDir(filepath.Join(dir, "packs"))
	n := 0
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".pack") {
			continue
		}
		f, err := openRead(filepath.Join(dir, "packs", e.Name()))
		if err != nil {
			continue
		}
		if _, _, c, err := packTrailerOf(f); err == nil {
			n += c
		}
		f.Close()
	}
	return n
}
