package cas

import (
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
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
func Decode(h Hash, raw []byte) ([]byte, error) {
	_, dec := codecs()
	return decodeObject(dec, h, raw)
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
