package cas

import (
	"bytes"
	"testing"
)

// FuzzPackIndex reads arbitrary bytes as a pack file: reading its index
// never panics, never allocates on the word of its trailer, and an index
// that reads has every object inside the pack, in order, and encodes back
// to the same bytes.
func FuzzPackIndex(f *testing.F) {
	var ents []packEntry
	body := []byte{}
	for i, c := range []string{"one", "two", "three"} {
		var e packEntry
		e.digest[0], e.digest[31] = byte(i), byte(i*7)
		e.off, e.n = int64(packHeaderSize+len(body)), int64(headerSize+len(c))
		hdr := header{size: uint64(len(c))}.encode()
		body = append(append(body, hdr[:]...), c...)
		ents = append(ents, e)
	}
	ph := packHeader()
	good := append(append(ph[:], body...), encodePackIndex(ents, int64(packHeaderSize+len(body)))...)
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Add(append(ph[:], encodePackIndex(nil, packHeaderSize)...))
	f.Add([]byte("CKPK"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < packHeaderSize+packTrailer {
			if _, _, err := decodePackTrailer(data[max(0, len(data)-packTrailer):], int64(len(data))); err == nil {
				t.Fatal("a pack too short to hold a trailer read")
			}
			return
		}
		size := int64(len(data))
		off, n, err := decodePackTrailer(data[size-packTrailer:], size)
		if err != nil {
			return
		}
		got, err := decodePackIndex(data[:packHeaderSize], data[off:], off, n)
		if err != nil {
			return
		}
		for i, e := range got {
			if e.off < packHeaderSize || e.n < headerSize || e.off+e.n > off {
				t.Fatalf("entry %d (%d bytes at %d) lies outside the objects, which end at %d", i, e.n, e.off, off)
			}
		}
		if again := encodePackIndex(append([]packEntry(nil), got...), off); !bytes.Equal(again, data[off:]) {
			t.Fatal("an index that reads does not encode back to its bytes")
		}
	})
}
