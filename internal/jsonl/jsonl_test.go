package jsonl

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTail(t *testing.T) {
	for _, c := range []struct {
		content, last string
		end           int64
		err           error
	}{
		{"", "", 0, nil},
		{"torn", "", 0, nil},
		{"a\n", "a", 2, nil},
		{"a\nbb\n", "bb", 5, nil},
		{"a\nbb\ntor", "bb", 5, nil},
		{"a\n" + strings.Repeat("x", 20), "", 0, ErrNoLine},
	} {
		last, end, size, err := tailOf(t, c.content, 16)
		if !errors.Is(err, c.err) || string(last) != c.last || (err == nil && (end != c.end || size != int64(len(c.content)))) {
			t.Errorf("Tail(%q) = %q, %d, %d, %v; want %q, %d, %v", c.content, last, end, size, err, c.last, c.end, c.err)
		}
	}
}

// Whatever the content, Tail returns a line that ends where it says, and
// the bytes after end hold no newline.
func FuzzTail(f *testing.F) {
	for _, s := range []string{"", "a\n", "a\nb", "\n\n", "x\ny\nz\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		fh, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		// Read in pieces of 3, 12, 48, 64 bytes: the answer is the one
		// a single read of the last 64 bytes gives.
		last, end, _, err := tail(fh, 64, 3)
		b := []byte(s)[max(0, len(s)-64):]
		if nl := strings.LastIndexByte(string(b), '\n'); (nl < 0 && len(s) > 64) != errors.Is(err, ErrNoLine) {
			t.Fatalf("err %v, but the last 64 bytes of %q hold a newline: %v", err, s, nl >= 0)
		}
		if nl := strings.LastIndexByte(string(b), '\n'); err == nil && nl >= 0 {
			want := b[:nl]
			if i := strings.LastIndexByte(string(want), '\n'); i >= 0 {
				want = want[i+1:]
			}
			if string(last) != string(want) {
				t.Fatalf("last %q, want %q in %q", last, want, s)
			}
		}
		if err != nil {
			return
		}
		if strings.Contains(s[end:], "\n") {
			t.Fatalf("newline after end %d in %q", end, s)
		}
		if last != nil && !strings.HasSuffix(s[:end], string(last)+"\n") {
			t.Fatalf("last %q does not end at %d in %q", last, end, s)
		}
	})
}

// A log far larger than the first piece: the last line is found whether
// it is short, longer than the first piece, or after a long torn tail, and
// the window still bounds what is read.
func TestTailInPieces(t *testing.T) {
	long := strings.Repeat("y", 3*firstRead)
	for _, c := range []struct {
		content, last string
		window        int64
		err           error
	}{
		{strings.Repeat("x\n", firstRead) + "last\n", "last", 1 << 30, nil},
		{strings.Repeat("x\n", firstRead) + long + "\n", long, 1 << 30, nil},
		{strings.Repeat("x\n", firstRead) + "z\n" + long, "z", 1 << 30, nil},
		{"a\n" + long + "\n", long, 1 << 30, nil},
		{"a\n" + long, "", 2 * firstRead, ErrNoLine},
	} {
		last, end, _, err := tailOf(t, c.content, c.window)
		if !errors.Is(err, c.err) || string(last) != c.last {
			t.Errorf("Tail(%d bytes) = %d bytes, %v; want %d bytes, %v", len(c.content), len(last), err, len(c.last), c.err)
		}
		if err == nil && !strings.HasSuffix(c.content[:end], c.last+"\n") {
			t.Errorf("end %d is not after the last line", end)
		}
	}
}

// tailOf is Tail of a file holding content.
func tailOf(t *testing.T, content string, window int64) ([]byte, int64, int64, error) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return Tail(f, window)
}
