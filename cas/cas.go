// Package cas is ckfs's content-addressed object store.
//
// An object is the whole content of one file (or one symlink target) stored
// under the BLAKE3-256 hash of its uncompressed bytes. The store knows bytes
// and hashes only: nothing of paths, windows, timelines or FUSE. Objects are
// written atomically (temp file, fsync, link into place, fsync directory), so
// an object whose bytes do not hash to its name is never visible, and every
// read that hands content out verifies the hash first.
//
// The on-disk layout and the object header are specified byte by byte in
// docs/format.md.
package cas

import (
	"errors"
	"io"

	"github.com/ckfs-dev/ckfs/internal/hashid"
	"github.com/zeebo/blake3"
)

// Sentinel errors. Callers test them with errors.Is.
var (
	// ErrNotFound means no object with the requested hash exists.
	ErrNotFound = errors.New("object not found")
	// ErrCorrupt means an object exists but its content does not hash to its
	// name, or its header or body cannot be decoded. The bad bytes are never
	// returned.
	ErrCorrupt = errors.New("object corrupt")
)

// HashSize is the size in bytes of a BLAKE3-256 digest.
const HashSize = hashid.Size

// Hash is the address of an object: the BLAKE3-256 digest of its
// uncompressed content, in the one form every package uses.
type Hash = hashid.Hash

// Sum returns the address of data.
func Sum(data []byte) Hash { return hashid.Sum(data) }

// digest is the address of what h has hashed.
func digest(h *blake3.Hasher) Hash {
	var d [HashSize]byte
	h.Sum(d[:0])
	return hashid.FromDigest(d)
}

// ParseHash parses the record form "blake3:<64 lowercase hex digits>".
func ParseHash(s string) (Hash, error) { return hashid.Parse(s) }

// Info describes a stored object.
type Info struct {
	Hash   Hash
	Size   int64 // uncompressed content size
	Stored int64 // bytes on disk, header included
	Codec  Codec
}

// Store is a content-addressed object store. Implementations must be safe for
// concurrent use by multiple goroutines, and storing the same content from
// two goroutines or processes at once must succeed for both and leave one
// valid object.
type Store interface {
	// Put stores data and returns its address; isNew is false when an object
	// with that address already existed and verified. An existing object
	// that does not verify is replaced by data: a dedup hit never trusts
	// damaged bytes.
	Put(data []byte) (h Hash, isNew bool, err error)
	// PutReader stores everything read from r without holding it in memory.
	PutReader(r io.Reader) (h Hash, isNew bool, err error)
	// Get returns the verified content of the object h.
	Get(h Hash) ([]byte, error)
	// Open streams the content of h. The hash is verified as the stream is
	// read: the final Read returns ErrCorrupt instead of io.EOF if the
	// content does not match, so a consumer must not commit what it read
	// before it has seen io.EOF.
	Open(h Hash) (io.ReadCloser, error)
	// Has reports whether an object with address h exists (without
	// verifying it).
	Has(h Hash) (bool, error)
	// Verify reads the whole object h and checks its size and hash. It
	// returns nil, or an error wrapping ErrCorrupt or ErrNotFound.
	Verify(h Hash) error
	// Stat returns the sizes of the object h, read from its header.
	Stat(h Hash) (Info, error)
	// Walk calls fn for every object in the store, in no particular order.
	// A non-nil error from fn stops the walk and is returned.
	Walk(fn func(Info) error) error
	// Delete removes the object h. Deleting a missing object returns
	// ErrNotFound.
	Delete(h Hash) error
}
