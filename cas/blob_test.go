package cas

import (
	"bytes"
	"errors"
	"os"
	"testing"
)

// An encoded object is the very file a local store writes, and decodes
// back to its content.
func TestEncodeIsTheLocalObjectFile(t *testing.T) {
	l, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, data := range [][]byte{nil, []byte("hello\n"), bytes.Repeat([]byte("compress me "), 500)} {
		h, raw := Encode(data)
		got, _, err := l.Put(data)
		if err != nil || got != h {
			t.Fatalf("Put = %v, %v; Encode named it %v", got, err, h)
		}
		file, err := os.ReadFile(l.Path(h))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(file, raw) {
			t.Fatalf("Encode(%d bytes) differs from the stored object file", len(data))
		}
		back, err := Decode(h, raw)
		if err != nil || !bytes.Equal(back, data) {
			t.Fatalf("Decode = %q, %v", back, err)
		}
	}
}

// Any damaged byte, a truncation or the wrong name is ErrCorrupt, never
// wrong content.
func TestDecodeRefusesDamage(t *testing.T) {
	data := bytes.Repeat([]byte("line of text\n"), 200)
	h, raw := Encode(data)
	for i := range raw {
		bad := bytes.Clone(raw)
		bad[i] ^= 0x40
		if _, err := Decode(h, bad); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("byte %d flipped: err = %v, want ErrCorrupt", i, err)
		}
	}
	if _, err := Decode(h, raw[:len(raw)-1]); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("truncated: err = %v", err)
	}
	if _, err := Decode(Sum([]byte("other")), raw); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("wrong name: err = %v", err)
	}
}

func FuzzDecodeObject(f *testing.F) {
	want := bytes.Repeat([]byte("abc\n"), 100)
	h, raw := Encode(want)
	f.Add(raw)
	_, short := Encode([]byte("hello\n"))
	f.Add(short)
	f.Fuzz(func(t *testing.T, raw []byte) {
		// Whatever the bytes, the only content that may come out under h
		// is the content h names.
		data, err := Decode(h, raw)
		if err == nil && !bytes.Equal(data, want) {
			t.Fatalf("Decode handed out content that is not the object's")
		}
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error does not wrap ErrCorrupt: %v", err)
		}
	})
}
