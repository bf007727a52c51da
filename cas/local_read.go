package cas

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/zeebo/blake3"
	"golang.org/x/sys/unix"
)

// openRead opens the file at path for reading.
func openRead(path string) (*os.File, error) { return openPlain(path, unix.O_RDONLY, 0) }

// openPlain is os.OpenFile for a regular file. os.OpenFile would try to
// register the file with Go's poller, which refuses a regular file, and
// set its mode twice on the way: four system calls more for every object
// read or written.
func openPlain(path string, flags int, perm uint32) (*os.File, error) {
	for {
		fd, err := unix.Open(path, flags|unix.O_CLOEXEC, perm)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return os.NewFile(uintptr(fd), path), nil
	}
}

// openFile opens the bytes of object h: its object file, or else its
// packed copy. stored is how many bytes a packed copy is, -1 for an
// object file (its size is the file's: see storedSize).
func (l *Local) openFile(h Hash) (f *os.File, r io.Reader, stored int64, err error) {
	for range 3 {
		f, err = openRead(l.Path(h))
		if err == nil {
			r = f
			if l.opts.WrapReader != nil {
				r = l.opts.WrapReader(f)
			}
			return f, r, -1, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, 0, fmt.Errorf("object %s: %w", h, err)
		}
		f, r, stored, err = l.openPacked(h)
		if err != errPackGone {
			return f, r, stored, err
		}
		// Its pack was unpacked since it was listed: the object file
		// is there now, unless it was the one collected.
	}
	return nil, nil, 0, fmt.Errorf("object %s: %w", h, ErrNotFound)
}

// storedSize is how many bytes the object openFile opened as f is.
func storedSize(f *os.File, stored int64) (int64, error) {
	if stored >= 0 {
		return stored, nil
	}
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// corrupt wraps ErrCorrupt with the object's name and file.
func (l *Local) corrupt(h Hash, why error) error {
	where := l.Path(h)
	if _, err := os.Lstat(where); err != nil {
		if r, ok := l.findPacked(h, false); ok {
			where = fmt.Sprintf("packed in %s at %d", r.p.path, r.e.off)
		}
	}
	return fmt.Errorf("object %s (%s): %w", h, where, why)
}

func (l *Local) Get(h Hash) ([]byte, error) {
	f, r, stored, err := l.openFile(h)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var raw []byte
	if n, err := storedSize(f, stored); err == nil && n < 1<<40 {
		raw = make([]byte, 0, n+1) // +1: io.ReadAll-style EOF probe without regrowth
	}
	raw, err = readAll(r, raw)
	if err != nil {
		return nil, fmt.Errorf("object %s: %w", h, err)
	}
	data, err := decodeObject(l.dec, h, raw)
	if err != nil {
		return nil, l.corrupt(h, err)
	}
	return data, nil
}

func (l *Local) Open(h Hash) (io.ReadCloser, error) {
	f, r, stored, err := l.openFile(h)
	if err != nil {
		return nil, err
	}
	// A buffer no larger than the object: most are a few KiB, and
	// clearing 256 KiB for each cost more than reading it.
	size := 256 << 10
	if n, err := storedSize(f, stored); err == nil && n < int64(size) {
		size = int(max(n, 512))
	}
	br := bufio.NewReaderSize(r, size)
	var hb [headerSize]byte
	if _, err := io.ReadFull(br, hb[:]); err != nil {
		f.Close()
		return nil, l.corrupt(h, fmt.Errorf("%w: short header", ErrCorrupt))
	}
	hdr, err := decodeHeader(hb[:])
	if err != nil {
		f.Close()
		return nil, l.corrupt(h, err)
	}
	v := &verifier{l: l, h: h, f: f, want: hdr.size, hasher: blake3.New()}
	switch hdr.codec {
	case CodecRaw:
		v.body = br
	case CodecZstd:
		d := l.getStreamDecoder()
		if err := d.Reset(br); err != nil {
			f.Close()
			return nil, l.corrupt(h, fmt.Errorf("%w: %v", ErrCorrupt, err))
		}
		v.dec, v.body = d, d
	}
	return v, nil
}

func (l *Local) getStreamDecoder() *zstd.Decoder {
	if d, ok := l.streamDec.Get().(*zstd.Decoder); ok {
		return d
	}
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
	if err != nil {
		panic(err) // only invalid options fail
	}
	return d
}

// verifier streams an object's content and checks size and hash at the end.
type verifier struct {
	l      *Local
	h      Hash
	f      *os.File
	dec    *zstd.Decoder
	body   io.Reader
	hasher *blake3.Hasher
	n      uint64
	want   uint64
	err    error
}

func (v *verifier) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	n, err := v.body.Read(p)
	v.n += uint64(n)
	v.hasher.Write(p[:n])
	if v.n > v.want {
		v.err = v.l.corrupt(v.h, fmt.Errorf("%w: content longer than its header says", ErrCorrupt))
		return 0, v.err
	}
	if err == io.EOF {
		got := digest(v.hasher)
		switch {
		case v.n != v.want:
			v.err = v.l.corrupt(v.h, fmt.Errorf("%w: content is %d bytes, header says %d", ErrCorrupt, v.n, v.want))
		case got != v.h:
			v.err = v.l.corrupt(v.h, fmt.Errorf("%w: content does not hash to its name", ErrCorrupt))
		default:
			v.err = io.EOF
		}
		return n, v.err
	}
	if err != nil {
		if v.dec != nil {
			err = v.l.corrupt(v.h, fmt.Errorf("%w: %v", ErrCorrupt, err))
		}
		v.err = err
	}
	return n, err
}

func (v *verifier) Close() error {
	if v.dec != nil {
		v.dec.Reset(nil)
		v.l.streamDec.Put(v.dec)
		v.dec = nil
	}
	return v.f.Close()
}

func (l *Local) Stat(h Hash) (Info, error) {
	f, r, stored, err := l.openFile(h)
	if err != nil {
		return Info{}, err
	}
	defer f.Close()
	if stored, err = storedSize(f, stored); err != nil {
		return Info{}, err
	}
	return l.statOpen(h, r, stored)
}

func (l *Local) statOpen(h Hash, r io.Reader, stored int64) (Info, error) {
	var hb [headerSize]byte
	if _, err := io.ReadFull(r, hb[:]); err != nil {
		return Info{}, l.corrupt(h, fmt.Errorf("%w: short header", ErrCorrupt))
	}
	hdr, err := decodeHeader(hb[:])
	if err != nil {
		return Info{}, l.corrupt(h, err)
	}
	return Info{Hash: h, Size: int64(hdr.size), Stored: stored, Codec: hdr.codec}, nil
}

// Walk visits every object. An object whose header does not decode is
// reported to fn with Codec 0 and Size -1 so that verification can flag it.
func (l *Local) Walk(fn func(Info) error) error {
	root := filepath.Join(l.dir, "objects")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		name := d.Name()
		h, perr := ParseHash("blake3:" + name)
		if perr != nil || !strings.HasSuffix(filepath.Dir(path), filepath.Join(name[0:2], name[2:4])) {
			return nil // not an object name: ignore stray files
		}
		info, err := l.Stat(h)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				return err
			}
			info = Info{Hash: h, Size: -1}
		}
		return fn(info)
	})
	if err != nil {
		return err
	}
	return l.walkPacked(fn)
}

func (l *Local) Delete(h Hash) error {
	p := l.Path(h)
	l.forget(h)
	err := os.Remove(p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete object %s: %w", h, err)
	}
	found := err == nil
	if found {
		if err := syncDir(filepath.Dir(p)); err != nil {
			return err
		}
	}
	// Packed copies go too: each pack is unpacked without it.
	for {
		r, ok := l.findPacked(h, true)
		if !ok {
			break
		}
		if err := l.unpack(r, map[Hash]bool{h: true}, nil); err != nil {
			return fmt.Errorf("delete object %s: %w", h, err)
		}
		found = true
	}
	if !found {
		return fmt.Errorf("object %s: %w", h, ErrNotFound)
	}
	return nil
}

// readAll is io.ReadAll into a caller-sized buffer, so reading a file whose
// size is known costs one allocation.
func readAll(r io.Reader, b []byte) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
	}
}
