package rewind

import (
	"bytes"
	"fmt"
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

// UnifiedDiff renders a diff of a path between two contents; binary
// contents are summarised.
func UnifiedDiff(path, fromLabel, toLabel string, from, to []byte) string {
	if bytes.Equal(from, to) {
		return ""
	}
	if IsBinary(from) || IsBinary(to) {
		return fmt.Sprintf("Binary file %s differs (%d -> %d bytes)\n", path, len(from), len(to))
	}
	return udiff.Unified(path+" ("+fromLabel+")", path+" ("+toLabel+")", string(from), string(to))
}
