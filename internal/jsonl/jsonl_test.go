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
		p := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(p, []byte(c.content), 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		last, end, size, err := Tail(f, 16)
		f.Close()
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
		last, end, _, err := Tail(fh, 64)
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
