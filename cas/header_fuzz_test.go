package cas

import (
	"bytes"
	"errors"
	"testing"
)

func FuzzDecodeHeader(f *testing.F) {
	h1 := header{codec: CodecZstd, size: 4096}.encode()
	f.Add(h1[:])
	h2 := header{codec: CodecRaw}.encode()
	f.Add(h2[:])
	f.Add([]byte("CKOB"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := decodeHeader(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("decode error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		enc := h.encode()
		if !bytes.Equal(enc[:], b[:headerSize]) {
			t.Fatalf("accepted header %x re-encodes as %x", b[:headerSize], enc)
		}
	})
}

// FuzzObjectFile plants arbitrary bytes as the file of an object and checks
// that Get and Open either return exactly the content that hashes to the
// object's name or fail with ErrCorrupt.
func FuzzObjectFile(f *testing.F) {
	content := []byte("package main\n\nfunc main() { println(\"hello, hello, hello\") }\n")
	s, err := Open(f.TempDir(), nil)
	if err != nil {
		f.Fatal(err)
	}
	h, _, err := s.Put(content)
	if err != nil {
		f.Fatal(err)
	}
	good, err := readFileBytes(s.Path(h))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	rawHdr := header{codec: CodecRaw, size: uint64(len(content))}.encode()
	f.Add(append(rawHdr[:], content...))
	f.Add(good[:headerSize+3])
	f.Fuzz(func(t *testing.T, file []byte) {
		if err := replaceFile(s.Path(h), file); err != nil {
			t.Fatal(err)
		}
		got, err := s.Get(h)
		if err == nil && !bytes.Equal(got, content) {
			t.Fatalf("Get returned wrong content without error")
		}
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Get error %v is not ErrCorrupt", err)
		}
		rc, err := s.Open(h)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Open error %v is not ErrCorrupt", err)
			}
			return
		}
		defer rc.Close()
		var buf bytes.Buffer
		_, err = buf.ReadFrom(rc)
		if err == nil && !bytes.Equal(buf.Bytes(), content) {
			t.Fatalf("stream returned wrong content without error")
		}
	})
}
