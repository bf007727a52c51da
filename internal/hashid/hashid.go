// Package hashid is the one name ckfs gives a piece of content: the
// BLAKE3-256 digest of its bytes, written "blake3:<64 lowercase hex
// digits>". The object store files content under it (package cas) and the
// timeline's records name content by it (package index); both use this
// type, so nothing converts between them. The empty Hash means "no
// content" and is written as JSON null.
package hashid

import (
	"encoding/hex"
	"fmt"

	"github.com/zeebo/blake3"
)

// Size is the size in bytes of a BLAKE3-256 digest.
const Size = 32

// prefix opens every hash's written form.
const prefix = "blake3:"

// Hash is the name of a piece of content, in its written form.
type Hash string

// Sum returns the name of data.
func Sum(data []byte) Hash { return FromDigest(blake3.Sum256(data)) }

// FromDigest returns the name of a BLAKE3-256 digest.
func FromDigest(d [Size]byte) Hash {
	var b [len(prefix) + 2*Size]byte
	copy(b[:], prefix)
	hex.Encode(b[len(prefix):], d[:])
	return Hash(b[:])
}

// Parse checks s is a hash's written form and returns it as one.
func Parse(s string) (Hash, error) {
	if !Valid(s) {
		return "", fmt.Errorf("hash %q: want %q and %d lowercase hex digits", s, prefix, 2*Size)
	}
	return Hash(s), nil
}

// Valid reports whether s is "blake3:" and 64 lowercase hex digits.
func Valid(s string) bool {
	if len(s) != len(prefix)+2*Size || s[:len(prefix)] != prefix {
		return false
	}
	for i := len(prefix); i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// String returns the written form ("" for no content).
func (h Hash) String() string { return string(h) }

// Hex returns the 64 hex digits alone (the name of an object's file).
func (h Hash) Hex() string {
	if h == "" {
		return ""
	}
	return string(h[len(prefix):])
}

// IsZero reports whether h names no content.
func (h Hash) IsZero() bool { return h == "" }

// MarshalJSON writes the empty hash as null.
func (h Hash) MarshalJSON() ([]byte, error) {
	if h == "" {
		return []byte("null"), nil
	}
	return []byte(`"` + string(h) + `"`), nil
}

// UnmarshalJSON reads null as the empty hash and checks the form of any
// other.
func (h *Hash) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		*h = ""
		return nil
	}
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' || !Valid(s[1:len(s)-1]) {
		return fmt.Errorf("hash %s: want null or \"blake3:<64 lowercase hex digits>\"", s)
	}
	*h = Hash(s[1 : len(s)-1])
	return nil
}
