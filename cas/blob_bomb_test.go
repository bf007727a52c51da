package cas_test

import (
	"bytes"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/ckfs-dev/ckfs/cas"
)

// An object from a hostile bucket: a small body whose header declares, and
// whose zstd frame really holds, 512 MiB of zeros under another object's
// name. Decode refuses it without ever holding the content: the heap grows
// by far less than what it declares (measured, not assumed).
func TestDecodeBombStaysBounded(t *testing.T) {
	const declared = 512 << 20
	_, raw := cas.Encode(make([]byte, declared))
	if len(raw) > 1<<20 {
		t.Fatalf("the bomb is %d bytes; the test wants a small one", len(raw))
	}
	name := cas.Sum([]byte("something else"))
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := cas.Decode(name, raw)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, cas.ErrCorrupt) {
		t.Fatalf("a bomb under another name decoded: %v", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 128<<20 {
		t.Fatalf("decoding the bomb allocated %d MiB (it declares %d MiB)", grew>>20, declared>>20)
	}
	// A header declaring more than any object may hold is refused unread.
	huge := bytes.Clone(raw)
	huge[15] = 2 // the size field, bytes 8 to 15, little endian
	if _, err := cas.Decode(name, huge); !errors.Is(err, cas.ErrCorrupt) || !strings.Contains(err.Error(), "declares") {
		t.Errorf("a header declaring 2^57 bytes: %v", err)
	}
}
