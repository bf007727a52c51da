package provenance

import (
	"strings"

	"github.com/aymanbagabas/go-udiff/lcs"
)

// splitLines cuts text into lines, each without its line break; a last
// line without one is a line too.
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	n := strings.Count(text, "\n")
	if !strings.HasSuffix(text, "\n") {
		n++
	}
	lines := make([]string, 0, n)
	for text != "" {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			lines = append(lines, text)
			break
		}
		lines = append(lines, text[:i])
		text = text[i+1:]
	}
	return lines
}

// carry gives each line of to (toLines) the origin of
// the line of from it comes from, by a line diff: unchanged lines keep
// their origin, and a line the diff shows deleted in one place and
// inserted in another (a moved block) keeps it too. Lines the diff shows
// as new get -1.
func carry(from *fileVersion, toLines []string) []int32 {
	out := make([]int32, len(toLines))
	for i := range out {
		out[i] = -1
	}
	var moved map[string][]int32 // deleted lines by text, for moved blocks
	var inserted []int
	oi, ni := 0, 0
	keep := func(upto int) {
		for ; oi < upto && ni < len(out); oi, ni = oi+1, ni+1 {
			out[ni] = from.origins[oi]
		}
	}
	// Most versions change a few lines: only the part between the common
	// head and tail is diffed.
	head, tail := 0, 0
	for head < len(from.lines) && head < len(toLines) && from.lines[head] == toLines[head] {
		head++
	}
	for tail < len(from.lines)-head && tail < len(toLines)-head && from.lines[len(from.lines)-1-tail] == toLines[len(toLines)-1-tail] {
		tail++
	}
	for _, d := range lcs.DiffLines(from.lines[head:len(from.lines)-tail], toLines[head:len(toLines)-tail]) {
		d.Start, d.End, d.ReplEnd = d.Start+head, d.End+head, d.ReplEnd+head
		keep(d.Start)
		for ; oi < d.End; oi++ {
			if movable(from.lines[oi]) {
				if moved == nil {
					moved = map[string][]int32{}
				}
				moved[from.lines[oi]] = append(moved[from.lines[oi]], from.origins[oi])
			}
		}
		for ; ni < d.ReplEnd; ni++ {
			inserted = append(inserted, ni)
		}
	}
	keep(len(from.lines))
	for _, i := range inserted {
		if q := moved[toLines[i]]; len(q) > 0 {
			out[i], moved[toLines[i]] = q[0], q[1:]
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
