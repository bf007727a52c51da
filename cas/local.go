package cas

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"
	"github.com/zeebo/blake3"
	"golang.org/x/sys/unix"
)

// Options tune a Local store. The zero value is the production setting.
type Options struct {
	// WrapWriter, if set, wraps the writer of every new object file. Tests
	// use it to inject failures and short writes (see castest.Faults).
	WrapWriter func(io.Writer) io.Writer
	// WrapReader, if set, wraps the reader of every object file read. Tests
	// use it to flip bits on read.
	WrapReader func(io.Reader) io.Reader
}

// Local is a Store kept in a directory of the local filesystem:
//
//	<dir>/objects/ab/cd/<64 hex digits>   one file per object
//	<dir>/tmp/                            temp files, same filesystem
//
// It is safe for concurrent use by goroutines and by processes.
type Local struct {
	dir  string
	opts Options

	enc *zstd.Encoder // EncodeAll is safe for concurrent use
	dec *zstd.Decoder // DecodeAll is safe for concurrent use

	streamEnc sync.Pool // *zstd.Encoder for PutReader
	streamDec sync.Pool // *zstd.Decoder for Open

	pending pendingSet // deferred objects not yet synced
	sweep   sweepGuard // the active garbage collection, if any

	tmpPrefix string        // random, so two processes never pick one name
	tmpSeq    atomic.Uint64 // temp file counter
	shards    sync.Map      // shard directories known to exist (durably, or noted in pending)
	trusted   trustCache    // object files known to hold their content
	linkOnly  atomic.Bool   // the store's file system cannot rename without replacing
	packs     packSet       // packs/: objects stored a batch to a file
	packsMade atomic.Bool   // packs/ exists, durably
}

var _ Store = (*Local)(nil)

// dirMode is the mode of every directory of the store: private to the user.
const dirMode = 0o700

// objectMode makes objects read-only: they are never modified in place.
const objectMode = 0o444

// streamThreshold is the size up to which PutReader buffers the content and
// stores it like Put. Larger content is streamed through a temp file.
const streamThreshold = 1 << 20

// Open opens (creating if needed) the store in dir. opts may be nil.
func Open(dir string, opts *Options) (*Local, error) {
	for _, d := range []string{dir, filepath.Join(dir, "objects"), filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, dirMode); err != nil {
			return nil, fmt.Errorf("open object store %s: %w", dir, err)
		}
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)), zstd.WithEncoderCRC(false))
	if err != nil {
		return nil, err
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0))
	if err != nil {
		return nil, err
	}
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, err
	}
	l := &Local{dir: dir, enc: enc, dec: dec, tmpPrefix: hex.EncodeToString(rnd[:])}
	if opts != nil {
		l.opts = *opts
	}
	return l, nil
}

// Dir returns the directory the store lives in.
func (l *Local) Dir() string { return l.dir }

// Path returns the file that holds (or would hold) object h.
func (l *Local) Path(h Hash) string {
	x := h.Hex()
	return filepath.Join(l.dir, "objects", x[0:2], x[2:4], x)
}

// TempDir returns the directory for temp files of this store.
func (l *Local) TempDir() string { return filepath.Join(l.dir, "tmp") }

func (l *Local) Has(h Hash) (bool, error) {
	_, err := os.Lstat(l.Path(h))
	if err == nil {
		return true, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		_, ok := l.findPacked(h, true)
		return ok, nil
	}
	return false, err
}

func (l *Local) Put(data []byte) (Hash, bool, error) {
	h := Sum(data)
	l.touch(h)
	if ok, _, err := l.existing(h); err != nil || ok {
		return h, false, err
	}
	codec, body := l.encode(data)
	hdr := header{codec: codec, size: uint64(len(data))}.encode()
	isNew, err := l.writeObject(h, func(w io.Writer) error {
		if err := writeFull(w, hdr[:]); err != nil {
			return err
		}
		return writeFull(w, body)
	})
	return h, isNew, err
}

// encode picks the codec for data and returns the body.
func (l *Local) encode(data []byte) (Codec, []byte) { return encodeBody(l.enc, data) }

// pays reports whether compressing n bytes into c bytes is worth a codec:
// it must save at least 1/16 of the size.
func pays(c, n int) bool { return c < n-n/16 }

func (l *Local) PutReader(r io.Reader) (Hash, bool, error) {
	first := make([]byte, streamThreshold+1)
	n, err := io.ReadFull(r, first)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return l.Put(first[:n])
	}
	if err != nil {
		return "", false, fmt.Errorf("store object: read content: %w", err)
	}
	first = first[:n]
	// Decide the codec on the first chunk: if it does not compress, the
	// rest of a large file (media, archives) rarely does either.
	codec := CodecRaw
	if pays(len(l.enc.EncodeAll(first, nil)), len(first)) {
		codec = CodecZstd
	}
	hasher := blake3.New()
	var size uint64
	var sum Hash
	f, tmp, err := l.createTemp()
	if err != nil {
		return "", false, err
	}
	werr := func() error {
		w := l.wrapWriter(f)
		// Header first with size 0; the real size is patched in below.
		hdr := header{codec: codec}.encode()
		if err := writeFull(w, hdr[:]); err != nil {
			return err
		}
		bw := bufio.NewWriterSize(w, 256<<10)
		var body io.Writer = bw
		var zw *zstd.Encoder
		if codec == CodecZstd {
			zw = l.getStreamEncoder(bw)
			body = zw
		}
		src := io.MultiReader(bytes.NewReader(first), r)
		buf := make([]byte, 256<<10)
		for {
			n, rerr := src.Read(buf)
			if n > 0 {
				hasher.Write(buf[:n])
				size += uint64(n)
				if err := writeFull(body, buf[:n]); err != nil {
					return err
				}
			}
			if rerr == io.EOF {
				break
			}
			if rerr != nil {
				return fmt.Errorf("read content: %w", rerr)
			}
		}
		if zw != nil {
			if err := zw.Close(); err != nil {
				return err
			}
			l.streamEnc.Put(zw)
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		hdr = header{codec: codec, size: size}.encode()
		if _, err := f.WriteAt(hdr[:], 0); err != nil {
			return err
		}
		sum = digest(hasher)
		return nil
	}()
	if werr != nil {
		f.Close()
		os.Remove(tmp)
		return "", false, fmt.Errorf("store object: %w", werr)
	}
	l.touch(sum)
	isNew, err := l.commitTemp(f, tmp, sum)
	return sum, isNew, err
}

func (l *Local) getStreamEncoder(w io.Writer) *zstd.Encoder {
	if e, ok := l.streamEnc.Get().(*zstd.Encoder); ok {
		e.Reset(w)
		return e
	}
	e, err := zstd.NewWriter(w, zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false))
	if err != nil {
		panic(err) // only invalid options fail
	}
	return e
}

// writeObject writes a new object through a temp file. write must produce
// the complete object file (header and body).
func (l *Local) writeObject(h Hash, write func(io.Writer) error) (bool, error) {
	f, tmp, err := l.createTemp()
	if err != nil {
		return false, err
	}
	if err := write(l.wrapWriter(f)); err != nil {
		f.Close()
		os.Remove(tmp)
		return false, fmt.Errorf("store object %s: %w", h, err)
	}
	return l.commitTemp(f, tmp, h)
}

func (l *Local) wrapWriter(f io.Writer) io.Writer {
	if l.opts.WrapWriter != nil {
		return l.opts.WrapWriter(f)
	}
	return f
}

// createTemp creates a new temp file, already read-only (the descriptor
// stays writable). Its name is unique: a random prefix per Local and a
// counter.
func (l *Local) createTemp() (*os.File, string, error) {
	n := l.tmpSeq.Add(1)
	tmp := filepath.Join(l.dir, "tmp", fmt.Sprintf("obj-%s-%d", l.tmpPrefix, n))
	f, err := openPlain(tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, objectMode)
	if err != nil {
		return nil, "", fmt.Errorf("store object: create temp file: %w", err)
	}
	return f, tmp, nil
}

// mkdirShard creates the two shard levels if needed. With sync, it makes
// their entries durable before it returns (an fsync of the parent of each
// directory it created, and of each parent a deferred put left unsynced).
// Without sync, it leaves that to the next Sync: a deferred object's shard
// needs to be durable no sooner than the object itself, and an fsync of a
// directory per new shard (nearly every object of the first thousands is
// the first in its shard) forces a journal commit each, which stalls every
// other change on the filesystem.
func (l *Local) mkdirShard(shard string, sync bool) error {
	parent := filepath.Dir(shard)
	if _, ok := l.shards.Load(shard); !ok {
		if _, err := os.Stat(shard); err != nil {
			for _, d := range []string{parent, shard} {
				if !sync {
					// Noted before the mkdir, so that a durable put that
					// finds the directory made finds the note too, and
					// again after it, in case a Sync took the first note
					// in between.
					l.pending.addDir(filepath.Dir(d))
				}
				err := os.Mkdir(d, dirMode)
				switch {
				case err == nil && sync:
					if err := syncDir(filepath.Dir(d)); err != nil {
						return err
					}
				case err == nil:
					l.pending.addDir(filepath.Dir(d))
				case !errors.Is(err, fs.ErrExist):
					return err
				}
			}
		}
		l.shards.Store(shard, true)
	}
	if sync {
		return l.pending.syncDirs(filepath.Dir(parent), parent)
	}
	return nil
}

func writeFull(w io.Writer, b []byte) error {
	n, err := w.Write(b)
	if err != nil {
		return err
	}
	if n != len(b) {
		return io.ErrShortWrite
	}
	return nil
}
