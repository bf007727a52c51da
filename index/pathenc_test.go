package index

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// Every path (any bytes but NUL) survives the record form byte-exact, and
// the record form of a valid UTF-8 path is the path itself.
func TestPathEncodingRoundTrips(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := rapid.SliceOfN(rapid.ByteRange(1, 255), 1, 40).Draw(t, "name")
		p := string(b)
		enc := EncodePath(p)
		got, err := DecodePath(enc)
		if err != nil || got != p {
			t.Fatalf("DecodePath(EncodePath(%q)) = %q, %v", p, got, err)
		}
		if !strings.ContainsRune(enc, 0) && enc != p {
			t.Fatalf("a valid UTF-8 path changed: %q -> %q", p, enc)
		}
	})
}

func TestDecodePathRefusesNonCanonical(t *testing.T) {
	for _, s := range []string{"a\x00", "a\x00f", "a\x00zz", "a\x0041", "a\x00FF"} {
		if _, err := DecodePath(s); err == nil {
			t.Errorf("DecodePath(%q) accepted", s)
		}
	}
}

func FuzzDecodePath(f *testing.F) {
	f.Add("plain")
	f.Add("caf\x00e9")
	f.Add("\x00ff\x00fe/x")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := DecodePath(s)
		if err != nil {
			return
		}
		if EncodePath(p) != s {
			t.Fatalf("DecodePath(%q) = %q does not encode back", s, p)
		}
	})
}

// A record whose path is not UTF-8 is written and read back byte-exact.
func TestWriterKeepsNonUTF8Names(t *testing.T) {
	dir := t.TempDir()
	w, _, err := OpenWriter(dir, WriterOptions{Clock: func() time.Time { return time.Unix(1, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	names := []string{"caf\xe9.txt", "dir\xff/\xfe\xfd", "ok/ü", "new\nline"}
	for _, n := range names {
		if err := w.Append(&Record{Kind: KindAfter, Window: "w", Path: n, State: &State{Type: TypeAbsent}}); err != nil {
			t.Fatal(err)
		}
	}
	recs, tail, err := Load(filepath.Join(dir, TimelineFile))
	if err != nil || tail != nil || len(recs) != len(names) {
		t.Fatalf("load: %d records, %v %v", len(recs), err, tail)
	}
	for i, n := range names {
		if recs[i].Path != n {
			t.Errorf("record %d path %q, want %q", i, recs[i].Path, n)
		}
	}
}

func TestDisplayEscapesControls(t *testing.T) {
	for in, want := range map[string]string{
		"plain/ü.go":   "plain/ü.go",
		"new\nline":    `"new\nline"`,
		"esc\x1b[31m":  `"esc\x1b[31m"`,
		"caf\xe9":      `"caf\xe9"`,
		"bidi\u202etx": `"bidi\u202etx"`,
	} {
		if got := Display(in); got != want {
			t.Errorf("Display(%q) = %s, want %s", in, got, want)
		}
	}
}
