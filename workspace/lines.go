package workspace

import (
	"bytes"
	"strings"

	"github.com/aymanbagabas/go-udiff"
)

// IsBinary reports whether b looks binary (a NUL in its first 8000 bytes).
func IsBinary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0
}

// LineCounts returns the added and removed lines between two contents, and
// whether either is binary.
func LineCounts(from, to []byte) (added, removed int, binary bool) {
	if IsBinary(from) || IsBinary(to) {
		return 0, 0, true
	}
	for _, e := range udiff.Lines(string(from), string(to)) {
		removed += strings.Count(string(from[e.Start:e.End]), "\n")
		if e.End > e.Start && from[e.End-1] != '\n' {
			removed++
		}
		added += strings.Count(e.New, "\n")
		if len(e.New) > 0 && !strings.HasSuffix(e.New, "\n") {
			added++
		}
	}
	return added, removed, false
}

// FirstLine is s up to its first line break (marked with an ellipsis),
// cut to at most n bytes.
func FirstLine(s string, n int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "") + "…"
	}
	return s
}
