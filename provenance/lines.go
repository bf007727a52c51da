package provenance

import (
	"strings"

	"github.com/aymanbagabas/go-udiff"
)

// splitLines cuts text into lines, each without its line break; a last
// line without one is a line too.
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\n")
	}
	return lines
}

// carry gives each line of to the origin of the line of from it comes
// from, by a line diff: unchanged lines keep their origin, and a line the
// diff shows deleted in one place and inserted in another (a moved block)
// keeps it too. Lines the diff shows as new have a nil origin.
func carry(from []Line, fromText, toText string) []*Origin {
	to := splitLines(toText)
	out := make([]*Origin, len(to))
	// The byte offset in fromText where each of from's lines starts.
	starts := make([]int, len(from)+1)
	for i, off := 0, 0; i < len(from); i++ {
		starts[i] = off
		off += len(from[i].Text) + 1
	}
	starts[len(from)] = len(fromText)
	lineAt := func(off int) int { // the index of the line starting at off
		lo, hi := 0, len(from)
		for lo < hi {
			m := (lo + hi) / 2
			if starts[m] < off {
				lo = m + 1
			} else {
				hi = m
			}
		}
		return lo
	}
	moved := map[string][]*Origin{} // deleted lines by text, for moved blocks
	var inserted []int
	oi, ni := 0, 0
	keep := func(upto int) {
		for ; oi < upto && ni < len(out); oi, ni = oi+1, ni+1 {
			o := from[oi].Origin
			out[ni] = &o
		}
	}
	for _, e := range udiff.Lines(fromText, toText) {
		keep(lineAt(e.Start))
		for end := lineAt(e.End); oi < end; oi++ {
			o := from[oi].Origin
			moved[from[oi].Text] = append(moved[from[oi].Text], &o)
		}
		for range splitLines(e.New) {
			inserted = append(inserted, ni)
			ni++
		}
	}
	keep(len(from))
	for _, i := range inserted {
		if i >= len(out) || !movable(to[i]) {
			continue
		}
		if q := moved[to[i]]; len(q) > 0 {
			out[i], moved[to[i]] = q[0], q[1:]
		}
	}
	return out
}

// movable reports whether a line says enough to be taken as moved rather
// than written anew where it is found deleted elsewhere: not blank, not
// a lone brace.
func movable(line string) bool {
	return len(strings.TrimSpace(line)) >= 4
}

// common counts the lines of b that a also holds (as a multiset).
func common(a, b []string) int {
	have := make(map[string]int, len(a))
	for _, l := range a {
		have[l]++
	}
	n := 0
	for _, l := range b {
		if have[l] > 0 {
			have[l]--
			n++
		}
	}
	return n
}
