package cas

import (
	"encoding/binary"
	"fmt"
)

// Codec identifies how an object body is encoded. Codec ids are stable and
// never reused; docs/format.md lists them.
type Codec uint8

const (
	// CodecRaw stores the content unchanged.
	CodecRaw Codec = 0
	// CodecZstd stores the content as one zstd frame.
	CodecZstd Codec = 1
)

func (c Codec) String() string {
	switch c {
	case CodecRaw:
		return "raw"
	case CodecZstd:
		return "zstd"
	}
	return fmt.Sprintf("codec(%d)", uint8(c))
}

// Object header layout (16 bytes, little endian), see docs/format.md:
//
//	0..3   magic "CKOB"
//	4      format version (1)
//	5      codec id
//	6..7   reserved, zero
//	8..15  uncompressed size, uint64
const (
	headerSize    = 16
	headerMagic   = "CKOB"
	headerVersion = 1
)

// header is the decoded object header.
type header struct {
	codec Codec
	size  uint64
}

func (h header) encode() [headerSize]byte {
	var b [headerSize]byte
	copy(b[0:4], headerMagic)
	b[4] = headerVersion
	b[5] = byte(h.codec)
	binary.LittleEndian.PutUint64(b[8:16], h.size)
	return b
}

// decodeHeader parses an object header. Every failure wraps ErrCorrupt.
func decodeHeader(b []byte) (header, error) {
	if len(b) < headerSize {
		return header{}, fmt.Errorf("%w: header is %d bytes, want %d", ErrCorrupt, len(b), headerSize)
	}
	if string(b[0:4]) != headerMagic {
		return header{}, fmt.Errorf("%w: bad magic %q", ErrCorrupt, b[0:4])
	}
	if b[4] != headerVersion {
		return header{}, fmt.Errorf("%w: unknown object format version %d (this ckfs reads version %d; upgrade ckfs)", ErrCorrupt, b[4], headerVersion)
	}
	c := Codec(b[5])
	if c != CodecRaw && c != CodecZstd {
		return header{}, fmt.Errorf("%w: unknown codec id %d", ErrCorrupt, b[5])
	}
	if b[6] != 0 || b[7] != 0 {
		return header{}, fmt.Errorf("%w: reserved header bytes are not zero", ErrCorrupt)
	}
	size := binary.LittleEndian.Uint64(b[8:16])
	if size > 1<<62 {
		return header{}, fmt.Errorf("%w: implausible size %d", ErrCorrupt, size)
	}
	return header{codec: c, size: size}, nil
}
