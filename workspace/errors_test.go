package workspace

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// A daemon's error reply comes back as an error of the kind its code
// names, with its message intact.
func TestErrorOfCode(t *testing.T) {
	for code, kind := range map[int]error{CodeUsage: ErrUsage, CodeRefused: ErrRefused, CodeNotMounted: ErrNotMounted, CodeBusy: ErrBusy, CodeError: errUnknown, 0: errUnknown, 99: errUnknown} {
		err := errorOfCode(code, "the message")
		if !errors.Is(err, kind) || err.Error() != "the message" {
			t.Errorf("code %d: %v (is %v: %v)", code, err, kind, errors.Is(err, kind))
		}
		for _, other := range []error{ErrUsage, ErrRefused, ErrNotMounted, ErrBusy} {
			if other != kind && errors.Is(err, other) {
				t.Errorf("code %d is also %v", code, other)
			}
		}
	}
}

// A tool call whose command is a megabyte (a heredoc) still opens its
// window: what the request carries is cut to what the daemon reads.
func TestLongCommandsFitTheRequest(t *testing.T) {
	long := strings.Repeat("é\x01\"", 400_000) // escaped by JSON at its worst
	b, err := json.Marshal(Request{Op: "open", ID: "toolu_01", Tool: "Bash", Label: long, Command: long}.bound())
	if err != nil {
		t.Fatal(err)
	}
	if len(b)+1 > MaxRequest {
		t.Fatalf("request of %d bytes, the daemon reads %d", len(b)+1, MaxRequest)
	}
	var back Request
	json.Unmarshal(b, &back)
	if !strings.HasPrefix(long, back.Command) || !utf8.ValidString(back.Label) || !strings.HasSuffix(back.Label, "…") {
		t.Errorf("command not a prefix, or label cut badly")
	}
}

// A staged rename's source path follows it as an entry without a status:
// it is named whole, never with its first three characters cut.
func TestPorcelainPaths(t *testing.T) {
	out := []byte("R  fusefs/print.go\x00fuse/print.go\x00 M a b.txt\x00?? new.txt\x00")
	got := strings.Join(porcelainPaths(out), "|")
	if want := "fusefs/print.go (from fuse/print.go)|a b.txt|new.txt"; got != want {
		t.Errorf("porcelainPaths = %q, want %q", got, want)
	}
}

// Any bytes git might print parse to paths or to nothing, never a panic.
func FuzzPorcelainPaths(f *testing.F) {
	f.Add([]byte("R  new\x00old\x00 M a\x00"))
	f.Add([]byte("R  \x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, p := range porcelainPaths(b) {
			if p == "" {
				t.Fatalf("an empty path from %q", b)
			}
		}
	})
}
