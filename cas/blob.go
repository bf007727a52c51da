package cas

import (
	"bytes"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/zeebo/blake3"
)

// Object files travel whole: a remote store keeps them byte for byte as
// the local store does (docs/format.md section 2), so the address checks a
// download exactly as it checks a local read. Encode and Decode are the
// object format without a directory.

var (
	codecOnce sync.Once
	blobEnc   *zstd.Encoder
	blobDec   *zstd.Decoder
)

func codecs() (*zstd.Encoder, *zstd.Decoder) {
	codecOnce.Do(func() {
		var err error
		if blobEnc, err = zstd.NewWriter(nil, zstd.WithEncoderCRC(false)); err != nil {
			panic(err) // only bad options fail, and these are fixed
		}
		if blobDec, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0)); err != nil {
			panic(err)
		}
	})
	return blobEnc, blobDec
}

// Encode returns the address of data and the object file that holds it,
// header included, with the codec a local store would pick.
func Encode(data []byte) (Hash, []byte) {
	enc, _ := codecs()
	codec, body := encodeBody(enc, data)
	hdr := header{codec: codec, size: uint64(len(data))}.encode()
	return Sum(data), append(hdr[:], body...)
}

// Decode returns the content of the object file raw, which must be the
// object h. Every failure wraps ErrCorrupt: the bytes are never handed out
// unless they hash to h.
//
// raw may come from anyone (a shared bucket): nothing is allocated on the
// word of its header. A compressed body is first decoded as a stream into
// the hash, with only the decoder's window in memory, and must give
// exactly the size the header declares and hash to h; only then is it
// decoded into memory. An object that declares more than MaxObjectSize is
// refused unread.
func Decode(h Hash, raw []byte) ([]byte, error) {
	_, dec := codecs()
	hdr, err := decodeHeader(raw)
	if err != nil {
		return nil, err
	}
	if hdr.size > MaxObjectSize {
		return nil, fmt.Errorf("%w: declares %d bytes of content, more than the %d ckfs reads", ErrCorrupt, hdr.size, uint64(MaxObjectSize))
	}
	if hdr.codec == CodecZstd {
		if err := verifyStream(h, raw[headerSize:], hdr.size); err != nil {
			return nil, err
		}
	}
	return decodeObject(dec, h, raw)
}

// MaxObjectSize is the largest content Decode accepts: well above any
// file capture stores whole in practice.
const MaxObjectSize = 4 << 30

// verifyStream decodes the zstd body as a stream and checks that it holds
// exactly size bytes that hash to h, keeping no more than the decoder's
// window in memory.
func verifyStream(h Hash, body []byte, size uint64) error {
	zr, err := zstd.NewReader(bytes.NewReader(body), zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxWindow(64<<20))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	defer zr.Close()
	hasher := blake3.New()
	n, err := io.Copy(hasher, io.LimitReader(zr, int64(size)+1))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if uint64(n) != size {
		return fmt.Errorf("%w: content is at least %d bytes, header says %d", ErrCorrupt, n, size)
	}
	if got := digest(hasher); got != h {
		return fmt.Errorf("%w: content does not hash to its name", ErrCorrupt)
	}
	return nil
}

// encodeBody picks the codec for data and returns the body.
func encodeBody(enc *zstd.Encoder, data []byte) (Codec, []byte) {
	if len(data) >= 64 {
		c := enc.EncodeAll(data, make([]byte, 0, len(data)/2))
		if pays(len(c), len(data)) {
			return CodecZstd, c
		}
	}
	return CodecRaw, data
}

// decodeObject checks and decodes a whole object file.
func decodeObject(dec *zstd.Decoder, h Hash, raw []byte) ([]byte, error) {
	hdr, err := decodeHeader(raw)
	if err != nil {
		return nil, err
	}
	body := raw[headerSize:]
	var data []byte
	switch hdr.codec {
	case CodecRaw:
		data = body
	case CodecZstd:
		// Preallocate from the header, but never trust it for more than a
		// bounded amount: a corrupt header must not cost a huge allocation.
		capHint := min(hdr.size, 64<<20)
		data, err = dec.DecodeAll(body, make([]byte, 0, capHint))
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
	}
	if uint64(len(data)) != hdr.size {
		return nil, fmt.Errorf("%w: content is %d bytes, header says %d", ErrCorrupt, len(data), hdr.size)
	}
	if Sum(data) != h {
		return nil, fmt.Errorf("%w: content does not hash to its name", ErrCorrupt)
	}
	return data, nil
}
