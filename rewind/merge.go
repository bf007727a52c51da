package rewind

import (
	"bytes"
	"fmt"

	"github.com/epiclabs-io/diff3"
)

// Hunk is one place where a revert cannot be merged: the lines there now
// differ from what the window wrote, and the window's change cannot be
// taken out of them.
type Hunk struct {
	Line   int      `json:"line"`   // first line of the hunk in the file now (1-based)
	Now    []string `json:"now"`    // the lines there now
	Window []string `json:"window"` // what the window wrote there
	Before []string `json:"before"` // what was there before the window
}

// revertMerge takes the change a window made (before → window) out of now,
// keeping every other change in now: a three-way merge of now and before
// with the window's version as their common ancestor. It returns the
// merged content, and the hunks that conflict. With markers, a conflict is
// written into the result in diff3 style instead (labels name the sides).
func revertMerge(now, before, window []byte, markers bool, label string) ([]byte, []Hunk) {
	a, o, b := splitLines(now), splitLines(window), splitLines(before)
	blocks := diff3.Diff3MergeWithOptions(a, o, b, diff3.MergeOptions{Algorithm: diff3.DiffAlgorithmMyers, ExcludeFalseConflicts: true})
	var out bytes.Buffer
	var hunks []Hunk
	line := 1 // position in now
	for _, blk := range blocks {
		if blk.Conflict == nil {
			for _, l := range blk.Ok {
				out.WriteString(l)
			}
			continue
		}
		c := blk.Conflict
		line = c.AIndex + 1
		hunks = append(hunks, Hunk{Line: line, Now: c.A, Window: c.O, Before: c.B})
		if !markers {
			continue
		}
		section := func(marker string, lines []string) {
			endLine(&out)
			out.WriteString(marker + "\n")
			for _, l := range lines {
				out.WriteString(l)
			}
		}
		section("<<<<<<< now", c.A)
		section("||||||| after "+label, c.O)
		section("=======", c.B)
		section(">>>>>>> before "+label, nil)
	}
	return out.Bytes(), hunks
}

// endLine ends the buffer's last line if it has no newline.
func endLine(b *bytes.Buffer) {
	if n := b.Len(); n > 0 && b.Bytes()[n-1] != '\n' {
		b.WriteByte('\n')
	}
}

// splitLines splits b into lines that keep their newline, so joining
// them gives b back byte for byte.
func splitLines(b []byte) []string {
	var out []string
	for l := range bytes.Lines(b) {
		out = append(out, string(l))
	}
	return out
}

// binary reports whether content looks binary (a NUL byte in its first
// 8000 bytes, as git decides).
func binary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0
}

// String renders a hunk for people.
func (h Hunk) String() string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "line %d:\n", h.Line)
	for _, part := range []struct {
		head  string
		lines []string
	}{{"now", h.Now}, {"written by the window", h.Window}, {"before the window", h.Before}} {
		fmt.Fprintf(&b, "  %s:\n", part.head)
		if len(part.lines) == 0 {
			b.WriteString("    (nothing)\n")
		}
		for _, l := range part.lines {
			fmt.Fprintf(&b, "    | %s\n", bytes.TrimRight([]byte(l), "\n"))
		}
	}
	return b.String()
}
